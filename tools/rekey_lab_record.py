"""Give chapter 11's record the key of refactored lab code, after proving the code computes the same.

The record (``posenc_helpers/data/train_short_test_long.json``) carries the key of
the code that made it (:func:`posenc_helpers.lab.lab_digest`); any change of a
statement on the lab's path makes it stale, and ``make record-lab`` takes the better
part of an hour. A refactor that moves, renames or splits code computes the same
numbers; this tool shows that it does and then writes the new key::

    python -m tools.rekey_lab_record --base COMMIT          # check only
    python -m tools.rekey_lab_record --base COMMIT --write  # check, then re-key

``COMMIT`` is a commit whose record was valid for its own code. The tool exports that
commit's package, and

1. asks the old code whether its record was valid (its own ``lab_digest``);
2. checks that the working tree's record holds the same numbers as the old one (every
   field but the key);
3. runs ``tools/lab_probe.py`` (training of every method and control, the tasks, the
   rescue, the baselines and the verdict rules, on small runs) under the old package
   and under the working tree's, and requires the two fingerprints to be equal bit
   for bit.

Only then, with ``--write``, does it replace the record's key by the working tree's.
A change of the numerics fails step 3: re-record (``make record-lab``) instead.
Nothing is written when any step fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path("posenc_helpers") / "data" / "train_short_test_long.json"
PROBE = ROOT / "tools" / "lab_probe.py"

_ASK_VALID = (
    "import json\n"
    "from posenc_helpers.lab import lab_digest\n"
    "from posenc_helpers.measured import trained_extrapolation\n"
    "print(json.dumps(trained_extrapolation()['digest'] == lab_digest()))\n"
)


def _python(code_or_script: str | Path, package_root: Path) -> str:
    """Run ``code_or_script`` with ``package_root`` first on the path; its last line of output."""
    env = {**os.environ, "PYTHONPATH": str(package_root), "PYTHONHASHSEED": "0"}
    command = [sys.executable, str(code_or_script)] if isinstance(code_or_script, Path) else [sys.executable, "-c"]
    if not isinstance(code_or_script, Path):
        command.append(code_or_script)
    result = subprocess.run(command, cwd=package_root, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:2])} failed under {package_root}:\n{result.stderr[-2000:]}")
    return result.stdout.strip().splitlines()[-1]


def export_package(commit: str, into: Path) -> Path:
    """Write ``commit``'s ``posenc_helpers`` under ``into``; return ``into``."""
    if not isinstance(commit, str) or not commit or commit.startswith("-"):
        raise ValueError(f"commit must name a commit (a hash, tag or branch), got {commit!r}")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, "posenc_helpers"], cwd=ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"commit must name a commit of this repository: git archive said {archive.stderr.decode()}")
    archive_path = into / "package.tar"
    archive_path.write_bytes(archive.stdout)
    with tarfile.open(archive_path) as tar:
        tar.extractall(into, filter="data")
    return into


def same_numbers(old_record: dict, new_record: dict) -> list[str]:
    """The fields (other than the key) in which two records differ; empty when they hold the same numbers.

    Examples
    --------
    >>> same_numbers({"digest": "a", "text": [1.0]}, {"digest": "b", "text": [1.0]})
    []
    >>> same_numbers({"digest": "a", "text": [1.0]}, {"digest": "a", "text": [2.0], "new": 1})
    ['new', 'text']
    """
    fields = (set(old_record) | set(new_record)) - {"digest"}
    return sorted(field for field in fields if old_record.get(field) != new_record.get(field))


def check(base: str) -> tuple[list[str], str]:
    """Steps 1-3 of the module docstring: the problems found (empty: none) and the new key."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="rekey-") as folder:
        old_root = export_package(base, Path(folder))
        if json.loads(_python(_ASK_VALID, old_root)) is not True:
            problems.append(f"the record at {base} was not valid for its own code: start from a commit where it was")
        old_record = json.loads((old_root / RECORD).read_text())
        new_record = json.loads((ROOT / RECORD).read_text())
        changed = same_numbers(old_record, new_record)
        if changed:
            problems.append(f"the working tree's record differs from {base}'s in {', '.join(changed)}")
        old_probe = json.loads(_python(PROBE, old_root))["probe"]
        new_probe = json.loads(_python(PROBE, ROOT))["probe"]
        print(f"probe under {base}: {old_probe}\nprobe under the working tree: {new_probe}")
        if old_probe != new_probe:
            problems.append("the working tree's lab computes other numbers than the old one: make record-lab")
    new_key = _python("from posenc_helpers.lab import lab_digest; print(lab_digest())", ROOT)
    return problems, new_key


def write_key(new_key: str) -> bool:
    """Replace the record's key by ``new_key`` (only that line changes); True if it changed."""
    path = ROOT / RECORD
    text = path.read_text()
    old_key = json.loads(text)["digest"]
    if old_key == new_key:
        return False
    path.write_text(text.replace(f'"digest": "{old_key}"', f'"digest": "{new_key}"', 1))
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="a commit whose record was valid for its own code")
    parser.add_argument("--write", action="store_true", help="write the new key when every check passes")
    args = parser.parse_args(argv)
    problems, new_key = check(args.base)
    for problem in problems:
        print(f"rekey: {problem}")
    if problems:
        return 1
    if not args.write:
        print(f"rekey: every check passed; --write would set the record's key to {new_key}")
        return 0
    print(f"rekey: {'the record now carries' if write_key(new_key) else 'the record already carries'} key {new_key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
