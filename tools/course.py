"""The book's chapters as an nbgrader course: ``make course``.

Run it as a program::

    python -m tools.course [--out _build/course] [--force] [CHAPTER ...]
    python -m tools.course --otter [--out _build/otter] [--force] [CHAPTER ...]

Every chapter with exercises becomes an nbgrader assignment ``chNN``. The
notebooks already carry nbgrader's cell metadata (each code exercise is a locked
set-up cell, an answer cell and a locked test cell with points; each question in
words a manually graded answer cell); what nbgrader cannot do, this module does,
writing ``OUT/source/chNN/<notebook>.ipynb``:

* the book shows each solution in a folded block after its exercise; nbgrader
  wants it inside the answer cell, between ``### BEGIN SOLUTION`` and ``### END
  SOLUTION``. The solution's code (without its calls to the check) moves into the
  answer cell, its words into the manually graded answer cell as the model
  answer, and the folded blocks go;
* before each visible check, hidden tests (``### BEGIN HIDDEN TESTS``) record the
  values the check is given (:mod:`posenc_helpers.checks._record`) and judge
  nothing: the course's ``nbgrader_config.py`` adds a preprocessor after nbgrader's
  ``Execute`` that judges the records outside the student's kernel, in a fresh
  ``python -I`` process, reads the notebook for a helper that does the
  exercise's work and for code that tampers with the kernel, and sets the points
  (:mod:`posenc_helpers.checks._verdict`, :mod:`posenc_helpers.checks._nbgrader`);
* what only MyST renders becomes plain Markdown, so that the notebooks read cleanly
  in Colab or classic Jupyter: the exercise directives become headings numbered by
  chapter ("Exercise 4.2"), labelled equations get their number as a ``\\tag``
  and references to them that number, citations read "(Vaswani et al., 2017)",
  and links to other chapters point at their notebooks.

Then ``nbgrader generate_assignment`` itself writes the student version
(``OUT/release``: solutions, hidden tests and outputs cleared, cells locked,
checksums recorded) and the gradebook. ``OUT/nbgrader_config.py`` sets the stubs
and a per-cell execution timeout; ``nbgrader autograde chNN`` and ``nbgrader
generate_feedback chNN`` run in ``OUT``.

With ``--otter`` (``make otter``) each chapter becomes an otter-grader master
notebook instead (``OUT/chNN/``): the same answer cells, the visible check kept, and
the hidden tests as one exception-based otter test per exercise that records the
answer, judged by the course's otter plugin (:mod:`posenc_helpers.checks._otter`,
named with its configuration in the assignment config); ``otter assign``
then writes the student notebook and the Gradescope autograder zip into
``OUT/chNN/dist``, and ``otter run -a <zip> <submission>`` grades locally. Written
answers are left for a person to grade in both tools.

``OUT`` must be empty or absent, or a folder this tool wrote before, unless
``--force`` is given.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.exercise_numbers import DIRECTIVE_FENCE, cell_source, exercise_numbers
from tools.nbtools import repository_setting
from tools.release import package_version

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "_build" / "course"
MARKER = ".posenc-course"  # written into OUT: this folder is a course this tool made

CELL_TIMEOUT = 300  # seconds per cell when grading (the slowest cell of the book takes about a minute)
CODE_STUB = "# (your code)"
TEXT_STUB = "*Write your answer here.*"
ANSWER_PROMPT = "*Your answer (a few sentences):*"  # what a written answer cell holds in the book

_EXERCISE_START = re.compile(
    r"^"
    + DIRECTIVE_FENCE
    + r"\{exercise-start\}[^\n]*\n(?P<options>(?:[ \t]*:[\w-]+:[^\n]*\n)*)(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE,
)
_EXERCISE_END = re.compile(r"^" + DIRECTIVE_FENCE + r"\{exercise-end\}[^\n]*\n(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE)
_EXERCISE_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{exercise\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE | re.DOTALL
)
_SOLUTION_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{solution\}[ \t]*(?P<label>\S*)[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
_SOLUTION_START = re.compile(r"^" + DIRECTIVE_FENCE + r"\{solution-start\}[ \t]*(?P<label>\S+)[^\n]*\n", re.MULTILINE)
_SOLUTION_END = re.compile(r"^" + DIRECTIVE_FENCE + r"\{solution-end\}[^\n]*\n(?P=fence)[ \t]*(?:\n|$)", re.MULTILINE)
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):[ \t]*(?P<value>[^\n]*)$", re.MULTILINE)
_CHAPTER = re.compile(r"^(?P<number>\d\d)_")


@dataclass
class Solutions:
    """What the book's folded solutions hold, per exercise label."""

    code: dict[str, list[str]] = field(default_factory=dict)
    words: dict[str, list[str]] = field(default_factory=dict)


