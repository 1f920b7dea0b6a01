"""make release-editions' parts (tools/release_editions.py) on small fixtures: fonts inlined, checksums, archive."""

from __future__ import annotations

import base64
import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from tools import release_editions as editions

FONT = bytes(range(256)) * 3  # stands in for a .woff file


def make_site(folder: Path) -> Path:
    (folder / "_static" / "fonts").mkdir(parents=True)
    (folder / "_static" / "fonts" / "A.woff").write_bytes(FONT)
    (folder / "_static" / "math.css").write_text(
        '@font-face { font-family: A; src: url("fonts/A.woff") format("woff"); }\n'
        "@font-face { font-family: B; src: url(fonts/missing.woff2); }\n"
    )
    (folder / "_static" / "documentation_options.js").write_text("const O = {\n    SHOW_SEARCH_SUMMARY: true,\n};\n")
    (folder / "index.html").write_text(
        '<head><link rel="preload" as="font" type="font/woff" crossorigin href="_static/fonts/A.woff" />'
        '<link rel="preload" as="script" href="_static/x.js" /></head>'
    )
    return folder


def test_offline_copy_inlines_fonts_and_drops_what_file_urls_refuse(tmp_path: Path) -> None:
    site = make_site(tmp_path / "html")
    copy = editions.offline_copy(site, tmp_path / "copy")
    css = (copy / "_static" / "math.css").read_text()
    expected = "url(data:font/woff;base64," + base64.b64encode(FONT).decode() + ")"
    assert css.startswith("@font-face { font-family: A; src: " + expected + ' format("woff"); }')
    assert "url(fonts/missing.woff2)" in css  # a file that is not there is left as it is
    assert (copy / "index.html").read_text() == '<head><link rel="preload" as="script" href="_static/x.js" /></head>'
    options = (copy / "_static" / "documentation_options.js").read_text()
    assert "SHOW_SEARCH_SUMMARY: location.protocol !== 'file:'," in options
    assert (site / "_static" / "math.css").read_text().count("data:") == 0  # the site itself is untouched
    with pytest.raises(ValueError, match="run make book first"):
        editions.offline_copy(tmp_path / "nothing", tmp_path / "copy2")


def test_archive_is_reproducible_and_prefixed(tmp_path: Path) -> None:
    site = make_site(tmp_path / "html")
    first = editions.write_tarball(site, tmp_path / "a.tar.gz", "book-site")
    second = editions.write_tarball(site, tmp_path / "b.tar.gz", "book-site")
    assert first.read_bytes() == second.read_bytes()
    with tarfile.open(first) as tar:
        names = tar.getnames()
        assert all(n == "book-site" or n.startswith("book-site/") for n in names)
        member = tar.extractfile("book-site/_static/fonts/A.woff")
        assert member is not None and member.read() == FONT


def test_editions_with_checksums_and_manifest(tmp_path: Path) -> None:
    site = make_site(tmp_path / "html")
    (tmp_path / "epub").mkdir()
    (tmp_path / "epub" / "posenc-book-9.epub").write_bytes(b"epub bytes")
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "book.pdf").write_bytes(b"%PDF-1.7 bytes")
    out = tmp_path / "editions"
    made = editions.build_editions(site, tmp_path / "epub", tmp_path / "pdf", out)
    assert [p.name for p in made][:2] == ["posenc-book-9.epub", "book.pdf"]
    sums = dict(line.split("  ")[::-1] for line in (out / "SHA256SUMS").read_text().splitlines())
    assert sums["posenc-book-9.epub"] == hashlib.sha256(b"epub bytes").hexdigest()
    assert sums["book.pdf"] == hashlib.sha256(b"%PDF-1.7 bytes").hexdigest()
    assert len(sums) == 3
    manifest = json.loads((out / "MANIFEST.json").read_text())
    assert {f["name"]: f["bytes"] for f in manifest["files"]}["book.pdf"] == len(b"%PDF-1.7 bytes")
    (tmp_path / "pdf" / "book.pdf").unlink()
    with pytest.raises(ValueError, match="make pdf"):
        editions.build_editions(site, tmp_path / "epub", tmp_path / "pdf", out, require_pdf=True)
    with pytest.raises(ValueError, match="one EPUB"):
        editions.build_editions(site, tmp_path / "pdf", tmp_path / "pdf", out)
