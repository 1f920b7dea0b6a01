"""Every chapter's explorer on the built site, without a kernel (issue 28).

Each chapter page carries a player (tools/site/explorers.py) whose frames the explorer's
own Python drew at build time. Here Chromium drives each one as a reader would: it
presses an arrow key on a labelled range input and checks that the picture becomes the
frame Python draws for that setting (drawn again here, by a fresh explorer, and compared
pixel for pixel), that the status line changes with it, that a frame change shows within
100 ms once its file has arrived, that axe-core finds nothing in light and dark mode
after the change, and that nothing is requested from another host. The frames of each
chapter stay within 1.5 MB; without scripts the player is hidden and the static companion
figure shows; from ``file://`` the player works as from a server.

The closing line of the suite gives, per chapter, the frames, their bytes and the
median and slowest of five frame changes.
"""

from __future__ import annotations

import io
import json
import os
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from _browser import REQUIRE_BROWSER, why_no_browser
from PIL import Image

if REQUIRE_BROWSER and why_no_browser():
    pytest.fail(why_no_browser(), pytrace=False)

REPO = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("POSENC_SITE") or REPO / "_build" / "html").resolve()  # as conftest.py reads it
sys.path.insert(0, str(REPO))
from test_accessibility import _violations, axe_script  # noqa: E402, F401 (axe-core and its fixture)

from tools.chapters import chapter_pages  # noqa: E402
from tools.site import explorers  # noqa: E402

FRAME_BUDGET_BYTES = 1_500_000
LATENCY_BUDGET_MS = 100.0


def _chapters() -> list[str]:
    """Chapter pages with an explorer cell (each must have a player: see the first test)."""
    pages = chapter_pages(SITE) if SITE.is_dir() else []
    found = [p.relative_to(SITE).as_posix() for p in pages if explorers.find_explorer_cell(p.read_text("utf-8"))]
    return found or ["notebooks/04_sine_cosine_pairs.html"]


CHAPTERS = _chapters()


def _manifest(site_dir: Path, chapter: str) -> dict:
    return json.loads((site_dir / "_static" / "explorers" / Path(chapter).stem / "manifest.json").read_text("utf-8"))


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


# Wait for every preloaded frame, then time changes: from the input event to the first
# animation frame after the new picture is decoded (what a reader sees).
_LATENCY_JS = """
async ([selector, steps]) => {
  const player = document.querySelector(selector);
  const input = player.querySelector('input[type="range"]');
  const image = player.querySelector("img.posenc-player-frame");
  input.focus();
  await Promise.all((player.__posencFrames || []).map((f) => f.decode().catch(() => null)));
  const times = [];
  for (const value of steps) {
    const t0 = performance.now();
    input.value = String(value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    await image.decode();
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    times.push(performance.now() - t0);
  }
  return times;
}
"""

_STATE_JS = """
(selector) => {
  const player = document.querySelector(selector);
  const image = player.querySelector("img.posenc-player-frame");
  const status = player.querySelector(".posenc-player-status");
  return {
    frame: player.dataset.frame, src: image.currentSrc || image.src, alt: image.alt,
    link: image.closest("a[href]") && image.closest("a[href]").href,
    natural: [image.naturalWidth, image.naturalHeight], complete: image.complete,
    status: status.innerHTML, statusText: status.textContent,
    display: getComputedStyle(player).display,
    transition: [getComputedStyle(image).transitionDuration, getComputedStyle(image).animationName],
    labelled: [...player.querySelectorAll('input[type="range"]')].map(
      (input) => !!(input.labels && input.labels.length && input.labels[0].textContent.trim())),
  };
}
"""

SELECTOR = "section.posenc-player"


def _move(page, manifest: dict) -> tuple[str, str]:
    """Press an arrow key on the first control whose move changes the status; return (old, new) keys."""
    start = ",".join(str(c["start"]) for c in manifest["controls"])
    for number, control in enumerate(manifest["controls"]):
        index = control["start"]
        step, key = (1, "ArrowRight") if index + 1 < len(control["values"]) else (-1, "ArrowLeft")
        target = start.split(",")
        target[number] = str(index + step)
        target_key = ",".join(target)
        if manifest["frames"][target_key]["status"] != manifest["frames"][start]["status"]:
            page.locator(f"{SELECTOR} input[type=range]").nth(number).focus()
            page.keyboard.press(key)
            return start, target_key
    raise AssertionError("no single step of any control changes the status line")


