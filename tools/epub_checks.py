"""What the tests ask of an EPUB (tests/tooling/test_epub.py, tests/epub): read it, find faults.

Each function reads the EPUB file (a zip) and returns what it found, so that a test can
assert on it and show, on a broken fixture, that the check can fail:

- :func:`epubcheck`: the errors and warnings of W3C's EPUBCheck (Debian's ``epubcheck``);
- :func:`raw_tex`: TeX left untypeset (``\\(``, ``\\[``, ``$$``) in the text of any page;
- :func:`metadata`: title, author, language, rights and version from the package document;
- :func:`spine_titles`: the first heading of every page, in reading order;
- :func:`images_without_alt`: every ``<img>`` without a text alternative.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

NS = {
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "x": "http://www.w3.org/1999/xhtml",
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
}
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")


def _epub(path: Path | str) -> Path:
    path = Path(path)
    if not path.is_file() or not zipfile.is_zipfile(path):
        raise ValueError(f"path should be an EPUB file (a zip), not {path}")
    return path


def epubcheck_command() -> list[str] | None:
    """The command that runs EPUBCheck here, or None when it is not installed.

    Debian installs ``/usr/bin/epubcheck`` as an executable jar, which runs by itself only
    where binfmt support for jars is set up; ``java -jar`` runs it everywhere.
    """
    found = shutil.which("epubcheck")
    if found is None:
        return None
    with open(found, "rb") as handle:
        is_jar = handle.read(2) == b"PK"
    if is_jar:
        java = shutil.which("java")
        return None if java is None else [java, "-jar", found]
    return [found]


def epubcheck(path: Path | str) -> list[str]:
    """The ERROR, FATAL and WARNING lines EPUBCheck prints for the EPUB (empty: it passes)."""
    command = epubcheck_command()
    if command is None:
        raise RuntimeError("epubcheck is not installed (Debian: apt-get install epubcheck)")
    result = subprocess.run([*command, str(_epub(path))], capture_output=True, text=True, check=False)
    out = result.stdout + result.stderr
    found = [line for line in out.splitlines() if re.match(r"(ERROR|FATAL|WARNING)\(", line)]
    if result.returncode and not found:
        found = [f"epubcheck exited with {result.returncode}: {out[-500:]}"]
    return found


def _package(epub: zipfile.ZipFile) -> tuple[str, ET.Element]:
    container = ET.fromstring(epub.read("META-INF/container.xml"))
    rootfile = container.find(".//c:rootfile", NS)
    if rootfile is None:
        raise ValueError("META-INF/container.xml names no package document")
    name = rootfile.attrib["full-path"]
    return name, ET.fromstring(epub.read(name))


def content_documents(path: Path | str) -> list[tuple[str, str]]:
    """Every XHTML document of the EPUB in spine order, as ``(name in the zip, text)``."""
    with zipfile.ZipFile(_epub(path)) as epub:
        name, package = _package(epub)
        folder = str(Path(name).parent)
        items = {item.attrib["id"]: item.attrib["href"] for item in package.iterfind(".//opf:manifest/opf:item", NS)}
        names = [items[ref.attrib["idref"]] for ref in package.iterfind(".//opf:spine/opf:itemref", NS)]
        return [(n, epub.read(f"{folder}/{n}" if folder != "." else n).decode("utf-8")) for n in names]


def _text(document: str) -> str:
    """The text of an XHTML document (its markup removed)."""
    return "".join(ET.fromstring(document.encode("utf-8")).itertext())


def raw_tex(path: Path | str) -> list[tuple[str, str, str]]:
    """TeX delimiters in the text of the EPUB's pages: ``(page, delimiter, the text around it)``."""
    found = []
    for name, document in content_documents(path):
        text = _text(document)
        found += [(name, m.group(), text[max(0, m.start() - 30) : m.end() + 30]) for m in RAW_TEX.finditer(text)]
    return found


def metadata(path: Path | str) -> dict[str, list[str]]:
    """The package's metadata: ``title``, ``creator``, ``language``, ``rights`` and ``version``."""
    with zipfile.ZipFile(_epub(path)) as epub:
        _, package = _package(epub)
    meta = package.find("opf:metadata", NS)
    if meta is None:
        raise ValueError("the package document has no <metadata>")
    found = {key: [e.text or "" for e in meta.iterfind(f"dc:{key}", NS)] for key in ("title", "creator", "language")}
    found["rights"] = [e.text or "" for e in meta.iterfind("dc:rights", NS)]
    found["version"] = [
        e.text or "" for e in meta.iterfind("opf:meta", NS) if e.attrib.get("property") == "schema:version"
    ]
    return found


def spine_titles(path: Path | str) -> list[str]:
    """The text of the first ``<h1>`` of every page, in reading order ("" for a page without)."""
    titles = []
    for _, document in content_documents(path):
        heading = ET.fromstring(document.encode("utf-8")).find(".//x:h1", NS)
        text = "" if heading is None else "".join(heading.itertext())
        titles.append(re.sub(r"\s+", " ", text).strip())
    return titles


def images_without_alt(path: Path | str) -> list[tuple[str, str]]:
    """Every ``<img>`` whose ``alt`` is missing or blank: ``(page, src)``."""
    found = []
    for name, document in content_documents(path):
        for img in ET.fromstring(document.encode("utf-8")).iterfind(".//x:img", NS):
            if not img.attrib.get("alt", "").strip():
                found.append((name, img.attrib.get("src", "")))
    return found
