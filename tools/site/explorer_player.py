"""The web player of an explorer: its frames, its controls and their readouts, put after the explorer's cell.

The frames are drawn at build time (:mod:`tools.site.explorers`); the player is plain HTML
that ``static/explorer.js`` drives.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from .explorers import find_explorer_cell
from .pipeline import Page

__all__ = ["player_html", "insert_players", "NOSCRIPT"]


def player_html(manifest: Mapping[str, Any], base: str) -> str:
    """The player for ``manifest`` whose frames are under ``base`` (a relative URL ending in ``/``)."""
    controls = manifest["controls"]
    start = ",".join(str(c["start"]) for c in controls)
    first = manifest["frames"][start]
    stem = manifest["folder"]
    rows = []
    for control in controls:
        ident = f"explorer-{stem}-{control['name']}"
        label = control["labels"][control["start"]]
        # Every value label, stacked invisibly in the readout's one grid cell: the readout is
        # as wide and as tall as its longest label, so no label moves the controls or the frame.
        sizers = "".join(
            f'<span class="posenc-player-sizer" aria-hidden="true">{html.escape(text)}</span>'
            for text in dict.fromkeys(control["labels"])
        )
        rows.append(
            f'<div class="posenc-player-control"><label for="{ident}">{html.escape(control["label"])}</label>'
            f'<input type="range" id="{ident}" min="0" max="{len(control["values"]) - 1}" step="1" '
            f'value="{control["start"]}" aria-valuetext="{html.escape(label)}">'
            f'<span class="posenc-player-value"><output for="{ident}">{html.escape(label)}</output>{sizers}</span>'
            "</div>"
        )
    data = json.dumps(
        {"controls": [{"labels": c["labels"]} for c in controls], "frames": _page_frames(manifest)},
        separators=(",", ":"),
    ).replace("</", "<\\/")
    return (
        f'<section class="posenc-player" aria-label="Explorer (web version)" data-base="{html.escape(base)}" '
        f'data-frame="{start}">'
        '<p class="posenc-player-note">Web version of the explorer: each frame was drawn by the '
        "explorer's own Python when the book was built, for the settings below. Move a slider (or "
        "focus it and use the arrow keys); the notebook accepts any setting.</p>"
        f'<div class="posenc-player-controls">{"".join(rows)}</div>'
        # The frame links to itself at full size (explorer.js keeps the link on the frame
        # shown), as images.point_at_figures links every figure: on a phone the frame is
        # drawn at a third of its size or less, and layout.css says so under it.
        f'<a class="figure-enlarge posenc-player-enlarge" href="{html.escape(base + first["src"])}" '
        'title="Open this frame at full size">'
        f'<img class="posenc-player-frame" src="{html.escape(base + first["src"])}" loading="lazy" '
        f'width="{manifest["width"]}" height="{manifest["height"]}" alt="{html.escape(first["alt"])}"></a>'
        # Every status line of the explorer, hidden, in the live line's one grid cell (as the
        # readouts' labels): the line keeps the height of the tallest, so no setting moves
        # the prose below the explorer.
        '<div class="posenc-player-status-box">'
        f'<p class="posenc-player-status" aria-live="polite">{first["status"]}</p>'
        + "".join(
            f'<p class="posenc-player-status-sizer" aria-hidden="true">{status}</p>'
            for status in dict.fromkeys(frame["status"] for frame in manifest["frames"].values())
        )
        + "</div>"
        f'<script type="application/json" class="posenc-player-data">{data}</script>'
        "</section>"
    )


def _page_frames(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    return {key: [f["src"], f["status"], f["alt"]] for key, f in manifest["frames"].items()}


NOSCRIPT = "<noscript><style>.posenc-player{display:none}</style></noscript>"


def insert_players(text: str, page: Page) -> str:
    """Page step: the explorer's player after its code cell, its stylesheet and script in the head."""
    manifest = page.site.explorers.get(page.path.name)
    if manifest is None or page.path.parent.name != "notebooks":
        return text
    found = find_explorer_cell(text)
    if found is None or found[0] != manifest["explorer"]:
        return text
    static = page.static_prefix
    player = player_html(manifest, f"{static}/explorers/{manifest['folder']}/")
    text = text[: found[1]] + "\n" + player + text[found[1] :]
    # explorer.js and explorer.css are in tools/site/static, which Sphinx copies to _static.
    head = (
        f'<link rel="stylesheet" href="{static}/explorer.css">{NOSCRIPT}'
        f'<script defer src="{static}/explorer.js"></script>'
    )
    return text.replace("</head>", head + "</head>", 1)
