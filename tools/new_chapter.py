"""Scaffold a new chapter: ``make chapter NN=13 NAME=positions_in_2026``.

Writes, from the templates in ``tools/templates/chapter/``:

* ``notebooks/NN_NAME.ipynb`` and its MyST twin ``notebooks/text/NN_NAME.md``: the
  anatomy of AUTHORING.md (title, **You will learn**, set-up, a labelled section with
  a labelled equation, a checked computation, a captioned figure, the explorer and
  its static companion, a gated code exercise and a prose one, key takeaways), every
  piece of text to write marked ``TODO(author)``;
* ``posenc_helpers/{plotting,widgets,checks}/chNN_NAME.py``: a figure, an explorer and
  an exercise check that work, for the author to replace, exported from their
  subpackages and listed in ``book/api/``;
* ``tests/chapters/test_chNN_NAME.py``: their tests;
* the chapter's entry in ``_toc.yml``: at the end of the last numbered part, or of the
  part ``--part`` names (a new numbered part before the back matter if none has that
  caption);
* its row ``| NN | Title |`` in README.md's table of chapters
  (``tests/tooling/test_project.py`` holds the table to the notebooks' titles);
* a web grid for its explorer in ``GRIDS`` of ``tools/site/explorer_grids.py`` (the
  scaffold explorer's ``demo()`` at five lengths; ``tests/tooling/test_site_explorers.py``
  fails for an explorer without one), its ``why`` marked ``TODO(author)``.

The Makefile target then writes the Colab set-up cell, the explorer's restart note and
the exercise numbers (``make sync-setup``) and executes the notebook. Nothing that exists is overwritten
without ``--force``. A fresh scaffold passes every check of the chapter but one:
``tests/tooling/test_notebook_anatomy.py`` fails until no ``TODO(author)`` is left, in
the notebook or in the files above (``tests/tooling/test_new_chapter.py`` scaffolds one
in a copy of the repository and runs the checks on it).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = Path(__file__).resolve().parent / "templates" / "chapter"

#: What the author still has to write; the anatomy test fails while one is left.
PLACEHOLDER = "TODO(author)"

_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


@dataclass(frozen=True)
class ChapterNames:
    """Every name a new chapter's files use, derived from its number and name."""

    number: int
    name: str
    title: str

    @property
    def nn(self) -> str:
        return f"{self.number:02d}"

    @property
    def stem(self) -> str:
        """The notebook's stem, ``NN_name``."""
        return f"{self.nn}_{self.name}"

    @property
    def module(self) -> str:
        """The stem of the chapter's modules in plotting/, widgets/ and checks/."""
        return f"ch{self.stem}"

    @property
    def camel(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @property
    def key(self) -> str:
        """The prefix of the chapter's section and figure labels."""
        return self.name.replace("_", "-")

    @property
    def exports(self) -> dict[str, str]:
        """Subpackage -> the name the scaffold's module exports."""
        return {"plotting": f"plot_{self.name}", "widgets": f"{self.camel}Explorer", "checks": f"check_{self.name}"}

    def fill(self, template: str) -> str:
        values = {
            "N": str(self.number),
            "NN": self.nn,
            "name": self.name,
            "stem": self.stem,
            "camel": self.camel,
            "key": self.key,
            "title": self.title,
            "title_lower": self.title[0].lower() + self.title[1:],
        }
        return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


def chapter_names(number: int, name: str, title: str | None = None) -> ChapterNames:
    """Validate a new chapter's number and name; the title defaults to the name in words."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 99:
        raise ValueError(f"number must be a chapter number from 1 to 99 (NN=13), got {number!r}")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"name must be snake_case, a lowercase letter then letters, digits and single underscores "
            f"(NAME=positions_in_2026), got {name!r}"
        )
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise ValueError(f"title must be a non-empty string, got {title!r}")
    return ChapterNames(number, name, title.strip() if title else name.replace("_", " ").capitalize())


# --------------------------------------------------------------------------- edits
def add_export(init: Path, module: str, export: str) -> None:
    """Import ``export`` from ``.module`` in a subpackage's ``__init__.py`` and list it in
    ``__all__``, among the chapter modules in order (nothing happens if it is there)."""
    text = init.read_text()
    line = f"from .{module} import {export}\n"
    if line in text:
        return
    chapter_imports = list(re.finditer(r"^from \.(ch\d\d_\w+) import (?:\([^)]*\)|[^\n]*)\n", text, re.M))
    after = [m for m in chapter_imports if m.group(1) < module]
    position = after[-1].end() if after else chapter_imports[0].start()
    text = text[:position] + line + text[position:]
    closing = re.search(r"^__all__ = \[\n(?:.*\n)*?(?P<end>\])", text, re.M)
    if closing is None:
        raise ValueError(f"{init}: no multi-line __all__ list to add {export!r} to")
    text = text[: closing.start("end")] + f'    "{export}",\n' + text[closing.start("end") :]
    init.write_text(text)


def add_api_entry(page: Path, directive: str, export: str) -> None:
    """List ``export`` at the end of an API page's ``eval-rst`` block."""
    text = page.read_text()
    entry = f".. {directive}:: {export}\n"
    if entry in text:
        return
    end = text.rindex("```")
    page.write_text(text[:end].rstrip("\n") + f"\n\n{entry}\n" + text[end:])


def add_toc_entry(toc: Path, stem: str, part: str | None) -> None:
    """Add ``notebooks/stem`` to ``_toc.yml``: at the end of part ``part`` (a new numbered
    part before the back matter if there is none), or of the last numbered part."""
    text = toc.read_text()
    entry = f"      - file: notebooks/{stem}\n"
    if entry in text:
        return
    parts = list(re.finditer(r"^  - caption: (?P<caption>.*)\n(?P<body>(?:(?!  - caption:).*\n)*)", text, re.M))
    if part is not None:
        chosen = [p for p in parts if p.group("caption").strip() == part]
        if not chosen:
            numbered = [p.start() for p in parts if re.search(r"^    numbered:", p.group("body"), re.M)]
            after = [p for p in parts if p.start() > max(numbered, default=-1)]
            at = after[0].start() if after else len(text)  # before the back matter
            new_part = f"  - caption: {part}\n    numbered: 2\n    chapters:\n{entry}"
            toc.write_text(text[:at] + new_part + text[at:])
            return
    else:
        chosen = [p for p in parts if re.search(r"^    numbered:", p.group("body"), re.M)]
        if not chosen:
            raise ValueError(f"{toc}: no numbered part to add the chapter to; name one with --part")
    body_end = chosen[-1].end("body")
    toc.write_text(text[:body_end] + entry + text[body_end:])


def add_readme_row(readme: Path, nn: str, title: str) -> None:
    """Add ``| nn | title |`` to README.md's table of chapters, in number order (nothing
    happens if the chapter has a row)."""
    text = readme.read_text()
    rows = list(re.finditer(r"^\| (\d\d) \| .+ \|\n", text, re.M))
    if not rows:
        raise ValueError(f"{readme}: no table of chapters (rows '| NN | Title |') to add chapter {nn} to")
    if any(row.group(1) == nn for row in rows):
        return
    before = [row for row in rows if row.group(1) < nn]
    at = before[-1].end() if before else rows[0].start()
    readme.write_text(text[:at] + f"| {nn} | {title} |\n" + text[at:])


def add_grid(grids: Path, explorer: str) -> None:
    """Add a web grid for the scaffold's explorer to ``GRIDS`` (nothing happens if it has one):
    its ``demo()`` at five lengths, built as the template's notebook cell builds it."""
    text = grids.read_text()
    if f'    "{explorer}": Grid(' in text:
        return
    end = re.search(r"^GRIDS: dict\[str, Grid\] = \{\n(?:.*\n)*?(?P<end>\}\n)", text, re.M)
    if end is None:
        raise ValueError(f"{grids}: no GRIDS dictionary to add {explorer!r} to")
    entry = (
        f'    "{explorer}": Grid(\n'
        '        {"n_positions": (1, 4, 8, 16, 32, 64)},\n'
        '        "TODO(author): why these controls and values show what the explorer is for; the scaffold\'s "\n'
        '        "length slider at six stops.",\n'
        f'        "explorer = {explorer}()",\n'
        f'        _demo("{explorer}"),\n'
        "    ),\n"
    )
    grids.write_text(text[: end.start("end")] + entry + text[end.start("end") :])


# --------------------------------------------------------------------------- scaffold
_API_DIRECTIVE = {"plotting": "autofunction", "widgets": "autoclass", "checks": "autofunction"}


def planned_files(root: Path, names: ChapterNames) -> dict[Path, str]:
    """The new files (path -> template name) a chapter's scaffold writes under ``root``."""
    files = {root / "notebooks" / "text" / f"{names.stem}.md": "chapter.md.tmpl"}
    for package in ("plotting", "widgets", "checks"):
        files[root / "posenc_helpers" / package / f"{names.module}.py"] = f"{package}.py.tmpl"
    files[root / "tests" / "chapters" / f"test_{names.module}.py"] = "test_chapter.py.tmpl"
    return files


def scaffold(
    root: Path, number: int, name: str, *, title: str | None = None, part: str | None = None, force: bool = False
) -> list[Path]:
    """Write a new chapter's files under ``root`` and register them; return what was written.

    Raises
    ------
    ValueError
        If the number or the name is not valid, or another chapter has the number.
    FileExistsError
        If a file to write exists and ``force`` is false.
    """
    names = chapter_names(number, name, title)
    taken = [p.name for p in (root / "notebooks").glob(f"{names.nn}_*.ipynb") if p.stem != names.stem]
    if taken:
        raise ValueError(f"number {names.nn} is taken by {', '.join(taken)}; choose another NN")
    files = planned_files(root, names)
    notebook = root / "notebooks" / f"{names.stem}.ipynb"
    existing = [p for p in [*files, notebook] if p.exists()]
    if existing and not force:
        listed = ", ".join(str(p.relative_to(root)) for p in existing)
        raise FileExistsError(f"{listed} already exist(s): nothing written; add --force (FORCE=1) to overwrite")
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(names.fill((TEMPLATES / template).read_text()))
    for package, export in names.exports.items():
        add_export(root / "posenc_helpers" / package / "__init__.py", names.module, export)
        add_api_entry(root / "book" / "api" / f"{package}.md", _API_DIRECTIVE[package], export)
    add_toc_entry(root / "_toc.yml", names.stem, part)
    add_readme_row(root / "README.md", names.nn, names.title)
    add_grid(root / "tools" / "site" / "explorer_grids.py", names.exports["widgets"])
    _write_notebook(root / "notebooks" / "text" / f"{names.stem}.md", notebook)
    return [*files, notebook]


def _write_notebook(twin: Path, notebook: Path) -> None:
    """The notebook from its MyST twin, paired as every chapter is (jupytext)."""
    import jupytext

    nb = jupytext.read(twin)
    jupytext.write(nb, notebook, fmt="ipynb")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("number", type=int, help="the chapter's number, NN")
    parser.add_argument("name", help="snake_case name: the notebook is NN_name.ipynb")
    parser.add_argument("--title", help="the chapter's title (default: the name in words)")
    parser.add_argument("--part", help="the caption of the _toc.yml part to add it to (default: the last numbered)")
    parser.add_argument("--force", action="store_true", help="overwrite the chapter's files if they exist")
    args = parser.parse_args(argv)
    try:
        written = scaffold(ROOT, args.number, args.name, title=args.title, part=args.part, force=args.force)
    except (ValueError, FileExistsError) as error:
        print(f"make chapter: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print(
        f"registered in _toc.yml, README.md's table of chapters, posenc_helpers/{{plotting,widgets,checks}}/"
        f"__init__.py, book/api/ and GRIDS in tools/site/explorer_grids.py; now write every {PLACEHOLDER} "
        f"(CONTRIBUTING.md, 'Adding a chapter'; AUTHORING.md)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