def _nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    return dict(cell.get("metadata", {}).get("nbgrader", {}))


def _options(block: str) -> dict[str, str]:
    return {m.group("key"): m.group("value").strip() for m in _OPTION.finditer(block)}


def _strip_option_lines(body: str) -> str:
    return _OPTION.sub("", body, count=0).lstrip("\n") if body.lstrip().startswith(":") else body


def without_check_calls(source: str) -> str:
    """``source`` without its top-level calls to a ``check_*`` function (the grader calls them)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    drop: set[int] = set()
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_"):
            drop.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    kept = [line for i, line in enumerate(lines) if i not in drop]
    return "\n".join(kept).strip("\n")


def split_solutions(cells: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Solutions]:
    """The cells without the book's solutions, and the solutions by label.

    A gated solution runs from a ``{solution-start} label`` directive to the next
    ``{solution-end}``, across cells; its code cells and the Markdown inside go.
    A plain ``{solution} label`` directive is cut out of its cell.
    """
    kept: list[dict[str, Any]] = []
    solutions = Solutions()
    current: str | None = None
    for cell in cells:
        text = cell_source(cell)
        if cell["cell_type"] == "code":
            if current is not None:
                solutions.code.setdefault(current, []).append(text)
            else:
                kept.append(cell)
            continue
        out = []
        position = 0
        while position <= len(text):
            if current is None:
                start = _SOLUTION_START.search(text, position)
                if start is None:
                    out.append(text[position:])
                    break
                out.append(text[position : start.start()])
                current = start.group("label")
                position = start.end()
                fence_end = re.compile(r"^" + re.escape(start.group("fence")) + r"[ \t]*(?:\n|$)", re.MULTILINE)
                options_end = fence_end.search(text, position)  # the directive's closing fence (options only)
                if options_end is not None:
                    position = options_end.end()
            else:
                end = _SOLUTION_END.search(text, position)
                words = text[position : end.start() if end else len(text)]
                if words.strip():
                    solutions.words.setdefault(current, []).append(words.strip())
                if end is None:
                    break
                current = None
                position = end.end()
        remaining = "".join(out)

        def cut(match: re.Match[str]) -> str:
            label = match.group("label")
            body = _strip_option_lines(match.group("body")).strip()
            solutions.words.setdefault(label, []).append(body)
            return ""

        remaining = _SOLUTION_DIRECTIVE.sub(cut, remaining)
        if remaining.strip() or cell.get("metadata", {}).get("nbgrader"):
            new = copy.deepcopy(cell)
            new["source"] = remaining.strip("\n") + ("\n" if remaining.strip() else "")
            kept.append(new)
    return kept, solutions


def plain_exercises(text: str, numbers: dict[str, str]) -> str:
    """Exercise directives as plain Markdown: a numbered heading, then the text."""

    def heading(label: str | None) -> str:
        number = numbers.get(label or "", "")
        return f"### Exercise {number}".rstrip() + "\n\n"

    text = _EXERCISE_START.sub(lambda m: heading(_options(m.group("options")).get("label")), text)
    text = _EXERCISE_END.sub("", text)
    return _EXERCISE_DIRECTIVE.sub(
        lambda m: heading(_options(m.group("body")).get("label")) + _strip_option_lines(m.group("body")).strip() + "\n",
        text,
    )


_EQUATION_LABEL = re.compile(r"\$\$[ \t]*\((?P<label>[\w-]+)\)[ \t]*$", re.MULTILINE)
_EQ_ROLE = re.compile(r"\{eq\}`(?P<label>[^`]+)`")
_CITE_ROLE = re.compile(r"\{cite(?::[a-z]+)?\}`(?P<keys>[^`]+)`")
_DOC_ROLE = re.compile(r"\{doc\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`")
_BIB_ENTRY = re.compile(r"@\w+\{(?P<key>[^,\s]+),(?P<body>.*?)\n\}", re.DOTALL)
_BIB_FIELD = r"\b{}\s*=\s*\{{(?P<value>(?:[^{{}}]|\{{[^{{}}]*\}})*)\}}"


_PRF_DIRECTIVE = re.compile(
    r"^" + DIRECTIVE_FENCE + r"\{prf:(?P<kind>\w+)\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)
_PRF_ROLE = re.compile(r"\{prf:ref\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^`>]+)>|(?P<bare>[^`]+))`")


def statement_numbers(cells: list[dict[str, Any]]) -> dict[str, str]:
    """Label -> "Theorem 1" of every sphinx-proof statement, each kind numbered in page order."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for match in _PRF_DIRECTIVE.finditer(cell_source(cell)):
            kind = match.group("kind")
            label = _options(match.group("body")).get("label")
            if kind == "proof" or not label:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            names.setdefault(label, f"{kind.capitalize()} {counts[kind]}")
    return names


