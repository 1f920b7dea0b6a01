"""tools.site.explorers: every chapter's explorer on the website, frames drawn by its own Python.

The browser suite (tests/browser/test_explorers.py) drives the players on the built
site; these tests check the parts on small inputs worked out by hand, and that every
explorer of the book has a grid built the way its chapter builds it.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from posenc_helpers import widgets
from tools.chapters import chapter_notebooks
from tools.site import explorer_player, explorers
from tools.site.pipeline import Page, Site

REPO = Path(__file__).resolve().parents[2]

# The HTML myst-nb writes for a code cell tagged remove-output (input shown, output dropped).
CELL = (
    '<div class="cell tag_nbval-ignore-output tag_remove-output docutils container">\n'
    '<div class="cell_input docutils container">\n'
    '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span></span>'
    '<span class="kn">from</span><span class="w"> </span><span class="nn">posenc_helpers.widgets</span>'
    '<span class="w"> </span><span class="kn">import</span> <span class="n">SinusoidalExplorer</span>\n'
    "</pre></div>\n</div>\n</div>\n</div>"
)
PAGE = (
    "<html><head><title>t</title></head><body>"
    '<div class="cell tag_remove-output docutils container"><div>plain = 1</div></div>'
    f"{CELL}<p>after</p></body></html>"
)

# A manifest as render_frames writes it, worked out by hand: one control of two values.
MANIFEST = {
    "explorer": "SinusoidalExplorer",
    "folder": "04_sine_cosine_pairs",
    "width": 768,
    "height": 272,
    "controls": [{"name": "base", "label": "base", "values": [10.0, 100.0], "labels": ["10", "100"], "start": 1}],
    "frames": {
        "0": {"src": "000.webp", "setting": {"base": 10.0}, "status": "<b>a</b>", "alt": "base 10: a"},
        "1": {"src": "001.webp", "setting": {"base": 100.0}, "status": "b &lt; c</script>", "alt": 'base "100"'},
    },
}


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def test_every_explorer_of_the_book_has_a_grid():
    names = {name for name in widgets.__all__ if name != "FigureExplorer"}
    assert set(explorers.GRIDS) == names, (
        f"explorers without a web grid: {sorted(names - set(explorers.GRIDS)) or 'none'}, grids of no explorer "
        f"of posenc_helpers.widgets: {sorted(set(explorers.GRIDS) - names) or 'none'}: give each explorer a "
        "Grid in GRIDS of tools/site/explorer_grids.py, keyed by its class name (CONTRIBUTING.md, 'Adding a "
        "chapter'), then rerun `.venv/bin/python -m pytest -p no:nbval tests/tooling/test_site_explorers.py`"
    )


def test_each_grid_builds_its_explorer_as_the_chapter_does():
    """The grid's builder was checked against the notebook's explorer (same first frame, same
    status); the notebook's line is pinned here so that a change to it asks for that check again."""
    cells = {}
    for path in chapter_notebooks():
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and "remove-output" in cell["metadata"].get("tags", []):
                found = re.search(r"from posenc_helpers\.widgets import (\w+Explorer)", source)
                if found:
                    cells[found.group(1)] = (path.name, source)
    assert set(cells) == set(explorers.GRIDS), (
        f"explorer cells without a web grid: {sorted(set(cells) - set(explorers.GRIDS)) or 'none'}, grids "
        f"without an explorer cell: {sorted(set(explorers.GRIDS) - set(cells)) or 'none'} (the cell tagged "
        "remove-output that imports it from posenc_helpers.widgets): add or remove its Grid in GRIDS of "
        "tools/site/explorer_grids.py, then rerun `.venv/bin/python -m pytest -p no:nbval "
        "tests/tooling/test_site_explorers.py`"
    )
    for name, grid in explorers.GRIDS.items():
        notebook, source = cells[name]
        assert grid.cell in source.splitlines(), (
            f"{notebook}: the explorer cell no longer has {grid.cell!r}: check that GRIDS[{name!r}].build in "
            "tools/site/explorer_grids.py builds the explorer as the new line does, then copy the line into "
            "its `cell`"
        )


