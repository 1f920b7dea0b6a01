"""Chapter 14 explorer: where a RoPE bug shows in the attention scores."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import numpy as np

from ..plotting._style import OKABE_ITO
from ..precision import rope_angles
from ..rope import apply_rope, rope_frequencies
from ._explorer import FigureExplorer

__all__ = ["BugSymptomExplorer"]

#: The RoPE the explorer's model means: head width, base (Llama 3's) and layout (Hugging Face's).
HEAD_DIM, BASE, LAYOUT = 16, 500000.0, "half"
#: The bugs offered, as (key, label).
BUGS = (
    ("layout", "layout: interleaved code, half-split weights"),
    ("base", "base: hard-coded 10000"),
    ("bfloat16", "angles in bfloat16"),
    ("positions", "positions ignored (KV cache)"),
)
#: Query positions offered, tokens.
POSITIONS = (32, 256, 1024, 4096, 16384)
#: Key offsets m - n drawn, tokens.
OFFSETS = np.arange(33)


def _rotate_half_by(x: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Half-split rotation of the rows of ``x`` by the given angles, shape (rows, pairs)."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def rope_scores(bug: str | None, query: np.ndarray, key: np.ndarray, position: int) -> np.ndarray:
    """Score of ``query`` at ``position`` with ``key`` at ``position - offset``, for every offset in OFFSETS."""
    keys_at = position - OFFSETS
    q = np.broadcast_to(query, (1, HEAD_DIM))
    k = np.broadcast_to(key, (OFFSETS.size, HEAD_DIM))
    if bug is None or bug == "positions":
        # "positions": the prefill rotated the cached keys by their row numbers, which are their positions;
        # the decode step hands the code one new row, and the code rotates it as row 0.
        q_pos = [0] if bug == "positions" else [position]
        rotated_q = apply_rope(q, q_pos, base=BASE, layout=LAYOUT)
        rotated_k = apply_rope(k, keys_at, base=BASE, layout=LAYOUT)
        if bug == "positions":  # the new token's own key is rotated in the same call, as row 0
            rotated_k[0] = apply_rope(k[:1], [0], base=BASE, layout=LAYOUT)[0]
    elif bug == "layout":
        rotated_q = apply_rope(q, [position], base=BASE, layout="interleaved")
        rotated_k = apply_rope(k, keys_at, base=BASE, layout="interleaved")
    elif bug == "base":
        rotated_q = apply_rope(q, [position], base=10000.0, layout=LAYOUT)
        rotated_k = apply_rope(k, keys_at, base=10000.0, layout=LAYOUT)
    else:  # bfloat16
        theta = rope_frequencies(HEAD_DIM, base=BASE)
        rotated_q = _rotate_half_by(q, rope_angles([position], theta, "bfloat16"))
        rotated_k = _rotate_half_by(k, rope_angles(keys_at, theta, "bfloat16"))
    return rotated_k @ rotated_q[0]


class BugSymptomExplorer(FigureExplorer):
    """Attention scores of a bugged RoPE against the right ones, for a chosen bug and query position.

    The model means RoPE with head width 16, base 500,000 and the half-split
    layout. A query at position ``m`` meets one key at every offset ``m - n``
    from 0 to 32 tokens back; the figure draws the right scores and those of the
    bugged code, and the status line says where they part. Bugs that queries and
    keys share leave offset 0 exact; bfloat16 angles leave short positions almost
    right and ruin long ones.

    Parameters
    ----------
    bug : {"layout", "base", "bfloat16", "positions"}, optional
        The starting bug. Default ``"layout"``.
    position : int, optional
        The starting query position, one of ``32, 256, 1024, 4096, 16384``.
        Default 1024.

    Raises
    ------
    ValueError
        If ``bug`` or ``position`` is not one of the values above.

    Examples
    --------
    >>> explorer = BugSymptomExplorer()
    >>> explorer.set(bug="bfloat16", position=32)
    >>> print(explorer.status.value)
    angles in bfloat16, query at position 32: exact at offset 0; largest score error 0.01 at offset 3
    >>> explorer.set(position=4096)
    >>> print(explorer.status.value)
    angles in bfloat16, query at position 4,096: exact at offset 0; largest score error 2.74 at offset 8
    """

    def __init__(self, bug: str = "layout", position: int = 1024) -> None:
        keys = [key for key, _ in BUGS]
        if bug not in keys:
            raise ValueError(f"bug must be one of {', '.join(keys)}, got {bug!r}")
        if position not in POSITIONS:
            raise ValueError(f"position must be one of {POSITIONS}, got {position!r}")
        rng = np.random.default_rng(14)
        self.query, self.key = rng.normal(size=(2, HEAD_DIM))
        controls = {
            "bug": widgets.Dropdown(options=[(label, key) for key, label in BUGS], value=bug, description="bug"),
            "position": widgets.SelectionSlider(
                options=[(f"{p:,}", p) for p in POSITIONS], value=int(position), description="query at"
            ),
        }
        super().__init__(controls, figsize=(6.4, 3.2))

    @classmethod
    def demo(cls) -> tuple[BugSymptomExplorer, list[dict[str, Any]]]:
        """The chapter's defaults, every bug and every query position."""
        explorer = cls()
        changes: list[dict[str, Any]] = [{"bug": key} for key, _ in BUGS]
        changes += [{"position": p} for p in POSITIONS]
        changes.append({"bug": "layout", "position": 1024})
        return explorer, changes

    def _setup(self) -> None:
        self.ax = self.figure.add_axes((0.1, 0.16, 0.62, 0.7))
        (self.right_line,) = self.ax.plot(
            OFFSETS, np.zeros(OFFSETS.size), color=OKABE_ITO[0], marker="o", markersize=3, label="right scores"
        )
        (self.bug_line,) = self.ax.plot(
            OFFSETS,
            np.zeros(OFFSETS.size),
            color=OKABE_ITO[1],
            linestyle="--",
            marker="s",
            markersize=3,
            label="bugged code",
        )
        limit = float(np.linalg.norm(self.query) * np.linalg.norm(self.key))
        self.ax.set_ylim(-limit, limit)
        self.ax.set_xlim(-0.5, OFFSETS[-1] + 0.5)
        self.ax.set_xlabel("key offset m - n (tokens)")
        self.ax.set_ylabel("score q . k")
        self.ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8)
        self._dynamic = (self.right_line, self.bug_line, self.ax.title)

    def _dynamic_artists(self) -> tuple:
        return self._dynamic

    def _update(self, bug: str, position: int) -> str:
        right = rope_scores(None, self.query, self.key, position)
        bugged = rope_scores(bug, self.query, self.key, position)
        self.right_line.set_ydata(right)
        self.bug_line.set_ydata(bugged)
        label = dict(BUGS)[bug]
        self.ax.set_title(f"{label}, query at {position:,}", fontsize=9)
        error = np.abs(bugged - right)
        at_zero = "exact at offset 0" if error[0] < 1e-9 else f"off by {error[0]:.2f} at offset 0"
        worst = int(np.argmax(error))
        return (
            f"{label}, query at position {position:,}: {at_zero}; "
            f"largest score error {error[worst]:.2f} at offset {worst}"
        )