def _plain_statement(match: re.Match[str], statements: dict[str, str]) -> str:
    kind, title = match.group("kind"), match.group("title").strip()
    body = _strip_option_lines(match.group("body")).strip()
    if kind == "proof":
        return f"*Proof.* {body} ∎\n"
    label = _options(match.group("body")).get("label", "")
    name = statements.get(label, kind.capitalize())
    return f"**{name}" + (f" ({title})" if title else "") + f".**\n\n{body}\n"


def equation_numbers(cells: list[dict[str, Any]]) -> dict[str, int]:
    """Label -> number of every labelled display equation, numbered (1), (2), ... in
    page order, as the website numbers them."""
    numbers: dict[str, int] = {}
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for match in _EQUATION_LABEL.finditer(cell_source(cell)):
                numbers.setdefault(match.group("label"), len(numbers) + 1)
    return numbers


_TEX_ACCENT = re.compile(r"\{?\\(?P<accent>['`~\"^v])\{?(?P<letter>\w)\}?\}?")
_TEX_LETTER = {"\\L": "Ł", "\\l": "ł", "\\o": "ø", "\\O": "Ø", "\\ss": "ß"}
_COMBINING = {"'": "\u0301", "`": "\u0300", "~": "\u0303", '"': "\u0308", "^": "\u0302", "v": "\u030c"}


def plain_name(tex: str) -> str:
    """A BibTeX name as text: ``Nu{\\~n}ez`` -> ``Nuñez``, ``{\\L}ukasz`` -> ``Łukasz``."""
    text = _TEX_ACCENT.sub(lambda m: m.group("letter") + _COMBINING[m.group("accent")], tex)
    for command, letter in _TEX_LETTER.items():
        text = text.replace(command, letter)
    return unicodedata.normalize("NFC", re.sub(r"[{}]", "", text)).strip()


def citation_labels(bib: Path = ROOT / "book" / "references.bib") -> dict[str, str]:
    """Key -> "Vaswani et al., 2017" for every entry of the bibliography."""
    labels = {}
    for entry in _BIB_ENTRY.finditer(bib.read_text(encoding="utf-8")):
        body = entry.group("body")
        author = re.search(_BIB_FIELD.format("author"), body)
        year = re.search(_BIB_FIELD.format("year"), body)
        names = [name.strip() for name in (author.group("value") if author else "").split(" and ") if name.strip()]
        last = [plain_name(name.split(",")[0]) for name in names]
        if not last:
            who = entry.group("key")
        elif len(last) == 1:
            who = last[0]
        elif len(last) == 2:
            who = f"{last[0]} and {last[1]}"
        else:
            who = f"{last[0]} et al."
        labels[entry.group("key")] = f"{who}, {year.group('value') if year else 'n.d.'}"
    return labels


def plain_markdown(
    text: str, equations: dict[str, int], citations: dict[str, str], statements: dict[str, str] | None = None
) -> str:
    """``text`` with the MyST roles, equation labels and sphinx-proof statements the book
    uses as plain Markdown."""
    statements = statements or {}
    text = _PRF_DIRECTIVE.sub(lambda m: _plain_statement(m, statements), text)
    text = _PRF_ROLE.sub(
        lambda m: (
            (m.group("text") or "").strip()
            or statements.get((m.group("target") or m.group("bare")).strip(), "the statement above")
        ),
        text,
    )
    text = _EQUATION_LABEL.sub(lambda m: f"\\tag{{{equations.get(m.group('label'), '?')}}}\n$$", text)
    text = _EQ_ROLE.sub(lambda m: f"({equations.get(m.group('label'), '?')})", text)
    text = _CITE_ROLE.sub(
        lambda m: "(" + "; ".join(citations.get(key.strip(), key.strip()) for key in m.group("keys").split(",")) + ")",
        text,
    )

    def link(match: re.Match[str]) -> str:
        target = (match.group("target") or match.group("bare")).strip()
        name = Path(target).name
        if _CHAPTER.match(name):  # another chapter: its notebook sits next to this one
            return f"[{(match.group('text') or '').strip() or name}]({name}.ipynb)"
        shown = (match.group("text") or "").strip() or name.replace("_", " ")
        return f"the book's *{shown}* page"

    return _DOC_ROLE.sub(link, text)


