"""Every chapter follows the anatomy of AUTHORING.md.

These tests read the committed notebooks; nbval (make test-notebooks) separately
checks that a fresh run reproduces their outputs.
"""

import re
from pathlib import Path

import nbformat
import pytest

from tools import nbtools
from tools.chapters import chapter_notebooks

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = chapter_notebooks()
BIB_KEYS = set(re.findall(r"@\w+\{([^,\s]+),", (ROOT / "book" / "references.bib").read_text()))


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.stem)
def chapter(request):
    path = request.param
    return int(path.name[:2]), nbformat.read(path, as_version=4), path


def _markdown(nb):
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def _caption(cell):
    """A figure's caption, from its code cell's ``mystnb.figure`` metadata ("" if none)."""
    return cell.metadata.get("mystnb", {}).get("figure", {}).get("caption", "")


def _text(cells):
    """The prose of ``cells``: markdown cells and figure captions, in order."""
    return "\n".join(c.source if c.cell_type == "markdown" else _caption(c) for c in cells)


def _code(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _tags(cell):
    return cell.metadata.get("tags", [])


def test_there_are_chapters():
    assert NOTEBOOKS, "no notebooks found"


def test_no_author_placeholders_left(chapter):
    """``make chapter`` marks everything the author has to write ``TODO(author)``."""
    _, nb, path = chapter
    left = [line.strip() for cell in nb.cells for line in (cell.source + "\n" + _caption(cell)).splitlines()]
    left = [line for line in left if "TODO(author)" in line]
    assert not left, (
        f"{path.name}: {len(left)} TODO(author) left to write, the first: {left[0]!r}; write each "
        f"(CONTRIBUTING.md, 'Adding a chapter'), re-execute the notebook (`.venv/bin/python -m tools.nbtools "
        f"execute notebooks/{path.name}`) and rerun "
        "`.venv/bin/python -m pytest -p no:nbval tests/tooling/test_notebook_anatomy.py`"
    )


def _scaffolded_files() -> list[Path]:
    """The files besides the notebook that ``make chapter`` writes or registers a chapter in."""
    return [
        *sorted((ROOT / "posenc_helpers").rglob("*.py")),
        *sorted((ROOT / "tests" / "chapters").glob("*.py")),
        ROOT / "tools" / "site" / "explorer_grids.py",
    ]


def test_no_author_placeholders_left_in_the_code():
    """The scaffold's modules, tests and web grid are marked ``TODO(author)`` too (issue 49)."""
    left = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _scaffolded_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "TODO(author)" in line
    ]
    assert not left, (
        f"{len(left)} TODO(author) left to write in the chapter's code, at {', '.join(left)}: write each "
        "(CONTRIBUTING.md, 'Adding a chapter'), then rerun "
        "`.venv/bin/python -m pytest -p no:nbval tests/tooling/test_notebook_anatomy.py`"
    )


def test_title_motivation_and_learning_goals(chapter):
    _, nb, _ = chapter
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert re.match(r"# [^\d\s]", first.source), "a title without a typed number (Sphinx numbers chapters)"
    assert "**You will learn**" in first.source
    goals = first.source.split("**You will learn**")[1]
    assert len(re.findall(r"^- ", goals, flags=re.M)) >= 3


def test_colab_setup_cell_comes_first(chapter):
    """The first code cell installs posenc_helpers where it is missing (Colab), from the
    repository set in _config.yml, and is removed from the website."""
    _, nb, _ = chapter
    first = _code(nb)[0]
    assert nb.cells[1] is first, "the Colab set-up cell follows the title cell"
    assert first.source == nbtools.setup_cell_source(*nbtools.repository_setting()), (
        "out of date with _config.yml: run `make sync-setup`"
    )
    assert _tags(first) == ["remove-cell"]
    assert first.outputs == []


def test_setup_cell_is_the_only_hidden_cell(chapter):
    _, nb, _ = chapter
    code = _code(nb)
    setup = code[1]
    assert "hide-input" in _tags(setup)
    assert "from posenc_helpers" in setup.source
    hidden = [c for c in code[2:] if {"hide-input", "remove-input", "remove-cell"} & set(_tags(c))]
    assert not hidden, "only the set-up cells may be hidden"


def test_math_with_labelled_equations(chapter):
    _, nb, _ = chapter
    text = _text(nb.cells)
    labels = re.findall(r"^\$\$ \((eq-[\w-]+)\)$", text, flags=re.M)
    assert labels, "at least one labelled equation"
    for label in labels:
        assert f"{{eq}}`{label}`" in text, f"equation {label} is never referred to"


