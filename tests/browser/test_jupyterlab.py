"""JupyterLab as a reader meets it (issue 25): started from the reader environment,
one chapter opened from its working copy (``make lab``), run, an explorer's slider
moved, the page reloaded, the kernel restarted (the explorer then hides its controls and
says why: issue 46, item 8), and the repository's notebooks untouched.

``POSENC_READER_PYTHON`` names the Python of the environment to start JupyterLab from
(default: the one running the tests, which holds every layer); a reader's
environment is ``requirements.txt`` alone. The JupyterLab server is started by
``_jupyterlab.py``, as for ``test_jupyterlab_references.py``: on a free port of
127.0.0.1 with a random token, with its configuration, settings, workspaces and runtime
files in a temporary folder (nothing of the machine's own JupyterLab set-up is read or
written), and every cell rendered, so that every widget output is displayed and
checked. Chapter 01 is the chapter ``make test`` runs: the shortest to
run. ``POSENC_JUPYTERLAB_CHAPTER`` names another (``11`` or
``11_train_short_test_long``): chapter 11's training lab is checked this way before a
release (CONTRIBUTING, "Checking a chapter in JupyterLab"); it trains for minutes, so
the timeout for Run All grows with it. Timeouts are generous, for a loaded two-core CI
machine.

JupyterLab is started as ``make lab`` starts it, with the book's settings
(``tools/jupyterlab/overrides.json``). While Run All runs, the status bar is read once
a second and every status message the kernel sends is logged with the request it
answers: the bar must read "Busy" while cells compute (an "Idle" there came from the
subshell JupyterLab opens for widget comms; see ``tools/jupyterlab/README.md``).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _jupyterlab import REPO, Lab, LabDidNotStart, project_tracebacks, running_lab  # noqa: E402


def _chapter(setting: str) -> Path:
    """The notebook that ``POSENC_JUPYTERLAB_CHAPTER`` names (its number or its stem)."""
    matches = sorted((REPO / "notebooks").glob(f"{setting.removesuffix('.ipynb')}*.ipynb"))
    if len(matches) != 1:
        raise ValueError(f"POSENC_JUPYTERLAB_CHAPTER={setting!r} names {len(matches)} notebooks; give NN or NN_name")
    return matches[0]


CHAPTER = _chapter(os.environ.get("POSENC_JUPYTERLAB_CHAPTER") or "01_why_order_matters")
RUN_TIMEOUT_MS = 900_000 if CHAPTER.name.startswith("11_") else 240_000
LOAD_TIMEOUT_MS = 120_000


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git_status() -> str:
    """``git status`` of the chapter and its text twin (only theirs: others may be editing
    other notebooks of the same working tree meanwhile)."""
    twin = CHAPTER.parent / "text" / f"{CHAPTER.stem}.md"
    result = subprocess.run(
        ["git", "status", "--porcelain", "--", str(CHAPTER), str(twin)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout if result.returncode == 0 else "(no git)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server (``_jupyterlab.py``) on a working copy of the chapter, as
    ``make lab`` makes it."""
    from tools import working_copies

    home = tmp_path_factory.mktemp("jupyterlab")
    copies = home / "book"
    working_copies.write_copies([CHAPTER], copies, student=False)
    try:
        with running_lab(copies, home) as server:
            yield server
    except LabDidNotStart as error:
        pytest.fail(str(error), pytrace=False)


_CELLS_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.model) return null;
  const cells = [];
  for (const cell of panel.content.model.cells) {
    if (cell.type !== 'code') continue;
    cells.push({count: cell.executionCount, outputs: cell.outputs.toJSON()});
  }
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  return {dirty: panel.context.model.dirty, status: kernel ? kernel.status : 'none', cells: cells};
}
"""


_SOLUTION_FOLDS_JS = """
() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(cell => (cell.model.getMetadata('tags') || []).includes('solution'))
  .map(cell => [cell.inputHidden, cell.outputHidden && !!cell.node.querySelector('.jp-OutputPlaceholder')])
"""


# While Run All runs: the status bar's kernel item once a second, every status message
# with the request it answers, and the requests other than execute_request that were sent.
_WATCH_STATUS_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const kernel = panel.sessionContext.session.kernel;
  const watch = {bar: [], statuses: [], sent: []};
  window.posencWatch = watch;
  kernel.anyMessage.connect((_, args) => {
    const type = args.msg.header.msg_type;
    if (args.direction === 'send') { if (type !== 'execute_request') watch.sent.push(type); return; }
    if (type === 'status') {
      const parent = args.msg.parent_header ? args.msg.parent_header.msg_type : null;
      watch.statuses.push(args.msg.content.execution_state + ' for ' + parent);
    }
  });
  window.posencWatchTimer = setInterval(() => {
    const item = Array.from(document.querySelectorAll('.jp-StatusBar-TextItem'))
      .map(node => node.textContent).find(text => text.includes('|'));
    let ran = 0;
    for (const c of panel.content.model.cells) if (c.type === 'code' && c.executionCount !== null) ran += 1;
    watch.bar.push({text: item || '', ran: ran});
  }, 1000);
}
"""