def test_a_grid_is_every_combination_of_its_values_the_last_varying_fastest():
    grid = explorers.Grid({"a": (1, 2), "b": ("x", "y", "z")}, "why", "cell", lambda: None)
    assert grid.settings == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]


def test_every_grid_says_why_and_stays_within_the_frame_count_its_budget_allows():
    for name, grid in explorers.GRIDS.items():
        assert len(grid.why) > 40, name
        # frames are 5-40 kB as WebP: more than 80 would pass 1.5 MB at 19 kB each (the build
        # itself fails on a chapter over the budget)
        assert 2 <= len(grid.settings) <= 80, name


def test_the_explorer_cell_is_found_by_its_tag_and_its_import_and_ends_with_its_div():
    name, end = explorers.find_explorer_cell(PAGE)
    assert name == "SinusoidalExplorer"
    assert PAGE[:end].endswith(CELL)
    assert PAGE[end:] == "<p>after</p></body></html>"
    assert explorers.find_explorer_cell(PAGE.replace("tag_remove-output", "tag_hide-input")) is None


def test_control_labels_are_the_widgets_own_labels_else_the_value():
    explorer = widgets.SinusoidalExplorer()
    assert explorers.control_labels(explorer.controls["base"], (10.0, 1e6)) == ["10", "1,000,000"]
    toggle = widgets.RotaryFractionExplorer().controls["style"]  # options without labels
    assert explorers.control_labels(toggle, ("proportional",)) == ["proportional"]
    slider = widgets.UnitCircleExplorer().controls["t"]
    assert explorers.control_labels(slider, (2.5, 40.0, 3)) == ["2.5", "40", "3"]


def test_frames_are_lossless_and_in_the_smaller_format():
    rng = np.random.default_rng(0)
    noisy = rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8)  # WebP gains nothing on noise
    flat = np.full((40, 60, 3), 255, dtype=np.uint8)
    flat[10:20, 5:50] = (0, 114, 178)
    for pixels in (noisy, flat):
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="png", compress_level=1)
        suffix, data = explorers.encode_frame(buffer.getvalue())
        assert suffix in (".webp", ".png")
        assert len(data) <= len(buffer.getvalue())
        np.testing.assert_array_equal(_pixels(data), pixels)
    assert explorers.encode_frame(_png(flat))[0] == ".webp"


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="png", compress_level=1)
    return buffer.getvalue()


def test_rendered_frames_are_what_a_fresh_explorer_draws_for_each_setting(tmp_path):
    grid = explorers.GRIDS["RotaryFractionExplorer"]
    manifest = explorers.render_frames("RotaryFractionExplorer", grid, tmp_path)
    assert [c["name"] for c in manifest["controls"]] == ["fraction", "style"]
    assert manifest["controls"][0]["labels"] == ["0.125", "0.25", "0.5", "0.75", "1"]
    assert [c["start"] for c in manifest["controls"]] == [1, 0]  # the chapter's 0.25, partial
    assert len(manifest["frames"]) == 10
    # index "3,1" is fraction 0.75 (fourth value), proportional (second)
    frame = manifest["frames"]["3,1"]
    assert frame["setting"] == {"fraction": 0.75, "style": "proportional"}
    fresh = widgets.RotaryFractionExplorer(head_dim=128)
    fresh.set(fraction=0.75, style="proportional")
    np.testing.assert_array_equal(_pixels((tmp_path / frame["src"]).read_bytes()), _pixels(fresh.image.value))
    assert frame["status"] == fresh.status.value
    assert frame["alt"].startswith("The explorer's figure at fraction p 0.75, scheme proportional: ")
    assert "<" not in frame["alt"]
    assert (manifest["width"], manifest["height"]) == (576, 272)  # 7.2 x 3.4 inches at 80 dpi


def test_a_grid_must_name_real_controls_and_include_the_chapters_setting(tmp_path):
    build = widgets.RotaryFractionExplorer
    with pytest.raises(ValueError, match="does not have: \\['width'\\]"):
        explorers.render_frames("RotaryFractionExplorer", explorers.Grid({"width": (1,)}, "", "", build), tmp_path)
    with pytest.raises(ValueError, match="fraction must include the chapter's value 0.25"):
        explorers.render_frames("RotaryFractionExplorer", explorers.Grid({"fraction": (0.5,)}, "", "", build), tmp_path)
    with pytest.raises(TypeError, match="built a RotaryFractionExplorer"):
        explorers.render_frames("AlibiExplorer", explorers.Grid({}, "", "", build), tmp_path)