_CHECK = re.compile(r"\bassert\b|np\.testing\.assert_\w+\(|\bcheck_\w+\(")


def _prints(cell) -> bool:
    return any(
        out.output_type == "stream" or (out.output_type == "execute_result" and "text/plain" in out.get("data", {}))
        for out in cell.outputs
    )


def test_every_printed_result_is_asserted(chapter):
    """A cell that prints a result asserts it: a printed figure is a claim, and a claim is
    checked where it is made (an explorer prints nothing; an exercise's check prints its verdict)."""
    _, nb, path = chapter
    printing = [cell for cell in _code(nb) if _prints(cell)]
    assert len(printing) >= 5, (
        f"{path.name}: {len(printing)} code cells print a result, a chapter at least 5: compute and print its "
        "claims, each asserted in the cell that prints it (AUTHORING.md, 'The promise'); re-execute it "
        f"(`.venv/bin/python -m tools.nbtools execute notebooks/{path.name}`) and rerun "
        "`.venv/bin/python -m pytest -p no:nbval tests/tooling/test_notebook_anatomy.py -k printed`"
    )
    unchecked = [cell.id for cell in printing if not _CHECK.search(cell.source)]
    assert not unchecked, (
        f"{path.name}: cells that print without asserting: {unchecked}; assert (or check_...()) what each prints"
    )


_TYPED_NUMBER = re.compile(r"^#{1,2} \d|\*\*Figure \d|\b(?:Figures?|[Ss]ections?)\s+\d+\.\d+", re.M)


def test_figures_have_alt_text_and_a_captioned_name(chapter):
    """Every figure is a code cell with alt text and ``mystnb.figure`` (caption, name): Sphinx
    numbers it, ``{numref}`` refers to it, the course notebooks write the caption out."""
    number, nb, _ = chapter
    figure = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if not any("image/png" in o.get("data", {}) for o in cell.outputs):
            continue
        figure += 1
        mystnb = cell.metadata.get("mystnb", {})
        alt = mystnb.get("image", {}).get("alt", "")
        assert len(alt) > 40, f"figure {number}.{figure} needs alt text"
        caption = mystnb.get("figure", {})
        assert len(caption.get("caption", "")) > 40, f"figure {number}.{figure} needs a caption"
        assert re.fullmatch(r"fig-[a-z0-9-]+", caption.get("name", "")), f"figure {number}.{figure} needs a name"
        assert "plt.show()" in cell.source
        assert re.search(r"set_title|title=|suptitle", cell.source), "figures need a title"
    assert figure >= 2


def test_no_typed_section_or_figure_numbers(chapter):
    """Headings, captions and references carry no typed numbers: Sphinx makes them."""
    _, nb, _ = chapter
    for cell in nb.cells:
        texts = [cell.source] if cell.cell_type == "markdown" else []
        texts.append(_caption(cell))
        for text in texts:
            typed = _TYPED_NUMBER.search(text)
            assert typed is None, (
                f"cell {cell.get('id')}: a typed number {typed.group(0)!r}: use a label and {{numref}}"
            )


def test_one_explorer_with_static_companion(chapter):
    _, nb, _ = chapter
    cells = nb.cells
    explorers = [i for i, c in enumerate(cells) if c.cell_type == "code" and "posenc_helpers.widgets" in c.source]
    assert len(explorers) == 1
    cell = cells[explorers[0]]
    assert {"nbval-ignore-output", "remove-output"} <= set(_tags(cell))
    # Just before it, for JupyterLab only, what a reader sees after a kernel restart.
    note = cells[explorers[0] - 1]
    assert note.cell_type == "markdown" and "model not found" in note.source
    assert note.source == nbtools.RESTART_NOTE and _tags(note) == ["remove-cell"], "run make sync-setup"
    later = _text(cells[explorers[0] :])
    assert "static companion" in later


LAB_CALL = re.compile(
    r"\b(train|train_many|train_budgets|train_sweep|fine_tune|length_curves?|length_losses|offset_accuracy"
    r"|retrieval_accuracy|position_losses)\("
)


