"""Draw the book's logo and favicon: ``python tools/logo.py`` (then commit the files).

The picture is the book's central fact: a frequency pair of PE(t) is a point on
the unit circle, and moving φ tokens on rotates it by ω φ (chapter 05). Written
files, deterministic (no dates, fixed SVG ids):

- ``book/images/logo.svg``: the sidebar logo (``logo`` in ``_config.yml``);
- ``book/site_root/favicon.ico``: 16, 32 and 48 px, declared on every page
  (``html.favicon``) and copied to the root of the site with everything in
  ``book/site_root`` (``html_extra_path``), where browsers and other tools look
  for it by themselves.

The browser suite fails on a page without a favicon or a site without ``/favicon.ico``.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402
from PIL import Image  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "images"
SITE_ROOT = ROOT / "book" / "site_root"
BLUE, ORANGE, GREY = "#0072B2", "#E69F00", "#7F7F7F"  # Okabe-Ito, readable on light and dark
START, TURN = np.deg2rad(20.0), np.deg2rad(100.0)  # the angle of PE(t) and the rotation ω φ


def draw(size_inches: float, line: float, *, arc: bool = True) -> plt.Figure:
    """The logo on a transparent square figure; ``line`` scales every stroke.

    ``arc=False`` leaves out the rotation arrow (too fine for a 16-pixel icon).
    """
    fig = plt.figure(figsize=(size_inches, size_inches))
    ax = fig.add_axes((0, 0, 1, 1))
    reach = 1.25 if arc else 1.45  # room for the thick strokes of the icon
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    ax.axis("off")
    circle = np.linspace(0, 2 * np.pi, 241)
    ax.plot(np.cos(circle), np.sin(circle), color=GREY, linewidth=1.2 * line)
    for angle, colour in ((START, BLUE), (START + TURN, ORANGE)):
        ax.plot([0, np.cos(angle)], [0, np.sin(angle)], color=colour, linewidth=2.2 * line, solid_capstyle="round")
        ax.plot([np.cos(angle)], [np.sin(angle)], "o", color=colour, markersize=min(5.5 * line, 22.0))
    if not arc:
        return fig
    along = np.linspace(START + 0.18, START + TURN - 0.22, 60)
    ax.plot(0.55 * np.cos(along), 0.55 * np.sin(along), color=ORANGE, linewidth=1.4 * line)
    tip = START + TURN - 0.2
    ax.add_patch(
        FancyArrowPatch(
            (0.55 * np.cos(tip - 0.05), 0.55 * np.sin(tip - 0.05)),
            (0.55 * np.cos(tip), 0.55 * np.sin(tip)),
            arrowstyle="-|>",
            mutation_scale=9 * line,
            color=ORANGE,
            linewidth=0,
        )
    )
    return fig


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    plt.rcParams["svg.hashsalt"] = "posenc-logo"  # fixed ids: the same bytes on every run
    fig = draw(1.6, 1.0)
    fig.savefig(OUT / "logo.svg", transparent=True, metadata={"Date": None, "Creator": None})
    plt.close(fig)

    fig = draw(2.56, 8.0, arc=False)  # 256 px, thick strokes: the favicon is tiny
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, transparent=True, metadata={"Software": None})
    plt.close(fig)
    icon = Image.open(buffer).convert("RGBA")
    SITE_ROOT.mkdir(parents=True, exist_ok=True)
    icon.save(SITE_ROOT / "favicon.ico", sizes=[(16, 16), (32, 32), (48, 48)])
    print(f"wrote {OUT / 'logo.svg'} and {SITE_ROOT / 'favicon.ico'}")


if __name__ == "__main__":
    main()