def _state(page) -> dict:
    return page.evaluate(_CELLS_JS)


def _wait(page, condition: str, timeout_ms: int, what: str, arg=None) -> None:
    """Wait for ``condition`` (a JavaScript function); on a timeout, fail saying what
    the notebook looked like."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(condition, arg=arg, timeout=timeout_ms)
    except PlaywrightTimeout:
        try:
            state = _state(page)
            summary = {"status": state["status"], "counts": [c["count"] for c in state["cells"]]}
        except Exception as exc:  # the page itself is the problem
            summary = {"page": repr(exc)}
        pytest.fail(f"{what} within {timeout_ms / 1000:.0f} s: {summary}", pytrace=False)


def _open_chapter(page, lab: Lab) -> None:
    page.goto(lab.url(CHAPTER.name), wait_until="load", timeout=LOAD_TIMEOUT_MS)
    _wait(
        page,
        "() => { const p = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(p && p.sessionContext && p.sessionContext.session && p.sessionContext.session.kernel"
        " && p.sessionContext.session.kernel.status === 'idle'); }",
        LOAD_TIMEOUT_MS,
        "the chapter did not open with an idle kernel",
    )


def test_a_chapter_runs_its_explorer_responds_and_a_reload_keeps_it(browser, lab):
    tracked_before, status_before = _digest(CHAPTER), _git_status()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(LOAD_TIMEOUT_MS)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        _open_chapter(page, lab)
        opened = _state(page)
        assert not opened["dirty"], "opening the chapter marked it modified"
        failed = [p for p in problems if "Failed to create module" in p or "RUNTIME-0" in p]
        assert not failed, f"an extension failed to load: {failed}"
        # Every solution is folded, input and outputs, as on the website.
        folds = page.evaluate(_SOLUTION_FOLDS_JS)
        assert folds and all(input_hidden and outputs_hidden for input_hidden, outputs_hidden in folds), folds

        # Run All, as a reader would, and wait until every code cell has run (the stored
        # execution counts are cleared first: a fresh run counts 1, 2, ... as they do).
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        assert all(cell["count"] is None for cell in _state(page)["cells"])
        page.evaluate(_WATCH_STATUS_JS)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        _wait(
            page,
            "() => { const p = window.jupyterapp.shell.currentWidget; let all = true;"
            " for (const c of p.content.model.cells) {"
            "   if (c.type === 'code' && c.executionCount === null) all = false; }"
            " return all && p.sessionContext.session.kernel.status === 'idle'; }",
            RUN_TIMEOUT_MS,
            "Run All did not finish",
        )
        ran = _state(page)
        errors = [
            output
            for cell in ran["cells"]
            for output in cell["outputs"]
            if output["output_type"] == "error"
            or (output["output_type"] == "stream" and output.get("name") == "stderr")
        ]
        assert not errors, f"Run All printed errors or warnings: {errors[:2]}"
        # The status bar read "Busy" while the cells ran: at most a sample or two catch
        # the instant between two cells (before the fix, chapter 11 read "Idle" for 8 s).
        # Samples from the set-up and import cells are left out: as the kernel starts,
        # the debugger probes it (debug_request), and each answer flips the bar to
        # "Idle" until the next cell starts (jupyterlab/jupyterlab#10701).
        watch = page.evaluate("() => { clearInterval(window.posencWatchTimer); return window.posencWatch; }")
        assert "create_subshell_request" not in watch["sent"], "JupyterLab opened a subshell for widget comms"
        idle = [s for s in watch["bar"][:-1] if s["ran"] >= 2 and s["text"].strip().endswith("Idle")]
        assert len(idle) <= 2, (
            f"the status bar read Idle in {len(idle)} of {len(watch['bar'])} one-second samples while cells ran; "
            f"status messages other than for cells: {[m for m in watch['statuses'] if 'execute_request' not in m]}"
        )

        # The explorer: move its slider with the keyboard and see its figure change.
        explorer = page.locator(".jp-OutputArea-output .widget-vbox").filter(has=page.locator("img")).first
        explorer.scroll_into_view_if_needed()
        image = explorer.locator("img").first
        before = image.get_attribute("src")
        handle = explorer.locator(".noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        _wait(
            page,
            "([img, before]) => img.getAttribute('src') !== before",
            60_000,
            "the explorer's figure did not change when its slider moved",
            arg=[image.element_handle(), before],
        )

        # Saved (as autosave would) and reloaded with the kernel still running: every
        # widget the file names is drawn again from the kernel, none is missing.
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        saved_js = "() => !window.jupyterapp.shell.currentWidget.context.model.dirty"
        _wait(page, saved_js, 60_000, "the copy was not saved")
        saved = (lab.root / CHAPTER.name).read_text()
        assert "application/vnd.jupyter.widget-view+json" in saved, "the saved copy holds no explorer"
        page.reload(wait_until="load")
        _wait(
            page,
            "() => { const p = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
            " return !!(p && p.sessionContext && p.sessionContext.session && p.sessionContext.session.kernel"
            " && p.sessionContext.session.kernel.status === 'idle'); }",
            LOAD_TIMEOUT_MS,
            "the chapter did not come back after a reload",
        )
        page.locator(".jp-OutputArea-output .widget-vbox img").first.wait_for(state="attached")
        # (in the outputs: the Markdown note above the explorer quotes the message)
        failed = page.locator(".jp-OutputArea-output", has_text="Error displaying widget")
        assert failed.count() == 0, "a widget failed to display after reload"

        # The kernel restarts (issue 46, item 8): the explorer's controls go, a note says why,
        # and its last picture stays with its status line, so no readout disagrees with it.
        explorer = page.locator(".jp-OutputArea-output .posenc-explorer").first
        explorer.scroll_into_view_if_needed()
        assert explorer.locator(".posenc-explorer-controls").is_visible(), "the explorer shows no controls"
        assert not explorer.locator(".posenc-explorer-offline").is_visible(), "the offline note shows while connected"
        picture = explorer.locator("img").first.get_attribute("src")
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.restartKernel()")
        _wait(
            page,
            "() => !!document.querySelector('.jp-OutputArea-output .posenc-explorer.jupyter-widgets-disconnected')",
            LOAD_TIMEOUT_MS,
            "the explorer was not marked disconnected after a kernel restart",
        )
        assert not explorer.locator(".posenc-explorer-controls").is_visible(), "the controls still show"
        note = explorer.locator(".posenc-explorer-offline")
        assert note.is_visible() and "has restarted" in note.inner_text(), note.inner_text()
        assert explorer.locator("img").first.get_attribute("src") == picture
    finally:
        context.close()
    # The reader worked in the copy; the repository's notebooks are as they were.
    assert _digest(CHAPTER) == tracked_before, "the tracked chapter was rewritten"
    assert _git_status() == status_before
    # Only a traceback through the book's code fails here, not the server's own shutdown noise (issue 49).
    own = project_tracebacks(lab.log.read_text(), lab.root)
    assert not own, "\n\n".join(own)


_EXPLORER_DOM = """
<div class="jupyter-widgets widget-container widget-box widget-vbox posenc-explorer {state}">
  <div class="jupyter-widgets widget-container widget-box widget-hbox posenc-explorer-controls">
    <div class="jupyter-widgets widget-inline-hbox widget-slider"><div class="widget-readout">128</div></div>
  </div>
  <div class="jupyter-widgets widget-inline-hbox widget-html posenc-explorer-offline">
    <div class="widget-html-content">{note}</div>
  </div>
  <img alt="d = 64" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
</div>
"""


@pytest.mark.parametrize("connected", [True, False], ids=["connected", "disconnected"])
def test_the_explorer_style_hides_the_controls_of_a_disconnected_explorer(browser, connected):
    """The explorer's own style, on the markup ipywidgets 8 gives a box, its rows and an HTML
    widget: connected, the controls show and the note does not; marked
    ``jupyter-widgets-disconnected`` (as ipywidgets marks a widget whose kernel restarted), the
    reverse. Before, nothing changed and a slider's readout could disagree with the picture."""
    from posenc_helpers.widgets import SinusoidalExplorer

    explorer, _ = SinusoidalExplorer.demo()
    page = browser.new_page()
    try:
        state = "" if connected else "jupyter-widgets-disconnected"
        page.set_content(_EXPLORER_DOM.format(state=state, note=explorer.offline.value))
        shown = {name: page.locator(f".posenc-explorer-{name}").is_visible() for name in ("controls", "offline")}
    finally:
        page.close()
    assert shown == {"controls": connected, "offline": not connected}, shown