def test_nbval_ignores_only_widget_output_and_training_results(chapter):
    """nbval compares every stored output except an explorer's, in the training lab
    those of the cells that train or evaluate models (tagged ``varies-by-machine``):
    their numbers move with the CPU's floating point; and that of a cell that shows
    nothing but a progress bar, cleared when done (nbval does not apply
    ``clear_output``, so it would see the bar). Their assertions still run."""
    _, nb, _ = chapter
    assert not any(key.startswith("nbval") for key in nb.metadata)
    for cell in _code(nb):
        tags = set(_tags(cell))
        assert "nbval-skip" not in tags
        if "varies-by-machine" in tags:
            assert "nbval-ignore-output" in tags
            assert LAB_CALL.search(cell.source), "only cells that train or evaluate models vary by machine"
            assert "check_" not in cell.source, "an exercise check's output must be compared"
        elif "nbval-ignore-output" in tags:
            progress_only = not cell.outputs and "tqdm(" in cell.source and "clear_output()" in cell.source
            assert "posenc_helpers.widgets" in cell.source or progress_only, cell.source[:200]


def test_exercises_gated_checked_and_solved(chapter):
    _, nb, _ = chapter
    cells = nb.cells
    starts = []
    inside_solution = None
    solution_cells = []
    exercise_checks = {}
    current_exercise = None
    for cell in cells:
        source = cell.source
        if cell.cell_type == "markdown":
            for label in re.findall(r"```\{exercise-start\}[^\n]*\n:label: ([\w-]+)", source):
                starts.append(label)
                current_exercise = label
            if "{exercise-end}" in source:
                current_exercise = None
            match = re.search(r"```\{solution-start\} ([\w-]+)\n:class: dropdown", source)
            if match:
                assert match.group(1) in starts
                inside_solution = match.group(1)
            if "{solution-end}" in source:
                assert inside_solution is not None
                inside_solution = None
        else:
            if current_exercise:
                exercise_checks[current_exercise] = re.findall(r"\b(check_\w+)\(", source)
            if "solution" in _tags(cell):
                assert inside_solution, "a solution cell outside a solution block"
                solution_cells.append((inside_solution, source))
            elif inside_solution:
                pytest.fail("code inside a solution block must be tagged 'solution'")
    plain = re.findall(r"```\{exercise\}[^\n]*\n:label: ([\w-]+)", "\n".join(_markdown(nb)))
    assert 2 <= len(starts) + len(plain) <= 4
    assert len(starts) >= 1, "at least one code exercise in the gated form"
    for label in starts:
        assert exercise_checks.get(label), f"exercise {label} calls no check from posenc_helpers.checks"
        solved = [src for lab, src in solution_cells if lab == label]
        assert solved, f"exercise {label} has no executed solution"
        assert any(check in src for check in exercise_checks[label] for src in solved)
    for label in plain:
        assert re.search(rf"```\{{solution\}} {label}\n:class: dropdown", "\n".join(_markdown(nb)))


def test_solutions_fold_in_jupyterlab(chapter):
    """JupyterLab folds each solution cell (input and outputs) as the website's dropdown
    does, through JupyterLab's own cell metadata; no other cell is folded. ``make
    sync-setup`` (tools/nbtools.py, fold_solutions) writes it."""
    _, nb, path = chapter
    fold = {"source_hidden": True, "outputs_hidden": True}
    for index, cell in enumerate(nb.cells):
        where = f"{path.name}, cell {index}"
        if cell.cell_type == "code" and "solution" in _tags(cell):
            assert cell.metadata.get("jupyter") == fold, f"{where}: an unfolded solution (run make sync-setup)"
        else:
            assert "jupyter" not in cell.metadata, f"{where}: folded, but not a solution"


def test_key_takeaways_and_next(chapter):
    _, nb, _ = chapter
    cell = next(c.source for c in nb.cells if c.cell_type == "markdown" and "## Key takeaways" in c.source)
    bullets = re.findall(r"^- ", cell, flags=re.M)
    assert 3 <= len(bullets) <= 5
    assert "**Next:**" in cell or "Suggested projects" in cell


def test_citations_resolve(chapter):
    _, nb, _ = chapter
    keys = [
        k.strip() for group in re.findall(r"\{cite[pt]?\}`([^`]+)`", "\n".join(_markdown(nb))) for k in group.split(",")
    ]
    assert keys, "no citations"
    assert set(keys) <= BIB_KEYS, set(keys) - BIB_KEYS


def test_randomness_is_seeded(chapter):
    _, nb, _ = chapter
    source = "\n".join(c.source for c in _code(nb))
    assert "np.random.seed" not in source
    assert not re.search(r"np\.random\.(rand|randn|normal|uniform|randint|choice)\(", source)
    assert not re.search(r"default_rng\(\s*\)", source)


def test_listed_in_table_of_contents(chapter):
    _, _, path = chapter
    toc = (ROOT / "_toc.yml").read_text()
    assert f"file: notebooks/{path.stem}" in toc