def test_the_player_has_a_labelled_range_per_control_a_live_status_and_a_lazy_sized_frame():
    player = explorer_player.player_html(MANIFEST, "../_static/explorers/04_sine_cosine_pairs/")
    assert '<label for="explorer-04_sine_cosine_pairs-base">base</label>' in player
    assert (
        '<input type="range" id="explorer-04_sine_cosine_pairs-base" min="0" max="1" step="1" value="1" '
        'aria-valuetext="100">'
    ) in player
    # the readout shows the start's label over every label, hidden, so it keeps the longest one's size
    assert (
        '<span class="posenc-player-value"><output for="explorer-04_sine_cosine_pairs-base">100</output>'
        '<span class="posenc-player-sizer" aria-hidden="true">10</span>'
        '<span class="posenc-player-sizer" aria-hidden="true">100</span></span>'
    ) in player
    # the starting frame (index 1) is shown: its file, size, alt text and status; it links to
    # itself at full size, as every figure of the site does
    assert (
        '<a class="figure-enlarge posenc-player-enlarge" href="../_static/explorers/04_sine_cosine_pairs/001.webp" '
        'title="Open this frame at full size">'
        '<img class="posenc-player-frame" src="../_static/explorers/04_sine_cosine_pairs/001.webp" '
        'loading="lazy" width="768" height="272" alt="base &quot;100&quot;"></a>'
    ) in player
    # the live status line over every status line of the explorer, each once and hidden,
    # so that the line keeps the tallest one's height
    assert (
        '<div class="posenc-player-status-box"><p class="posenc-player-status" aria-live="polite">b &lt; c</script></p>'
        '<p class="posenc-player-status-sizer" aria-hidden="true"><b>a</b></p>'
        '<p class="posenc-player-status-sizer" aria-hidden="true">b &lt; c</script></p></div>'
    ) in player
    data = re.search(r'<script type="application/json" class="posenc-player-data">(.*?)</script>', player).group(1)
    assert "</" not in data  # a status with </script> cannot end the data early
    assert json.loads(data) == {
        "controls": [{"labels": ["10", "100"]}],
        "frames": {"0": ["000.webp", "<b>a</b>", "base 10: a"], "1": ["001.webp", "b &lt; c</script>", 'base "100"']},
    }


def test_the_player_goes_after_the_explorer_cell_with_its_assets_and_no_script_fallback(tmp_path):
    site = Site(outdir=tmp_path, doctreedir=tmp_path / "doctrees", config=None, pages={})
    page = Page(tmp_path / "notebooks" / "04_sine_cosine_pairs.html", site)
    assert explorer_player.insert_players(PAGE, page) == PAGE  # no frames for this page
    site.explorers = {"04_sine_cosine_pairs.html": MANIFEST}
    text = explorer_player.insert_players(PAGE, page)
    head, body = text.split("</head>")
    assert head.endswith(
        '<link rel="stylesheet" href="../_static/explorer.css">'
        "<noscript><style>.posenc-player{display:none}</style></noscript>"
        '<script defer src="../_static/explorer.js"></script>'
    )
    assert body.index(CELL) + len(CELL) < body.index('<section class="posenc-player"') < body.index("<p>after</p>")
    other = Page(tmp_path / "notebooks" / "05_rotation_proof.html", site)
    assert explorer_player.insert_players(PAGE, other) == PAGE


