"""Every chapter's explorer on the website, without a kernel: frames rendered by its own Python.

In Jupyter a chapter's explorer (:mod:`posenc_helpers.widgets`) redraws its figure and
status line for any setting of its controls. A static page cannot run Python, so at
build time :func:`render_explorer_frames` sets the *same* explorer, with the chapter's
own set-up, to every setting of a grid (:data:`GRIDS`, one per explorer, each saying
which controls, which values, and why that grid is enough) and stores what it draws:
``_static/explorers/<chapter>/<n>.webp`` (lossless WebP, or PNG where smaller) and a
``manifest.json`` (setting -> frame file, status line, alt text). Nothing of the
explorers' mathematics is written again in JavaScript: the player only swaps frames.

:func:`insert_players` puts the player where the explorer's code cell is on the page
(found by the cell's ``remove-output`` tag and its ``from posenc_helpers.widgets import
...Explorer`` line): one labelled ``<input type="range">`` per gridded control
(keyboard operable), the frame, and the status line in an ``aria-live="polite"``
region (the frame's text alternative). The manifest is written into the page, so the
player works from ``file://`` too (no ``fetch``); the first frame loads lazily, the
others on the first interaction. Without scripts a ``<noscript>`` style hides the
player and the page shows its static companion figure, as before. The frame links to
the frame shown at full size, as every figure of the site (on a phone it is drawn at a
third of its size), and the status line keeps the height of the explorer's tallest
status line, so that no setting moves the prose below.

Frames are drawn once per checkout and grid (:data:`CACHE`), keyed by :func:`grid_digest`
on the code of the modules the explorer's module imports (the lab's own rule,
:mod:`posenc_helpers.lab.fingerprint`); the grids a build lacks are drawn by one process
per core (:func:`draw_missing`).
"""

from __future__ import annotations

import functools
import hashlib
import html
import importlib.util
import inspect
import io
import json
import multiprocessing
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from ..chapters import chapter_notebooks
from .explorer_grids import GRIDS, Grid
from .images import WEBP_OPTIONS
from .pipeline import Site

FRAME_BUDGET_BYTES = 1_500_000  # all of one chapter's frames together
#: Frames drawn once for every build of this checkout (the book and the student edition),
#: one folder per chapter, keyed by :func:`grid_digest`: the code of the modules that
#: explorer's drawing imports, what its grid reads, the grid and the drawing libraries'
#: versions. An edit to any other module redraws nothing.
CACHE = Path(__file__).resolve().parents[2] / "_build" / "explorer-frames"
#: The package whose modules the keys read (tests point it at an edited copy).
PACKAGE: Path | None = None
#: Processes that draw the missing grids at once (the reference machine has two cores).
WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# --------------------------------------------------------------------------- frames