def test_every_chapter_with_an_explorer_has_a_player(site_dir):
    missing = []
    for chapter in CHAPTERS:
        text = (site_dir / chapter).read_text("utf-8")
        if text.count('<section class="posenc-player"') != 1:
            missing.append(chapter)
    assert not missing, f"chapters whose explorer has no web player: {missing}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_explorer_plays_the_frames_python_draws(
    chapter,
    site_dir,
    server,
    new_context,
    visitor,
    axe_script,  # noqa: F811 (the fixture imported above)
    stats,
):
    manifest = _manifest(site_dir, chapter)
    folder = site_dir / "_static" / "explorers" / Path(chapter).stem
    total = sum((folder / frame["src"]).stat().st_size for frame in manifest["frames"].values())
    assert total <= FRAME_BUDGET_BYTES, f"{chapter}: frames take {total:,} bytes"

    page, visit = visitor.open(new_context(None), chapter)
    before = page.evaluate(_STATE_JS, SELECTOR)
    assert before["display"] != "none"
    assert all(before["labelled"]), f"{chapter}: a range input without a label"
    assert before["transition"] == ["0s", "none"]  # nothing animates
    start, target = _move(page, manifest)
    assert before["frame"] == start
    page.wait_for_function(
        "([s, key]) => { const p = document.querySelector(s); const i = p.querySelector('img.posenc-player-frame');"
        " return p.dataset.frame === key && i.complete && i.naturalWidth > 0; }",
        arg=[SELECTOR, target],
    )
    after = page.evaluate(_STATE_JS, SELECTOR)
    frame = manifest["frames"][target]
    assert after["src"].endswith(f"/{frame['src']}")
    assert after["link"] == after["src"], "the full-size link does not follow the frame shown"
    assert after["natural"] == [manifest["width"], manifest["height"]]
    assert after["status"] == frame["status"] != before["status"]
    assert after["alt"] == frame["alt"] != before["alt"]

    # The picture the browser shows is the one a fresh explorer draws for that setting.
    served = urllib.request.urlopen(after["src"]).read()  # noqa: S310 (the suite's local server)
    explorer = explorers.GRIDS[manifest["explorer"]].build()
    explorer.set(**{name: tuple(v) if isinstance(v, list) else v for name, v in frame["setting"].items()})
    np.testing.assert_array_equal(_pixels(served), _pixels(explorer.image.value))
    assert "".join(after["statusText"].split()) == "".join(explorers._plain(explorer.status.value).split())

    # A change shows within 100 ms once its frame has arrived (all frames were requested
    # on the first interaction): the median of five changes across the first control's
    # range (on a loaded two-core machine a single change can wait for another process;
    # the slowest is reported with it).
    values = len(manifest["controls"][0]["values"])
    steps = [0, values - 1, values // 2, 1 if values > 1 else 0, manifest["controls"][0]["start"]]
    times = sorted(page.evaluate(_LATENCY_JS, [SELECTOR, steps]))
    assert times[2] <= LATENCY_BUDGET_MS, f"{chapter}: frame changes took {times} ms"

    problems = [f"light mode, after a change: {v}" for v in _violations(page, axe_script)]
    assert not visit.problems, "\n".join(visit.problems)  # no request left the site, nothing failed
    page.close()

    page, visit = visitor.open(new_context("dark"), chapter)
    _move(page, manifest)
    problems += [f"dark mode, after a change: {v}" for v in _violations(page, axe_script)]
    assert not visit.problems, "\n".join(visit.problems)
    page.close()
    assert not problems, "\n".join(problems)
    stats.setdefault("explorers", []).append(
        f"{Path(chapter).stem[:2]}: {len(manifest['frames'])} frames, {total / 1000:.0f} kB, "
        f"median {times[2]:.0f} ms (slowest {times[-1]:.0f})"
    )


# Every control's label, slider and readout and the frame, as page coordinates, read at the
# start and after each value of each control in turn (the others at their start); what
# moved by more than half a pixel, and at which setting.
_PLACES_JS = """
async (selector) => {
  const player = document.querySelector(selector);
  const inputs = [...player.querySelectorAll('input[type="range"]')];
  const parts = [
    ...[...player.querySelectorAll(".posenc-player-control")].flatMap((control, n) =>
      [...control.children].map((child, k) => [`control ${n + 1} ${child.tagName.toLowerCase()}`, child])),
    ["frame", player.querySelector("img.posenc-player-frame")],
    // The prose below: the first paragraph after the player, outside it.
    ["first paragraph after the explorer", [...document.querySelectorAll("article p")].find(
      (p) => !player.contains(p) && (player.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING))],
  ];
  const read = () => parts.map(([, el]) => {
    const r = el.getBoundingClientRect();
    return [r.left + scrollX, r.top + scrollY, r.width, r.height];
  });
  const start = read();
  const moves = [];
  for (const [n, input] of inputs.entries()) {
    const first = input.value;
    for (let value = 0; value <= Number(input.max); value++) {
      input.value = String(value);
      input.dispatchEvent(new Event("input", { bubbles: true }));
      await new Promise((resolve) => requestAnimationFrame(() => resolve()));
      read().forEach((box, k) => {
        // Where each part is; the frame's size too (a readout may fill its box differently).
        const kept = parts[k][0] === "frame" ? 4 : 2;
        const moved = Math.max(...box.slice(0, kept).map((v, i) => Math.abs(v - start[k][i])));
        if (moved > 0.5) {
          const label = player.querySelector(`output[for="${input.id}"]`).textContent;
          moves.push(`${parts[k][0]} moved by ${moved.toFixed(0)} px at control ${n + 1} = "${label}"`);
        }
      });
    }
    input.value = first;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }
  return moves;
}
"""


@pytest.mark.parametrize("width", [1366, 390], ids=["desktop", "phone"])
def test_controls_and_frame_keep_their_place_whatever_the_value(width, new_context, visitor):
    """Moving any slider across its range moves no control, not the frame, and not the prose below
    (issue 38, item 6).

    Each readout shows the current value's label; before the readouts kept the size of
    their longest label, a longer label pushed the next control sideways or onto another
    row and the frame down (measured on the site built before: at 1366 px chapter 14's
    second slider 384 px, onto the next row, and its frame 30 px; chapters 09, 11 and 12's
    second slider 9-27 px sideways; at 390 px the frame of chapters 09, 11, 12 and 13 by
    34-35 px). The status line under the frame keeps the height of the explorer's tallest
    status line; before, it grew and shrank with its text and moved the first paragraph
    after the explorer.
    """
    problems = []
    context = new_context("light")
    for chapter in CHAPTERS:
        page, visit = visitor.open(context, chapter, wait_for_images=False)
        try:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_function(f"() => document.querySelector('{SELECTOR}.posenc-player-ready')")
            problems += [f"{chapter}: {move}" for move in page.evaluate(_PLACES_JS, SELECTOR)]
            problems += [f"{chapter}: {problem}" for problem in visit.problems]
        finally:
            page.close()
    assert not problems, f"at {width} px:\n  " + "\n  ".join(problems)


def test_without_scripts_the_static_companion_shows_instead(browser, server):
    chapter = CHAPTERS[0]
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(server.url(chapter), wait_until="load")
        assert page.evaluate(f"() => getComputedStyle(document.querySelector('{SELECTOR}')).display") == "none"
        companion = page.locator("figure img[src*='_images/']").first
        assert companion.is_visible()
    finally:
        context.close()


def test_the_explorer_works_from_a_file_url(browser, site_dir):
    chapter = CHAPTERS[0]
    manifest = _manifest(site_dir, chapter)
    context = browser.new_context(reduced_motion="reduce")
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
        page.goto((site_dir / chapter).as_uri(), wait_until="load")
        _, target = _move(page, manifest)
        page.wait_for_function(
            "([s, key]) => { const p = document.querySelector(s); const i = p.querySelector('img.posenc-player-frame');"
            " return p.dataset.frame === key && i.complete && i.naturalWidth > 0; }",
            arg=[SELECTOR, target],
        )
        state = page.evaluate(_STATE_JS, SELECTOR)
        assert urllib.parse.urlsplit(state["src"]).scheme == "file"
        assert state["status"] == manifest["frames"][target]["status"]
        assert not [e for e in errors if "posenc-player" in e or "/explorers/" in e or "explorer.js" in e], errors
    finally:
        context.close()