def test_the_site_step_renders_caches_and_refuses_a_chapter_over_the_budget(tmp_path, monkeypatch):
    outdir = tmp_path / "html"
    page = outdir / "notebooks" / "13_positions_in_2026.html"
    page.parent.mkdir(parents=True)
    cell = CELL.replace("SinusoidalExplorer", "RotaryFractionExplorer")
    site = Site(outdir=outdir, doctreedir=tmp_path / "doctrees", config=None, pages={page: cell})
    small = explorers.Grid({"style": ("partial", "proportional")}, "why", "cell", widgets.RotaryFractionExplorer)
    monkeypatch.setitem(explorers.GRIDS, "RotaryFractionExplorer", small)
    monkeypatch.setattr(explorers, "CACHE", tmp_path / "cache")
    explorers.render_explorer_frames(site)
    assert [p.name.split("-")[0] for p in (tmp_path / "cache").iterdir()] == ["13_positions_in_2026"]
    manifest = site.explorers["13_positions_in_2026.html"]
    frames = sorted(p.name for p in (outdir / "_static" / "explorers" / "13_positions_in_2026").iterdir())
    assert frames == ["000.webp", "001.webp", "manifest.json"]
    assert manifest["bytes"] == sum(
        (page.parent.parent / "_static/explorers/13_positions_in_2026" / f).stat().st_size for f in frames[:2]
    )
    # another grid draws again and leaves only its own frames in the cache
    smaller = explorers.Grid({"style": ("partial",)}, "why", "cell", widgets.RotaryFractionExplorer)
    monkeypatch.setitem(explorers.GRIDS, "RotaryFractionExplorer", smaller)
    explorers.render_explorer_frames(site)
    assert len(site.explorers["13_positions_in_2026.html"]["frames"]) == 1
    assert len(list((tmp_path / "cache").iterdir())) == 1
    monkeypatch.setitem(explorers.GRIDS, "RotaryFractionExplorer", small)
    explorers.render_explorer_frames(site)
    # a second build copies the cached frames instead of drawing them again
    monkeypatch.setattr(explorers, "render_frames", lambda *a: pytest.fail("drawn again"))
    explorers.render_explorer_frames(site)
    monkeypatch.setattr(explorers, "FRAME_BUDGET_BYTES", manifest["bytes"] - 1)
    with pytest.raises(ValueError, match="over"):
        explorers.render_explorer_frames(site)


def _package_copy(tmp_path: Path) -> Path:
    """The package's modules and chapter 11's record, copied to be edited."""
    source = Path(explorers._fingerprint().PACKAGE)
    copy = tmp_path / "posenc_helpers"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.tar.xz", "*.txt"))
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _docstring_edit(path: Path) -> None:
    """A word added to the module's docstring (its first line opens it)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith('"""'), path
    path.write_text('"""Reworded. ' + text[3:], encoding="utf-8")


# Which explorers import which module, read off the widget modules' imports by hand:
# only chapter 08's AlibiExplorer imports alibi.py, only chapter 11's LengthExplorer
# binning.py (and reads the record); mla.py is imported by no explorer; rope.py by five.
@pytest.mark.slow
def test_a_grid_is_keyed_on_the_code_its_explorer_imports_not_on_docstrings_or_other_modules(tmp_path):
    package = _package_copy(tmp_path)

    def keys() -> dict[str, str]:
        return {name: explorers.grid_digest(name, grid, package) for name, grid in explorers.GRIDS.items()}

    def changed(before: dict[str, str]) -> set[str]:
        return {name for name, key in keys().items() if key != before[name]}

    start = keys()
    assert len(set(start.values())) == len(explorers.GRIDS)
    _docstring_edit(package / "mla.py")
    _edit(package / "mla.py", "\nimport", "\nUNUSED_BY_EXPLORERS = 1  # code, in a module no explorer imports\nimport")
    _docstring_edit(package / "rope.py")  # imported by five explorers: a docstring is not code
    assert changed(start) == set()
    _edit(package / "alibi.py", "\nimport", "\nALIBI_EDIT = 1\nimport")
    assert changed(start) == {"AlibiExplorer"}
    start = keys()
    _edit(package / "binning.py", "\nimport", "\nBINNING_EDIT = 1\nimport")
    assert changed(start) == {"LengthExplorer"}
    start = keys()
    record = package / "data" / "train_short_test_long.json"
    record.write_bytes(record.read_bytes() + b"\n")
    assert changed(start) == {"LengthExplorer"}
    other = explorers.Grid({"fraction": (0.25,)}, "", "", explorers.GRIDS["RotaryFractionExplorer"].build)
    assert explorers.grid_digest("RotaryFractionExplorer", other, package) != keys()["RotaryFractionExplorer"]