def _check_call(check_source: str, label: str) -> ast.Call:
    """The check call that ends a test cell (``check_x(a, n=3)``)."""
    tree = ast.parse(check_source)
    call = tree.body[-1].value if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_")):
        raise ValueError(f"{label}: the test cell must end with a call to its check")
    return call


def grading_spec(check_source: str, label: str, exercise: dict[str, Any]) -> dict[str, Any]:
    """What the grader needs to know about exercise ``label``: its check, answer names and the
    helpers its answer must not (``forbid``) or must (``require``) call."""
    call = _check_call(check_source, label)
    answers = exercise.get("answer", [])
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ValueError(f"{label}: the exercise metadata's answer must be a list of names; got {answers!r}")
    return {
        "label": label,
        "check": call.func.id,  # type: ignore[attr-defined]
        "answers": list(answers),
        "forbid": list(exercise.get("forbid", [])),
        "require": list(exercise.get("require", [])),
    }


def record_call(check_source: str, label: str, exercise: dict[str, Any]) -> str:
    """The visible check call rewritten to record its arguments for the grader:
    ``check_x(a, n=3)`` -> ``_record.record({...spec...}, a, n=3)``."""
    call = _check_call(check_source, label)
    written = ast.get_source_segment(check_source, call) or ast.unparse(call)
    arguments = written[written.index("(") + 1 :]
    spec = repr(grading_spec(check_source, label, exercise))
    return f"_record.record({spec}, {arguments}" if arguments.strip() != ")" else f"_record.record({spec})"


def hidden_tests(check_source: str, label: str, exercise: dict[str, Any]) -> str:
    """The hidden tests that come before the visible check ``check_source`` of exercise ``label``.

    They record the values the check is given and judge nothing: the grader judges them
    outside the student's kernel (:mod:`posenc_helpers.checks._verdict`). They run first,
    so that a failing visible check cannot stop the record.
    """
    lines = [
        "### BEGIN HIDDEN TESTS",
        "from posenc_helpers.checks import _record",
        "",
        record_call(check_source, label, exercise),
        "### END HIDDEN TESTS",
    ]
    return "\n".join(lines)


def course_notebook(nb: dict[str, Any], chapter: int) -> dict[str, Any]:
    """The nbgrader source version of a chapter notebook (see the module docstring)."""
    nb = copy.deepcopy(nb)
    cells, solutions = split_solutions(nb["cells"])
    numbers = exercise_numbers(nb["cells"], chapter)
    equations = equation_numbers(nb["cells"])
    statements = statement_numbers(nb["cells"])
    citations = citation_labels()
    for cell in cells:
        meta = _nbgrader(cell)
        text = cell_source(cell)
        if cell["cell_type"] == "markdown":
            text = plain_markdown(text, equations, citations, statements)
            cell["source"] = text
        if cell["cell_type"] == "markdown" and not meta:
            cell["source"] = plain_exercises(text, numbers)
            continue
        grade_id = str(meta.get("grade_id", ""))
        label = re.sub(r"-(answer|setup|words)$", "", grade_id)
        if cell["cell_type"] == "code":
            if meta.get("solution"):
                code = [without_check_calls(source) for source in solutions.code.get(label, [])]
                if not code:
                    raise ValueError(f"{label}: an answer cell with no solution in the book")
                cell["source"] = f"{text.rstrip()}\n### BEGIN SOLUTION\n" + "\n\n".join(code) + "\n### END SOLUTION"
            elif meta.get("grade"):
                exercise = cell.get("metadata", {}).get("exercise", {})
                cell["source"] = hidden_tests(text, label, exercise) + "\n" + text.rstrip()
        elif meta.get("solution"):  # a question in words: the model answer, hidden from students
            words = [plain_markdown(w, equations, citations, statements) for w in solutions.words.get(label, [])]
            if not words:
                raise ValueError(f"{label}: a written answer cell with no model answer in the book")
            question = "" if grade_id == label else text.replace(ANSWER_PROMPT, "").strip()
            model = "\n\n".join(words)
            cell["source"] = (question + "\n\n" if question else "") + f"### BEGIN SOLUTION\n{model}\n### END SOLUTION"
            tags = [tag for tag in cell.get("metadata", {}).get("tags", []) if tag != "remove-cell"]
            cell["metadata"]["tags"] = tags
        cell.get("metadata", {}).pop("exercise", None)
    for cell in cells:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        elif not _nbgrader(cell):
            cell["source"] = re.sub(r"\n{3,}", "\n\n", cell_source(cell)).strip("\n") + "\n"
    nb["cells"] = [
        cell for cell in cells if cell["cell_type"] == "code" or cell_source(cell).strip() or _nbgrader(cell)
    ]
    return nb