def control_labels(control: Any, values: Sequence[Any]) -> list[str]:
    """How the player names each value of ``control``: the widget's own option labels, else the value."""
    options = getattr(control, "options", None)
    labels: dict[Any, str] = {}
    if options:
        for option in options:
            label, value = option if isinstance(option, tuple) and len(option) == 2 else (str(option), option)
            labels.setdefault(_key(value), str(label))
    return [labels.get(_key(value), f"{value:,g}" if isinstance(value, float) else str(value)) for value in values]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _plain(text: str) -> str:
    """An HTML status line as plain text."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


def encode_frame(png: bytes) -> tuple[str, bytes]:
    """``(suffix, data)``: the frame as lossless WebP without alpha, or the PNG where that is smaller.

    WebP at the site's figure settings (:data:`tools.site.images.WEBP_OPTIONS`): ``method``
    4 made the frames 2-7 % smaller and took 130-200 ms a frame instead of 21.
    """
    from PIL import Image

    rgb = Image.open(io.BytesIO(png)).convert("RGB")
    buffer = io.BytesIO()
    rgb.save(buffer, "WEBP", **WEBP_OPTIONS)
    webp = buffer.getvalue()
    return (".webp", webp) if len(webp) < len(png) else (".png", png)


def render_frames(name: str, grid: Grid, folder: Path) -> dict[str, Any]:
    """Render every setting of ``grid`` with explorer ``name`` into ``folder``; return the manifest."""
    explorer = grid.build()
    if type(explorer).__name__ != name:
        raise TypeError(f"grid for {name} built a {type(explorer).__name__}")
    unknown = set(grid.values) - set(explorer.controls)
    if unknown:
        raise ValueError(f"grid for {name} names controls it does not have: {sorted(unknown)}")
    start = explorer.values
    controls: list[dict[str, Any]] = []
    for control_name, values in grid.values.items():
        control = explorer.controls[control_name]
        keys = [_key(v) for v in values]
        if _key(start[control_name]) not in keys:
            raise ValueError(
                f"grid for {name}: {control_name} must include the chapter's value {start[control_name]!r}"
            )
        controls.append(
            {
                "name": control_name,
                "label": control.description or control_name.replace("_", " "),
                "values": list(values),
                "labels": control_labels(control, values),
                "start": keys.index(_key(start[control_name])),
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    frames = {}
    for number, setting in enumerate(grid.settings):
        explorer.set(**setting)
        suffix, data = encode_frame(explorer.image.value)
        file = f"{number:03d}{suffix}"
        (folder / file).write_bytes(data)
        index = ",".join(str(c["values"].index(setting[c["name"]])) for c in controls)
        shown = ", ".join(
            f"{c['label']} {c['labels'][int(i)]}" for c, i in zip(controls, index.split(","), strict=True)
        )
        frames[index] = {
            "src": file,
            "setting": setting,
            "status": explorer.status.value,
            "alt": f"The explorer's figure at {shown}: {_plain(explorer.status.value)}",
        }
    width, height = explorer.figure.canvas.get_width_height()
    return {"explorer": name, "controls": controls, "frames": frames, "width": width, "height": height}


#: What draws a frame besides the explorer: these functions' code is part of every key.
_DRAWING: tuple[Callable[..., Any], ...] = (render_frames, encode_frame, control_labels, _key, _plain)


@functools.cache
def _fingerprint() -> ModuleType:
    """:mod:`posenc_helpers.lab.fingerprint`, loaded from its file alone.

    Importing it as ``posenc_helpers.lab.fingerprint`` runs ``posenc_helpers/lab/__init__.py``,
    which imports JAX: not in the site-build layer (``requirements-book.txt``), and a
    second to import. The module itself needs only the standard library.
    """
    spec = importlib.util.find_spec("posenc_helpers")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("posenc_helpers is not installed")
    path = Path(spec.origin).resolve().parent / "lab" / "fingerprint.py"
    loader = importlib.util.spec_from_file_location("_posenc_lab_fingerprint", path)
    if loader is None or loader.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


def _code(function: Any, fingerprint: ModuleType) -> str:
    """The docstring-free code of ``function`` (its name where Python keeps no source)."""
    try:
        return str(fingerprint.code_fingerprint(textwrap.dedent(inspect.getsource(function))))
    except (OSError, TypeError):
        return getattr(function, "__qualname__", repr(function))


def explorer_module(name: str, package: Path) -> str:
    """The module of ``package`` (relative path) that defines explorer class ``name``."""
    pattern = re.compile(rf"^class {re.escape(name)}\b", re.MULTILINE)
    found = [
        path.relative_to(package).as_posix()
        for path in sorted((package / "widgets").glob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    if len(found) != 1:
        raise LookupError(f"explorer {name}: defined in {found or 'no module'} of {package / 'widgets'}")
    return found[0]


def grid_digest(name: str, grid: Grid, package: Path | None = None) -> str:
    """The key of explorer ``name``'s frames on ``grid``: 16 hexadecimal digits.

    It holds the docstring-free code (:func:`posenc_helpers.lab.fingerprint.code_fingerprint`)
    of the explorer's module and of every module of the package it imports, followed to
    the end (:func:`posenc_helpers.lab.fingerprint.training_modules`, the lab's own rule);
    the files the grid :attr:`Grid.reads` (code by its syntax, data by its bytes); the
    grid; the code that draws and encodes a frame; the WebP settings; and the versions of
    matplotlib, NumPy and Pillow. A docstring, a comment or a module the explorer does not
    import leaves it unchanged.
    """
    import matplotlib
    import numpy
    import PIL

    fingerprint = _fingerprint()
    root = Path(package or PACKAGE or fingerprint.PACKAGE).resolve()
    modules = fingerprint.training_modules([explorer_module(name, root)], package=root)
    reads = {}
    for relative in grid.reads:
        path = root / relative
        reads[relative] = (
            fingerprint.code_fingerprint(path.read_text(encoding="utf-8"))
            if path.suffix == ".py"
            else hashlib.sha256(path.read_bytes()).hexdigest()
        )
    key = {
        "explorer": name,
        "grid": repr(dict(grid.values)),
        "code": {
            path.relative_to(root).as_posix(): fingerprint.code_fingerprint(path.read_text(encoding="utf-8"))
            for path in modules
        },
        "reads": reads,
        "drawing": [_code(function, fingerprint) for function in (grid.build, *_DRAWING)],
        "webp": repr(WEBP_OPTIONS),
        "libraries": [matplotlib.__version__, numpy.__version__, PIL.__version__],
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- finding the explorer cell

_CELL_START = re.compile(r'<div class="cell [^"]*\btag_remove-output\b[^"]*">')
_IMPORT = re.compile(r"from posenc_helpers\.widgets import (\w+Explorer)\b")


def _div_end(text: str, start: int) -> int:
    """The index just after the ``</div>`` that closes the ``<div`` opening at ``start``."""
    depth = 0
    for match in re.compile(r"<div\b|</div>").finditer(text, start):
        depth += 1 if match.group() == "<div" else -1
        if depth == 0:
            return match.end()
    raise ValueError("unclosed <div>")


def find_explorer_cell(text: str) -> tuple[str, int] | None:
    """``(explorer class name, end of its cell)`` for the page's explorer cell, or None."""
    for match in _CELL_START.finditer(text):
        end = _div_end(text, match.start())
        code = html.unescape(re.sub(r"<[^>]+>", "", text[match.start() : end]))
        found = _IMPORT.search(code)
        if found:
            return found.group(1), end
    return None


# --------------------------------------------------------------------------- steps


def _draw(name: str, cache: str) -> None:
    """Draw explorer ``name`` on its grid into the folder ``cache`` (in a worker process).

    Drawn into a folder of this process, then renamed: two builds at once (the book and
    the student edition) never see a half-written cache.
    """
    folder = Path(cache)
    drawing = folder.with_name(f"{folder.name}.{os.getpid()}")
    shutil.rmtree(drawing, ignore_errors=True)
    manifest = render_frames(name, GRIDS[name], drawing)
    (drawing / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    try:
        drawing.rename(folder)
    except OSError:  # the other build was first: its frames are the same
        shutil.rmtree(drawing, ignore_errors=True)


def _pool_context() -> Any:
    """How the drawing processes start: forked where that is safe (they start with this
    process's modules, the grids included), spawned where JAX is loaded (its threads make a
    fork unsafe, and it says so; the site build never loads it, a test process may)."""
    fork = "fork" in multiprocessing.get_all_start_methods() and "jax" not in sys.modules
    return multiprocessing.get_context("fork" if fork else "spawn")


def draw_missing(todo: Mapping[str, Path]) -> None:
    """Draw each ``{explorer: cache folder}`` of ``todo``, the largest grids first, on :data:`WORKERS` processes."""
    order = sorted(todo, key=lambda name: -len(GRIDS[name].settings))
    workers = min(WORKERS, len(order))
    if workers <= 1:
        for name in order:
            _draw(name, str(todo[name]))
        return
    # fork: the workers start with this process's modules (and GRIDS) already imported.
    context = _pool_context()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        for done in [pool.submit(_draw, name, str(todo[name])) for name in order]:
            done.result()


#: The frames being drawn while Sphinx reads and writes the pages (see :func:`start_drawing`).
_EARLY: list[Future[None]] = []
#: ``{page stem: (explorer, cache folder)}`` as :func:`start_drawing` keyed them this build
#: (the code cannot change under a build, so :func:`render_explorer_frames` reuses the keys).
_KEYED: dict[str, tuple[str, Path]] = {}


def notebook_explorers(notebooks: Sequence[Path]) -> dict[str, str]:
    """``{page stem: explorer class}`` of every chapter notebook whose cells import an explorer."""
    found = {}
    for path in notebooks:
        for cell in json.loads(Path(path).read_text(encoding="utf-8"))["cells"]:
            match = _IMPORT.search("".join(cell["source"])) if cell["cell_type"] == "code" else None
            if match and match.group(1) in GRIDS:
                found[Path(path).stem] = match.group(1)
                break
    return found


def start_drawing(app: Any) -> None:
    """``builder-inited``: draw the frames no cache holds yet, on one worker process, while
    Sphinx reads and writes the pages on the other core; :func:`render_explorer_frames`
    waits for them at the end (and draws whatever is still missing)."""
    stems = notebook_explorers(chapter_notebooks(Path(app.srcdir) / "notebooks"))
    _KEYED.clear()
    _KEYED.update({stem: (name, CACHE / f"{stem}-{grid_digest(name, GRIDS[name])}") for stem, name in stems.items()})
    todo = {name: cache for name, cache in _KEYED.values() if not (cache / "manifest.json").is_file()}
    if not todo or WORKERS < 2:
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    pool = ProcessPoolExecutor(1, mp_context=_pool_context())
    order = sorted(todo, key=lambda name: -len(GRIDS[name].settings))
    _EARLY.extend(pool.submit(_draw, name, str(todo[name])) for name in order)
    pool.shutdown(wait=False)


def _wait_for_early_drawing() -> None:
    while _EARLY:
        _EARLY.pop().result()


def render_explorer_frames(site: Site) -> None:
    """Site step: every chapter page's explorer rendered on its grid (cached per grid, see :data:`CACHE`)."""
    out = site.static / "explorers"
    found: dict[Path, tuple[str, Path]] = {}
    for path, text in site.pages.items():
        cell = find_explorer_cell(text) if path.parent.name == "notebooks" else None
        if cell is None:
            continue
        name = cell[0]
        grid = GRIDS.get(name)
        if grid is None:
            site.notes.append(
                f"explorer {name} on {path.name} has no web grid (GRIDS in tools/site/explorer_grids.py): static only"
            )
            continue
        keyed = _KEYED.pop(path.stem, None)
        found[path] = keyed if keyed and keyed[0] == name else (name, CACHE / f"{path.stem}-{grid_digest(name, grid)}")
    _KEYED.clear()
    early = len(_EARLY)
    _wait_for_early_drawing()
    todo = {name: cache for name, cache in found.values() if not (cache / "manifest.json").is_file()}
    draw_missing(todo)
    todo_count = early + len(todo)
    chapters: dict[str, dict[str, Any]] = {}
    for path, (_, cache) in found.items():
        stem = path.stem
        for stale in CACHE.glob(f"{stem}-*"):  # frames of older code or another grid
            if stale != cache and "." not in stale.name:
                shutil.rmtree(stale, ignore_errors=True)
        target = out / stem
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(cache, target)
        manifest = json.loads((cache / "manifest.json").read_text(encoding="utf-8"))
        total = sum((target / frame["src"]).stat().st_size for frame in manifest["frames"].values())
        if total > FRAME_BUDGET_BYTES:
            raise ValueError(f"{stem}: the explorer's frames take {total:,} bytes, over {FRAME_BUDGET_BYTES:,}")
        chapters[path.name] = manifest | {"folder": stem, "bytes": total}
    site.explorers = chapters
    if chapters:
        site.notes.append(
            f"explorers: {sum(len(m['frames']) for m in chapters.values())} frames on {len(chapters)} pages"
            f" ({todo_count} drawn, {len(chapters) - todo_count} from the cache)"
        )
