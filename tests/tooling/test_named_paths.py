"""Every path under tools/, tests/ or benchmarks/ that tracked text names exists (issue 35:
eight deleted files were still named in fifteen places, comments and docs among them)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: A path with a file extension under one of the three folders, not part of a longer word or path.
NAMED = re.compile(
    r"(?<![\w./-])((?:tools|tests|benchmarks)/[\w./-]+\.(?:py|md|json|sh|css|js|cjs|yml|txt|cfg|toml))\b"
)
#: Patterns, not files: a chapter's placeholders (NN, NAME), globs and shell variables.
PLACEHOLDER = re.compile(r"NN|NAME|[*<>{}$]|_X\.|test_X")
BINARY = {".png", ".ico", ".xz", ".woff2", ".pdf", ".jpg", ".webp"}


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in listed.split() if Path(name).suffix not in BINARY]


def named_paths(text: str) -> set[str]:
    """The tools/, tests/ and benchmarks/ file paths ``text`` names, placeholders left out.

    >>> sorted(named_paths("see tools/site/math.py, tests/chapters/test_chNN_NAME.py and tools/x.py."))
    ['tools/site/math.py', 'tools/x.py']
    """
    return {path for path in NAMED.findall(text) if not PLACEHOLDER.search(path)}


def test_the_pattern_finds_paths_and_skips_placeholders():
    text = (
        "(tools/prerender_math.py) `tests/browser/page_metrics.py`; notebooks/tools/x.py; tests/chapters/test_chNN_x.py"
    )
    assert named_paths(text) == {"tools/prerender_math.py", "tests/browser/page_metrics.py"}


def test_every_named_path_exists():
    missing = {}
    for path in _tracked_text_files():
        if path == Path(__file__).resolve():  # its own examples name files that must not exist
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        for name in named_paths(text):
            if not (ROOT / name).exists():
                missing.setdefault(name, []).append(path.relative_to(ROOT).as_posix())
    assert not missing, "named but absent (renamed or deleted?): " + "; ".join(
        f"{name} in {', '.join(sorted(set(where)))}" for name, where in sorted(missing.items())
    )
