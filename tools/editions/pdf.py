"""The book as a PDF: ``make pdf`` (the whole book) and ``make pdf-chapters`` (one per chapter).

Both print a page assembled by :mod:`tools.editions.print_page` from the built site with
Chromium, driven by the Playwright the project pins, in one ``page.pdf`` call with
``tagged=True`` (an accessible, tagged PDF) and ``outline=True`` (bookmarks, one per
heading: every chapter and section). Nothing is fetched from the network: every
request that is not for a local file is refused, and Playwright never downloads a
browser (its own Chromium is used if ``playwright install chromium`` put one in its
cache, else a system Chromium such as Debian's ``chromium``).

Usage::

    python -m tools.editions.pdf [--site _build/html] [--out _build/pdf] [--chapters]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tools.editions.print_page import BookInfo, assemble, read_toc
from tools.release import package_version

ROOT = Path(__file__).resolve().parents[2]
# The whole book's file name says what it is: the book, then its version.
BOOK_STEM = "positional-encoding-book"
SYSTEM_CHROMIUM = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FOOTER = (
    '<div style="width:100%; font-size:8pt; color:#555; text-align:center; '
    'font-family:sans-serif;"><span class="pageNumber"></span></div>'
)
CHAPTER = re.compile(r"^notebooks/(\d\d)_")
BIBLIOGRAPHY = "book/references"


def book_info(root: Path = ROOT) -> BookInfo:
    """The title page's content, read from ``_config.yml``, the package and the licences.

    Parameters
    ----------
    root : Path
        The repository root.

    Returns
    -------
    BookInfo
        Title and authors from ``_config.yml``, the version from
        ``posenc_helpers.__version__``, the licences named by ``LICENSE-TEXT`` and ``LICENSE``.
    """
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    text_licence = (root / "LICENSE-TEXT").read_text(encoding="utf-8")
    code_licence = (root / "LICENSE").read_text(encoding="utf-8").splitlines()[0].strip()
    found = re.search(r"\(CC BY [0-9.]+\)", text_licence)
    if not found or not code_licence.endswith("License"):
        raise ValueError("LICENSE-TEXT must name its CC BY licence and LICENSE must open with '<name> License'")
    licence = (
        f"Text and figures: Creative Commons Attribution {found.group(0)[7:-1]} {found.group(0)} "
        f"(LICENSE-TEXT). Code: {code_licence.removesuffix(' License')} licence (LICENSE)."
    )
    return BookInfo(
        title=str(config["title"]),
        version=package_version(),
        authors=str(config["author"]),
        licence=licence,
    )


def chromium_executable() -> str | None:
    """The Chromium to launch: None for Playwright's own (if installed), else a system one.

    Raises
    ------
    RuntimeError
        If there is neither; the message says what to install.
    """
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    if cache.is_dir() and any(cache.glob("chromium*-*")):
        return None
    for name in SYSTEM_CHROMIUM:
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError(
        "no Chromium to print the PDF with: install one with 'apt-get install chromium' "
        "(Debian/Ubuntu) or '.venv/bin/python -m playwright install chromium'"
    )


def print_pdfs(
    jobs: Sequence[tuple[Path, Path]],
    progress: Callable[[str], None] = print,
    *,
    tagged: bool = True,
    outline: bool = True,
) -> None:
    """Print each print page ``html`` of ``jobs`` to its ``pdf``, with one Chromium.

    Parameters
    ----------
    jobs : sequence of (Path, Path)
        (print page, PDF to write) pairs.
    progress : callable
        Called with one line per PDF written.
    tagged, outline : bool
        Whether the PDF is tagged and has an outline (the editions always are; the
        tests print an untagged one to see their checks fail).
    """
    from playwright.sync_api import Route, sync_playwright

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")

    def offline(route: Route) -> None:
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_executable())
        try:
            context = browser.new_context(color_scheme="light")
            context.route("**/*", offline)
            for number, (html_file, pdf_file) in enumerate(jobs, 1):
                started = time.monotonic()
                page = context.new_page()
                page.goto(html_file.resolve().as_uri(), wait_until="load", timeout=180_000)
                page.emulate_media(media="print")
                # Every image decoded and every font (MathJax's too) loaded before printing.
                page.evaluate(
                    "async () => { await document.fonts.ready;"
                    " await Promise.all([...document.images].map(i => i.decode().catch(() => null))); }"
                )
                pdf_file.parent.mkdir(parents=True, exist_ok=True)
                page.pdf(
                    path=str(pdf_file),
                    format="A4",
                    print_background=True,
                    tagged=tagged,
                    outline=outline,
                    display_header_footer=True,
                    header_template="<span></span>",
                    footer_template=FOOTER,
                    margin={"top": "16mm", "bottom": "18mm", "left": "15mm", "right": "15mm"},
                )
                page.close()
                size = pdf_file.stat().st_size / 1e6
                progress(f"[{number}/{len(jobs)}] {pdf_file} ({size:.1f} MB, {time.monotonic() - started:.0f} s)")
        finally:
            browser.close()


def build(site: Path, out: Path, *, chapters: bool, progress: Callable[[str], None] = print) -> list[Path]:
    """Assemble and print the whole book (or, with ``chapters``, one PDF per chapter).

    Parameters
    ----------
    site : Path
        The built site.
    out : Path
        The output folder: ``<out>/positional-encoding-book-<version>.pdf``, or
        ``<out>/chapters/positional-encoding-book-<version>-chNN.pdf`` (the chapter and
        the references it cites); the print pages
        go to ``<out>/print``.
    chapters : bool
        One PDF per chapter instead of the whole book.
    progress : callable
        Called with each line of progress.

    Returns
    -------
    list of Path
        The PDFs written.
    """
    if not (site / "index.html").is_file():
        raise ValueError(f"site must be a built site: {site}/index.html is missing (run make book)")
    started = time.monotonic()
    info = book_info()
    pages = read_toc(ROOT / "_toc.yml")
    stem = f"{BOOK_STEM}-{info.version}"
    jobs: list[tuple[Path, Path]] = []
    if chapters:
        for docname in pages:
            found = CHAPTER.match(docname)
            if not found:
                continue
            progress(f"assembling chapter {found.group(1)}")
            # The chapter, then the entries of the bibliography that it cites.
            html_file = assemble(
                site, [docname, BIBLIOGRAPHY], out / "print" / f"chapter-{found.group(1)}.html", info,
                with_title_page=False, cited_only=BIBLIOGRAPHY, progress=progress,
            )  # fmt: skip
            jobs.append((html_file, out / "chapters" / f"{stem}-ch{found.group(1)}.pdf"))
    else:
        progress(f"assembling the print page from {len(pages)} pages of {site}")
        jobs.append((assemble(site, pages, out / "print" / "book.html", info, progress=progress), out / f"{stem}.pdf"))
    progress(f"printing {len(jobs)} PDF(s) with Chromium (tagged, with an outline)")
    print_pdfs(jobs, progress)
    progress(f"done in {time.monotonic() - started:.0f} s")
    return [pdf for _, pdf in jobs]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_build" / "html", help="the built site")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "pdf", help="the output folder")
    parser.add_argument("--chapters", action="store_true", help="one PDF per chapter")
    args = parser.parse_args(argv)
    try:
        build(args.site, args.out, chapters=args.chapters, progress=lambda line: print(line, flush=True))
    except (ValueError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
