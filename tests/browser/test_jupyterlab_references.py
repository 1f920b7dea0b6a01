"""Every chapter's references read right in JupyterLab (issue 38, item 1).

The student working copies (``make lab-student``, :mod:`tools.working_copies`) of all
the chapters are opened in one JupyterLab, started as ``make lab`` starts it
(``_jupyterlab.py``), and not run: each chapter's Markdown is rendered by
jupyterlab-myst, and the test fails on

* a number left as ``%s`` or ``??`` (a ``{numref}`` or ``{eq}`` jupyterlab-myst cannot
  resolve), or a warning jupyterlab-myst puts in the text (a reference or citation it
  did not find: ``span.text-yellow-600`` with a title ending "Not Found");
* role syntax (``{numref}``, ``{cite}`` ...), a citation key of the bibliography, a
  label of the book (a section, figure or equation) or a chapter's file name, in the
  rendered text outside code;
* display equations numbered otherwise than on the website: (1), (2) ... for the
  labelled ones only, in page order (:func:`tools.course.numbers.equation_numbers`).

About a minute on the two-core machine: no kernel runs a cell (each chapter's kernel is
shut down once its Markdown has been read).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _jupyterlab import LabDidNotStart, project_tracebacks, running_lab  # noqa: E402

from tools.chapters import chapter_notebooks

CHAPTERS = chapter_notebooks()
RENDER_TIMEOUT_MS = 120_000
STEADY_S = 2  # the rendered text must stay the same this long before it is read

# The rendered Markdown of every Markdown cell, without code, and what it shows.
_RENDERED_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.model) return null;
  let markdown = 0;
  for (const cell of panel.content.model.cells) if (cell.type === 'markdown') markdown += 1;
  const rendered = Array.from(panel.node.querySelectorAll('.jp-MarkdownCell .myst'));
  const texts = rendered.map(node => {
    const copy = node.cloneNode(true);
    copy.querySelectorAll('code, pre, .katex, .katex-display').forEach(n => n.remove());
    return copy.innerText;
  });
  const warnings = Array.from(panel.node.querySelectorAll('.jp-MarkdownCell [title$="Not Found"]'))
    .map(n => n.getAttribute('title') + ': ' + n.textContent.trim());
  const equations = Array.from(panel.node.querySelectorAll('.jp-MarkdownCell a[title="Link to this Equation"]'))
    .map(n => n.textContent.trim());
  return {markdown: markdown, rendered: rendered.length, texts: texts, warnings: warnings, equations: equations};
}
"""


def _book_names() -> set[str]:
    """Every label, citation key and chapter name of the book: none may show as text."""
    from tools.bibliography import citation_labels
    from tools.course.numbers import book_targets

    names = set(book_targets()) | set(citation_labels()) | {path.stem for path in CHAPTERS}
    for path in CHAPTERS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                names |= set(re.findall(r"\$\$[ \t]*\(([\w-]+)\)", "".join(cell["source"])))
    return {name for name in names if name}


def _expected_equations(path: Path) -> list[str]:
    from tools.course.numbers import equation_numbers

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [f"({n})" for n in sorted(equation_numbers(cells).values())]


def problems_in(rendered: dict, names: set[str]) -> list[str]:
    """What is wrong with one chapter's rendered Markdown (the ``_RENDERED_JS`` result)."""
    found = [f"jupyterlab-myst warns: {warning}" for warning in rendered["warnings"]]
    text = "\n".join(rendered["texts"])
    for pattern, what in (
        (r"%s", "a number left as %s"),
        (r"\?\?", "a number left as ??"),
        (r"\{(?:numref|ref|eq|doc|cite(?::\w+)?|prf:ref)\}", "role syntax"),
    ):
        for match in re.finditer(pattern, text):
            found.append(f"{what}: ...{text[max(0, match.start() - 60) : match.end() + 20]!r}")
    words = set(re.findall(r"[\w-]+", text))
    found += [f"a raw label or key: {name!r}" for name in sorted(names & words)]
    return found


_OPEN_JS = """
async (path) => {
  const app = window.jupyterapp;
  await app.commands.execute('docmanager:open', {path: path, factory: 'Notebook'});
  return app.shell.currentWidget.context.path;
}
"""

# Close the chapter (never modified: nothing ran) and shut its kernel down.
_CLOSE_JS = """
async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await panel.sessionContext.shutdown();
  panel.dispose();
}
"""


def _read_chapter(page, chapter: Path, names: set[str]) -> list[str]:
    """Open ``chapter`` in the JupyterLab of ``page``; what is wrong with its references."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    assert page.evaluate(_OPEN_JS, chapter.name) == chapter.name
    try:
        page.wait_for_function(
            f"() => {{ const r = ({_RENDERED_JS})(); return r && r.markdown > 0 && r.rendered === r.markdown; }}",
            timeout=RENDER_TIMEOUT_MS,
        )
    except PlaywrightTimeout:
        pytest.fail(f"{chapter.name}: its Markdown was not rendered", pytrace=False)
    rendered = page.evaluate(_RENDERED_JS)
    # References across cells are resolved after each cell renders: read once the text
    # has stopped changing.
    for _ in range(RENDER_TIMEOUT_MS // 1000 // STEADY_S):
        page.wait_for_timeout(STEADY_S * 1000)
        again = page.evaluate(_RENDERED_JS)
        if again == rendered:
            break
        rendered = again
    problems = problems_in(rendered, names)
    expected = _expected_equations(chapter)
    if rendered["equations"] != expected:
        problems.append(f"equations numbered {rendered['equations']}, on the website {expected}")
    page.evaluate(_CLOSE_JS)
    return problems


def test_every_chapter_reads_its_references_in_jupyterlab(browser, tmp_path):
    from tools import working_copies

    copies = tmp_path / "student"
    working_copies.write_copies(CHAPTERS, copies, student=True)
    home = tmp_path / "home"
    home.mkdir()
    names = _book_names()
    report: dict[str, list[str]] = {}
    try:
        with running_lab(copies, home) as lab:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(RENDER_TIMEOUT_MS)
            page = context.new_page()
            try:
                # (a fresh server's workspace: nothing opened but what the test opens)
                page.goto(f"{lab.base}/lab?token={lab.token}", wait_until="load")
                page.wait_for_function(
                    "() => !!(window.jupyterapp && window.jupyterapp.commands.hasCommand('docmanager:open'))"
                )
                page.evaluate("() => { window.jupyterapp.restored.then(() => { window.posencRestored = true; }); }")
                page.wait_for_function("() => window.posencRestored === true")
                for chapter in CHAPTERS:
                    problems = _read_chapter(page, chapter, names)
                    if problems:
                        report[chapter.stem] = problems
            finally:
                context.close()
            log = lab.log.read_text()
    except LabDidNotStart as error:
        pytest.fail(str(error), pytrace=False)
    assert not report, "\n".join(f"{name}:\n  " + "\n  ".join(found) for name, found in report.items())
    # The server's own noise around kernel shutdowns (a traitlets lookup in a tornado callback)
    # is not the book's: only a traceback through the book's code fails here (issue 49).
    assert not project_tracebacks(log, copies), "\n\n".join(project_tracebacks(log, copies))