def chapters_with_exercises(folder: Path = NOTEBOOKS) -> list[Path]:
    """The chapter notebooks that have at least one graded cell."""
    found = []
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        if any(_nbgrader(cell).get("grade") for cell in nb["cells"]):
            found.append(path)
    return found


def assignment_name(path: Path) -> str:
    """``notebooks/04_sine_cosine_pairs.ipynb`` -> ``ch04``."""
    match = _CHAPTER.match(path.name)
    if match is None:
        raise ValueError(f"path must be a chapter notebook named NN_title.ipynb; got {path.name!r}")
    return f"ch{match.group('number')}"


def nbgrader_config() -> str:
    """The course's ``nbgrader_config.py``."""
    return (
        "# Written by tools/course.py (make course).\n"
        "c = get_config()  # noqa: F821\n"
        'c.CourseDirectory.course_id = "positional-encoding"\n'
        f"c.ClearSolutions.code_stub = {{'python': {CODE_STUB!r}}}\n"
        f"c.ClearSolutions.text_stub = {TEXT_STUB!r}\n"
        "# A cell that runs longer than this (an endless loop) fails; grading goes on with the next.\n"
        f"c.Execute.timeout = {CELL_TIMEOUT}\n"
        "c.Execute.interrupt_on_timeout = True\n"
        "\n"
        "# Grading outside the student's kernel: the hidden tests only record each answer; after the\n"
        "# notebook ran, GradeFromRecords judges the records in a fresh process and sets the points\n"
        "# (posenc_helpers.checks._nbgrader). nbgrader's own preprocessors otherwise as its defaults.\n"
        "from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402\n"
        "from nbgrader.preprocessors import (  # noqa: E402\n"
        "    AssignLatePenalties, CheckCellMetadata, Execute, IgnorePattern, LimitOutput, SaveAutoGrades,\n"
        ")\n"
        "from posenc_helpers.checks._nbgrader import BeforeExecution, GradeFromRecords  # noqa: E402\n"
        "\n"
        "c.Autograde.autograde_preprocessors = [\n"
        "    BeforeExecution, Execute, GradeFromRecords, IgnorePattern, ClearMetadataPreprocessor,\n"
        "    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata,\n"
        "]\n"
        "\n"
        "# Chapter 11 trains its models once per course, not once per submission: the kernels\n"
        "# share one store of training runs next to this file (posenc_helpers.lab.cache).\n"
        "import os  # noqa: E402\n"
        "\n"
        "_here = os.path.dirname(os.path.abspath(__file__))  # noqa: F821\n"
        'os.environ.setdefault("POSENC_LAB_CACHE", os.path.join(_here, "lab-runs"))\n'
    )


def _refuse_foreign(out: Path, force: bool) -> None:
    """Refuse a non-empty ``out`` that this tool did not write, unless ``force``."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists() and not force:
        raise FileExistsError(f"{out} is not empty and was not written by tools/course.py; use --force")


def _prepare(out: Path, force: bool) -> None:
    _refuse_foreign(out, force)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("Made by tools/course.py; make course rewrites source/ and release/.\n")


def write_course(out: Path, chapters: list[Path], *, force: bool = False) -> list[str]:
    """Write the course into ``out`` and run ``nbgrader generate_assignment``; the assignment names."""
    _prepare(out, force)
    (out / "nbgrader_config.py").write_text(nbgrader_config(), encoding="utf-8")
    names = []
    for path in chapters:
        name = assignment_name(path)
        chapter = int(name[2:])
        source_dir = out / "source" / name
        if source_dir.exists():
            shutil.rmtree(source_dir)
        source_dir.mkdir(parents=True)
        nb = json.loads(path.read_text(encoding="utf-8"))
        (source_dir / path.name).write_text(
            json.dumps(course_notebook(nb, chapter), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        names.append(name)
    for name in names:
        run_nbgrader(["generate_assignment", name, "--force"], out)
    return names


def _run_script(name: str, arguments: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run this environment's script ``name`` with its folder first on PATH (nbgrader runs
    ``alembic``, otter runs ``jupyter``, from PATH)."""
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    kwargs.setdefault("check", True)
    return subprocess.run([str(scripts / name), *arguments], cwd=cwd, env=env, text=True, **kwargs)