def test_the_frames_key_needs_no_jax():
    script = (
        "import sys; from tools.site import explorers; "
        "explorers.grid_digest('AlibiExplorer', explorers.GRIDS['AlibiExplorer']); "
        "print(sorted(m for m in ('jax', 'optax', 'posenc_helpers.lab') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_edit_redraws_only_the_explorers_that_import_it(tmp_path, monkeypatch):
    """The site step on a page per explorer: a docstring edit, or an edit of a module no explorer
    imports, keeps every frame; an edit of alibi.py redraws chapter 08's explorer alone."""
    package = _package_copy(tmp_path)
    outdir = tmp_path / "html"
    pages = {}
    for number, name in enumerate(explorers.GRIDS, start=1):
        pages[outdir / "notebooks" / f"{number:02d}_chapter.html"] = CELL.replace("SinusoidalExplorer", name)
    site = Site(outdir=outdir, doctreedir=tmp_path / "doctrees", config=None, pages=pages)
    drawn: list[str] = []

    def draw(name: str, cache: str) -> None:  # what _draw leaves, without drawing
        drawn.append(name)
        Path(cache).mkdir(parents=True)
        manifest = {"explorer": name, "controls": [], "frames": {}, "width": 1, "height": 1}
        (Path(cache) / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    monkeypatch.setattr(explorers, "_draw", draw)
    monkeypatch.setattr(explorers, "WORKERS", 1)
    monkeypatch.setattr(explorers, "PACKAGE", package)
    monkeypatch.setattr(explorers, "CACHE", tmp_path / "cache")
    explorers.render_explorer_frames(site)
    assert sorted(drawn) == sorted(explorers.GRIDS)
    assert len(site.explorers) == len(explorers.GRIDS)
    drawn.clear()
    _docstring_edit(package / "mla.py")
    _docstring_edit(package / "sinusoidal.py")  # imported by eight explorers
    _edit(package / "mla.py", "\nimport", "\nUNUSED_BY_EXPLORERS = 1\nimport")
    explorers.render_explorer_frames(site)
    assert drawn == []
    _edit(package / "alibi.py", "\nimport", "\nALIBI_EDIT = 1\nimport")
    explorers.render_explorer_frames(site)
    assert drawn == ["AlibiExplorer"]
    assert len(list((tmp_path / "cache").iterdir())) == len(explorers.GRIDS)  # the old frames of 08 gone


@pytest.mark.slow
def test_missing_grids_are_drawn_by_several_processes_as_by_one(tmp_path):
    """Run in a fresh process: the drawing processes are forked from a process without JAX,
    as in the site build (a test process that imported JAX spawns them instead, and a
    spawned worker would not see the small grids set here)."""
    script = f"""
import json, sys
from pathlib import Path
from posenc_helpers import widgets
from tools.site import explorers
small = {{
    "RotaryFractionExplorer": explorers.Grid({{"style": ("partial",)}}, "", "", widgets.RotaryFractionExplorer),
    "BugSymptomExplorer": explorers.Grid({{"position": (1024,)}}, "", "", widgets.BugSymptomExplorer),
}}
explorers.GRIDS.update(small)
assert "jax" not in sys.modules
manifests = {{}}
for workers in (1, 2):
    explorers.WORKERS = workers
    todo = {{name: Path({str(tmp_path)!r}) / str(workers) / name for name in small}}
    explorers.draw_missing(todo)
    manifests[workers] = {{name: json.loads((todo[name] / "manifest.json").read_text("utf-8")) for name in small}}
    assert sorted(p.name for p in (Path({str(tmp_path)!r}) / str(workers)).iterdir()) == sorted(small)
print(json.dumps(manifests))
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    manifests = {int(k): v for k, v in json.loads(result.stdout.strip().splitlines()[-1]).items()}
    assert manifests[1] == manifests[2]
    assert [len(manifests[2][name]["frames"]) for name in ("RotaryFractionExplorer", "BugSymptomExplorer")] == [1, 1]
