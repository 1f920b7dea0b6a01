"""The editions a release attaches (``make release-editions``): EPUB, PDFs, the site to read offline.

Into ``_build/editions``:

- ``posenc-book-VERSION.epub`` (``make epub``) and every PDF ``make pdf`` / ``make pdf-chapters``
  left in ``_build/pdf`` (none is an error only with ``--require-pdf``);
- ``posenc-book-site-VERSION.tar.gz``: the built website, made to work from ``file://``
  (opened by double-clicking ``index.html``, no server): Chromium refuses a page opened
  from disk any font or ``fetch`` from another file, so in this copy the fonts (MathJax's,
  Font Awesome's) are inlined into their stylesheets as ``data:`` URLs, the pages' font
  preloads are dropped, and the search page shows no summaries under ``file://`` (Sphinx
  fetches each result's page for them); search itself (``searchindex.js``, a script) and
  the explorers (frames swapped as ``<img>`` sources) work unchanged. The archive is
  reproducible: members sorted, owners and times fixed;
- ``SHA256SUMS`` (``sha256sum -c SHA256SUMS`` checks them) and ``MANIFEST.json`` (each
  file's name, kind, size and SHA-256, the version and the commit).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from .release import package_version

ROOT = Path(__file__).resolve().parents[1]
FONT_TYPES = {".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf"}
_FONT_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+?\.(?:woff2?|ttf))((?:\?|#)[^'")]*)?\1\s*\)""")
_FONT_PRELOAD = re.compile(r'\s*<link rel="preload" as="font"[^>]*>')
SEARCH_SUMMARY = "SHOW_SEARCH_SUMMARY: true,"
OFFLINE_SEARCH_SUMMARY = "SHOW_SEARCH_SUMMARY: location.protocol !== 'file:',"
FIXED_MTIME = 1_600_000_000  # member times in the archive (reproducible)


def inline_fonts(css: str, folder: Path) -> str:
    """The stylesheet with every font file it names (relative to ``folder``) as a ``data:`` URL."""

    def replace(match: re.Match[str]) -> str:
        path = folder / match.group(2)
        if not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"url(data:{FONT_TYPES[path.suffix]};base64,{data})"

    return _FONT_URL.sub(replace, css)


def offline_copy(site: Path, dest: Path) -> Path:
    """Copy the built site to ``dest``, changed to work from ``file://`` (module docstring)."""
    site, dest = Path(site), Path(dest)
    if not (site / "index.html").is_file():
        raise ValueError(f"site should be a built website (with index.html), not {site}: run make book first")
    shutil.copytree(site, dest)
    for css in dest.rglob("*.css"):
        text = css.read_text(encoding="utf-8")
        inlined = inline_fonts(text, css.parent)
        if inlined != text:
            css.write_text(inlined, encoding="utf-8")
    for page in dest.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        kept = _FONT_PRELOAD.sub("", text)
        if kept != text:
            page.write_text(kept, encoding="utf-8")
    options = dest / "_static" / "documentation_options.js"
    if options.is_file():
        text = options.read_text(encoding="utf-8")
        options.write_text(text.replace(SEARCH_SUMMARY, OFFLINE_SEARCH_SUMMARY), encoding="utf-8")
    return dest


def write_tarball(folder: Path, out: Path, prefix: str) -> Path:
    """``folder`` as a reproducible ``.tar.gz`` whose members start with ``prefix/``."""

    def normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = FIXED_MTIME
        info.mode = 0o755 if info.isdir() else 0o644
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in [folder, *sorted(folder.rglob("*"))]:
            name = prefix if path == folder else f"{prefix}/{path.relative_to(folder).as_posix()}"
            tar.add(path, arcname=name, recursive=False, filter=normalise)
    with open(out, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as packed:
        packed.write(buffer.getvalue())
    return out


def sha256(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def build_editions(site: Path, epub_dir: Path, pdf_dir: Path, out: Path, *, require_pdf: bool = False) -> list[Path]:
    """Write every edition, ``SHA256SUMS`` and ``MANIFEST.json`` into ``out``; return the editions.

    Parameters
    ----------
    site : Path
        The built website (``_build/html``).
    epub_dir, pdf_dir : Path
        Where ``make epub`` and ``make pdf`` wrote theirs.
    out : Path
        The folder to write (replaced if it exists).
    require_pdf : bool
        Fail when there is no PDF (default: the release goes without one, and says so).
    """
    version = package_version()
    epubs = sorted(Path(epub_dir).glob("*.epub"))
    if len(epubs) != 1:
        raise ValueError(f"expected one EPUB in {epub_dir} (make epub), found {[p.name for p in epubs]}")
    pdfs = sorted(Path(pdf_dir).glob("**/*.pdf")) if Path(pdf_dir).is_dir() else []
    if require_pdf and not pdfs:
        raise ValueError(f"no PDF in {pdf_dir}: run make pdf first")
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    editions = [Path(shutil.copy2(epubs[0], out / epubs[0].name))]
    editions += [Path(shutil.copy2(pdf, out / pdf.name)) for pdf in pdfs]
    name = f"posenc-book-site-{version}"
    with tempfile.TemporaryDirectory() as scratch:
        print(f"[editions] the site made to work from file://, into {name}.tar.gz", flush=True)
        copy = offline_copy(Path(site), Path(scratch) / name)
        editions.append(write_tarball(copy, out / f"{name}.tar.gz", name))
    kinds = {".epub": "EPUB 3", ".pdf": "PDF", ".gz": "website to read offline (open index.html)"}
    entries = [
        {"name": p.name, "kind": kinds[p.suffix], "bytes": p.stat().st_size, "sha256": sha256(p)} for p in editions
    ]
    (out / "SHA256SUMS").write_text("".join(f"{e['sha256']}  {e['name']}\n" for e in entries), encoding="utf-8")
    manifest = {"book": "posenc-book", "version": version, "commit": _commit(), "files": entries}
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if not pdfs:
        print(f"[editions] no PDF in {pdf_dir}: this release has none (run make pdf first to attach it)")
    return editions


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.release_editions``: write the editions and list them."""
    parser = argparse.ArgumentParser(description="The editions a release attaches: EPUB, PDFs, offline site.")
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html")
    parser.add_argument("--epub-dir", type=Path, default=ROOT / "_build" / "epub")
    parser.add_argument("--pdf-dir", type=Path, default=ROOT / "_build" / "pdf")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "editions")
    parser.add_argument("--require-pdf", action="store_true")
    args = parser.parse_args(argv)
    try:
        editions = build_editions(args.site, args.epub_dir, args.pdf_dir, args.out, require_pdf=args.require_pdf)
    except ValueError as error:
        print(f"make release-editions: {error}", file=sys.stderr)
        return 1
    for path in editions:
        print(f"  {path.stat().st_size / 1e6:7.1f} MB  {path}")
    print(f"checksums in {args.out / 'SHA256SUMS'}, manifest in {args.out / 'MANIFEST.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