def run_nbgrader(arguments: list[str], course: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``nbgrader ARGUMENTS`` in the course folder ``course``."""
    return _run_script("nbgrader", [*arguments, "--log-level=WARN"], course, **kwargs)


def write_student_copies(course: Path, out: Path, *, force: bool = False) -> list[Path]:
    """Copy the release's notebooks into ``out`` (flat); an existing file only with ``force``."""
    release = sorted((course / "release").glob("ch[0-9][0-9]/*.ipynb"))
    if not release:
        raise FileNotFoundError(f"{course / 'release'} holds no notebooks: run make course first")
    targets = [(path, out / path.name) for path in release]
    existing = [target.name for _, target in targets if target.exists()]
    if existing and not force:
        raise FileExistsError(f"{out} already holds {', '.join(existing)}; use --force to replace them")
    out.mkdir(parents=True, exist_ok=True)
    for path, target in targets:
        shutil.copyfile(path, target)
    return [target for _, target in targets]


STUDENT_BRANCH_README = """# {title}: student notebooks

The chapters of the book as exercises, without solutions: open a notebook in
`notebooks/`, replace each `None` placeholder with your answer, and run the check
below it; it says what is wrong, if anything, without giving the answer away.
Run the notebooks on Binder or Colab from the launch buttons of the student
website, or locally:

```bash
python -m pip install -r requirements.txt
jupyter lab notebooks/
```

Written by `make student-branch` (tools/course.py) from the course's release;
do not edit by hand. The text is under CC BY 4.0 (LICENSE-TEXT), the code under
the MIT licence (LICENSE).
"""


_RUNTIME = ("numpy", "matplotlib", "ipywidgets", "jax", "jaxlib", "optax", "tqdm")  # what the notebooks import


def _pins(names: tuple[str, ...]) -> list[str]:
    """The exact pins of ``names`` in requirements.txt, in its order."""
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return [line for line in lines if "==" in line and line.split("==")[0] in names]


def student_requirements() -> str:
    """What Binder installs for the student branch: the book's pins, then the package itself."""
    pins = _pins((*_RUNTIME, "ipykernel", "jupyterlab", "jupyterlab-myst"))
    return (
        "# Written by tools/course.py (make student-branch): the notebooks' environment.\n"
        + "\n".join([*pins, ".[widgets,lab]"])
        + "\n"
    )


def write_student_branch(course: Path, out: Path, *, force: bool = False) -> list[Path]:
    """The tree to publish as the repository's student branch, which the student
    website's launch buttons open: the release notebooks at the paths the book uses
    (``notebooks/NN_*.ipynb``), the package, its licences and Binder's requirements."""
    _refuse_foreign(out, force)
    if not list((course / "release").glob("ch[0-9][0-9]/*.ipynb")):
        raise FileNotFoundError(f"{course / 'release'} holds no notebooks: run make course first")
    if out.exists():
        shutil.rmtree(out)
    notebooks = write_student_copies(course, out / "notebooks")
    shutil.copytree(ROOT / "posenc_helpers", out / "posenc_helpers", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "LICENSE", "LICENSE-TEXT"):
        shutil.copyfile(ROOT / name, out / name)
    import yaml

    title = (yaml.safe_load((ROOT / "_config.yml").read_text()) or {}).get("title", "The book")
    (out / "README.md").write_text(STUDENT_BRANCH_README.format(title=title), encoding="utf-8")
    (out / "requirements.txt").write_text(student_requirements(), encoding="utf-8")
    (out / MARKER).write_text("Made by tools/course.py (make student-branch).\n")
    return notebooks


# --------------------------------------------------------------------------- otter-grader

OTTER_CONFIG = """# ASSIGNMENT CONFIG
name: {name}
requirements: requirements.txt
init_cell: true
check_all_cell: false
export_cell: false
run_tests: true
generate:
  pdf: false
  show_stdout: true
tests:
  ok_format: false
"""
_BUILTINS = set(dir(builtins))


def _raw(text: str) -> dict[str, Any]:
    return {"cell_type": "raw", "metadata": {}, "source": text}


def _free_names(source: str) -> list[str]:
    """Names an expression reads, in order of first use (the test function's parameters)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    return [name for name in names if name not in _BUILTINS and not name.startswith("check_")]


def otter_test(check_source: str, label: str, exercise: dict[str, Any]) -> str:
    """An otter exception-based test that records the answer, as :func:`hidden_tests` does.

    otter passes the notebook's variables to the function by parameter name. The test
    itself always fails: the points come from the course's otter plugin
    (:mod:`posenc_helpers.checks._otter`), which judges the record outside the kernel, so
    an autograder without the plugin gives nothing rather than everything.
    """
    call = _check_call(check_source, label)
    written = ast.get_source_segment(check_source, call) or ast.unparse(call)
    parameters = _free_names(written)
    name = "test_" + re.sub(r"\W", "_", label)
    return (
        f'""" # BEGIN TEST CONFIG\nhidden: true\nfailure_message: "{label}: graded outside the notebook; '
        'run the visible check for a hint."\n""" # END TEST CONFIG\n'
        f"def {name}({', '.join(parameters)}):\n"
        "    from posenc_helpers.checks import _record\n\n"
        f"    {record_call(check_source, label, exercise)}\n"
        f"    raise AssertionError({label + ': awaiting the verdict of the grading plugin'!r})\n"
    )


def otter_notebook(book_nb: dict[str, Any], chapter: int) -> dict[str, Any]:
    """The otter-grader master notebook of a chapter (from the book's notebook)."""
    exercises = {
        str(_nbgrader(cell).get("grade_id")): cell.get("metadata", {}).get("exercise", {})
        for cell in book_nb["cells"]
        if _nbgrader(cell).get("grade") and cell["cell_type"] == "code"
    }
    source = course_notebook(book_nb, chapter)
    cells: list[dict[str, Any]] = [_raw(OTTER_CONFIG.format(name=f"ch{chapter:02d}"))]
    for cell in source["cells"]:
        meta = _nbgrader(cell)
        grade_id = str(meta.get("grade_id", ""))
        label = re.sub(r"-(answer|setup|words)$", "", grade_id)
        text = cell_source(cell)
        plain = copy.deepcopy(cell)
        plain["metadata"] = {k: v for k, v in cell.get("metadata", {}).items() if k not in ("nbgrader", "exercise")}
        if (
            meta
            and grade_id in (f"{label}-setup", f"{label}-answer")
            and not any(
                cell_source(c).startswith("# BEGIN QUESTION") and f"name: {label}\n" in cell_source(c) for c in cells
            )
        ):
            prompt = cells.pop() if cells and cells[-1]["cell_type"] == "markdown" else None
            points = next(
                (_nbgrader(c).get("points") for c in source["cells"] if _nbgrader(c).get("grade_id") == label), 1
            )
            cells.append(_raw(f"# BEGIN QUESTION\nname: {label}\npoints: {points}"))
            if prompt is not None:
                cells.append(prompt)
        if meta.get("solution") and cell["cell_type"] == "code":
            plain["source"] = text.replace("### BEGIN SOLUTION", "# BEGIN SOLUTION").replace(
                "### END SOLUTION", "# END SOLUTION"
            )
            cells += [_raw("# BEGIN SOLUTION"), plain, _raw("# END SOLUTION")]
        elif meta.get("grade") and cell["cell_type"] == "code":
            visible = text.split("### END HIDDEN TESTS")[-1].strip()
            plain["source"] = visible
            test: dict[str, Any] = {
                "cell_type": "code",
                "execution_count": None,
                "id": f"{label}-otter-test",
                "metadata": {},
                "outputs": [],
                "source": otter_test(visible, label, exercises.get(label, {})),
            }
            cells += [plain, _raw("# BEGIN TESTS"), test, _raw("# END TESTS"), _raw("# END QUESTION")]
        elif meta.get("solution"):  # written answers: graded by hand, the model answer left out
            plain["source"] = re.sub(r"### BEGIN SOLUTION.*?### END SOLUTION", TEXT_STUB, text, flags=re.DOTALL)
            cells.append(plain)
        else:
            cells.append(plain)
    from posenc_helpers.checks._verdict import released_spec, source_digest

    specs = {}
    for cell in source["cells"]:
        meta = _nbgrader(cell)
        if meta.get("grade") and cell["cell_type"] == "code":
            label = str(meta.get("grade_id"))
            visible = cell_source(cell).split("### END HIDDEN TESTS")[-1].strip()
            spec = released_spec(record_call(visible, label, exercises.get(label, {})))
            if spec is None:
                raise ValueError(f"{label}: its check call cannot be recorded")
            specs[label] = dataclasses.asdict(spec)
    released = sorted(
        {
            source_digest(cell_source(c))
            for c in cells
            if c["cell_type"] == "code"
            and not str(c.get("id", "")).endswith("-otter-test")
            and "# BEGIN SOLUTION" not in cell_source(c)
        }
    )
    plugin = {"posenc_helpers.checks._otter.GradeFromRecords": {"specs": specs, "released": released}}
    cells[0] = _raw(cell_source(cells[0]) + "plugins:\n  - " + json.dumps(plugin) + "\n")
    seen: set[str] = set()
    for index, cell in enumerate(cells):  # nbformat 4.5 wants a unique id on every cell
        if not cell.get("id") or cell["id"] in seen:
            cell["id"] = f"otter-{index}"
        seen.add(cell["id"])
    master = copy.deepcopy(source)
    master["cells"] = cells
    return master


def otter_requirements(url: str, version: str) -> str:
    """The grading image's requirements: the book's pins, and posenc_helpers at the release tag."""
    pins = _pins(_RUNTIME)
    if url:
        package = f"posenc-helpers[widgets,lab] @ git+{url}@v{version}"
    else:
        package = (
            "# posenc-helpers: set repository.url in _config.yml (the release tag v"
            f"{version} is installed from it), or list a wheel of the package here"
        )
    return (
        "# Written by tools/course.py (make otter): what Gradescope installs to grade.\n"
        + "\n".join([*pins, package])
        + "\n"
    )


def write_otter(out: Path, chapters: list[Path], *, force: bool = False) -> list[Path]:
    """Write each chapter's otter master notebook into ``out/chNN/`` and run ``otter assign``
    on it (into ``out/chNN/dist``); the autograder zip files."""
    _prepare(out, force)
    zips = []
    for path in chapters:
        name = assignment_name(path)
        folder = out / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        master = folder / path.name
        (folder / "requirements.txt").write_text(
            otter_requirements(repository_setting()[0], package_version()), encoding="utf-8"
        )
        nb = json.loads(path.read_text(encoding="utf-8"))
        master.write_text(json.dumps(otter_notebook(nb, int(name[2:])), indent=1, ensure_ascii=False) + "\n")
        _run_script("otter", ["assign", path.name, "dist"], folder)
        zips += sorted((folder / "dist" / "autograder").glob("*.zip"))
    return zips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course", description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", type=Path, help="chapter notebooks (default: all with exercises)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument("--force", action="store_true", help="write into a folder this tool did not make")
    parser.add_argument(
        "--student-copies",
        type=Path,
        metavar="DIR",
        help="only copy the course's release notebooks into DIR (after make course)",
    )
    parser.add_argument("--otter", action="store_true", help="write otter-grader assignments into --out instead")
    parser.add_argument(
        "--student-branch",
        type=Path,
        metavar="DIR",
        help="only write the student branch's tree into DIR (after make course)",
    )
    args = parser.parse_args(argv)
    try:
        if args.student_branch is not None:
            copies = write_student_branch(args.out.resolve(), args.student_branch.resolve(), force=args.force)
            print(f"student branch in {args.student_branch}: {len(copies)} notebooks; publish it as the branch")
            return 0
        if args.otter:
            chapters = [path.resolve() for path in args.chapters] or chapters_with_exercises()
            zips = write_otter(args.out.resolve(), chapters, force=args.force)
            print(f"otter-grader assignments in {args.out}: {len(zips)} autograder zip files")
            return 0
        if args.student_copies is not None:
            copies = write_student_copies(args.out.resolve(), args.student_copies, force=args.force)
            print(f"{len(copies)} student notebooks in {args.student_copies}")
            return 0
        chapters = [path.resolve() for path in args.chapters] or chapters_with_exercises()
        names = write_course(args.out.resolve(), chapters, force=args.force)
    except (FileExistsError, FileNotFoundError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"nbgrader course in {args.out}: {', '.join(names)} (source/ and release/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
