"""Chapter 01 explorer: reorder a sentence and dial in a position signal."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np

from ..attention import scaled_dot_product_attention
from ..plotting._style import OKABE_ITO, SEQUENTIAL_CMAP
from ._explorer import FigureExplorer

__all__ = ["WordOrderExplorer"]


class WordOrderExplorer(FigureExplorer):
    """Attention weights and pooled output of a reordered sentence.

    The sentence ``words`` (embeddings ``embeddings``) can be put in any order
    (it starts reversed);
    ``strength`` scales a position signal added to the embeddings by position.
    The left panel shows the attention weights, the right panel the pooled
    (mean) output next to that of the original order. With strength 0 the two
    pooled outputs coincide for every order; any strength above 0 separates
    them.

    Parameters
    ----------
    words : sequence of str
        The words of the original sentence, distinct, at most 5.
    embeddings : numpy.ndarray
        Shape ``(n, d)``, one row per word.
    w_q, w_k, w_v : numpy.ndarray
        Projections, shape ``(d, d_k)``, ``(d, d_k)``, ``(d, d_v)``.
    position_signal : numpy.ndarray
        Shape ``(n, d)``: row ``t`` is added to the token at position ``t``.
    max_strength : float, optional
        Upper end of the strength slider. Default 2.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, wq, wk, wv, pe = rng.normal(size=(5, 3, 3))
    >>> explorer = WordOrderExplorer(["a", "b", "c"], x, wq, wk, wv, pe)
    >>> explorer.status.value
    'pooled output of <b>c b a</b> minus that of <b>a b c</b>: largest difference 0 (identical)'
    """

    def __init__(
        self,
        words: Sequence[str],
        embeddings: np.ndarray,
        w_q: np.ndarray,
        w_k: np.ndarray,
        w_v: np.ndarray,
        position_signal: np.ndarray,
        *,
        max_strength: float = 2.0,
    ) -> None:
        self.words = list(words)
        n = len(self.words)
        if not 1 <= n <= 5 or len(set(self.words)) != n:
            raise ValueError(f"words must be 1 to 5 distinct words, got {self.words}")
        self.embeddings = np.asarray(embeddings, dtype=float)
        self.position_signal = np.asarray(position_signal, dtype=float)
        if self.embeddings.shape[0] != n or self.position_signal.shape != self.embeddings.shape:
            raise ValueError(
                "embeddings and position_signal must both have one row per word, "
                f"got {self.embeddings.shape} and {self.position_signal.shape}"
            )
        self.projections = tuple(np.asarray(w, dtype=float) for w in (w_q, w_k, w_v))
        orders = [(" ".join(self.words[i] for i in perm), perm) for perm in itertools.permutations(range(n))]
        controls = {
            # Start from the reversed sentence, so the first move of the slider shows the effect.
            "order": widgets.Dropdown(options=orders, value=tuple(range(n))[::-1], description="word order"),
            "strength": widgets.FloatSlider(
                value=0.0,
                min=0.0,
                max=float(max_strength),
                step=0.1,
                description="position signal",
                readout_format=".1f",
                style={"description_width": "initial"},
            ),
        }
        super().__init__(controls, figsize=(8.0, 3.0))

    @classmethod
    def demo(cls) -> tuple[WordOrderExplorer, list[dict]]:
        """The chapter 01 set-up (3 words, width 8) and every order and strength change."""
        from ..sinusoidal import sinusoidal_encoding

        rng = np.random.default_rng(1)
        x = rng.normal(size=(3, 8))
        w_q, w_k, w_v = rng.normal(size=(3, 8, 8)) / np.sqrt(8)
        explorer = cls(["dog", "bites", "man"], x, w_q, w_k, w_v, sinusoidal_encoding(3, 8))
        changes = [{"strength": float(s)} for s in np.linspace(0.0, 2.0, 11)]
        changes += [{"order": order} for _, order in explorer.controls["order"].options]
        return explorer, changes

    def _outputs(self, order: tuple[int, ...], strength: float) -> tuple[np.ndarray, np.ndarray]:
        x = self.embeddings[list(order)] + strength * self.position_signal
        w_q, w_k, w_v = self.projections
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)

    def _setup(self) -> None:
        n = len(self.words)
        self.ax_weights = self.figure.add_axes((0.09, 0.22, 0.28, 0.66))
        self.ax_pooled = self.figure.add_axes((0.50, 0.22, 0.47, 0.66))
        self.heatmap = self.ax_weights.imshow(np.zeros((n, n)), cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=1.0)
        self.ax_weights.set_xticks(range(n))
        self.ax_weights.set_yticks(range(n))
        self.ax_weights.set_xlabel("key token")
        self.ax_weights.set_ylabel("query token")
        self.ax_weights.set_title("attention weights")
        self.cell_text = [
            [self.ax_weights.text(j, i, "", ha="center", va="center", fontsize=8) for j in range(n)] for i in range(n)
        ]
        width = self.projections[2].shape[1]
        features = np.arange(width)
        self.bars_reference = self.ax_pooled.bar(
            features - 0.2, np.zeros(width), width=0.4, color=OKABE_ITO[0], label=" ".join(self.words)
        )
        self.bars_current = self.ax_pooled.bar(
            features + 0.2,
            np.zeros(width),
            width=0.4,
            color=OKABE_ITO[1],
            hatch="//",
            edgecolor="white",
            label="chosen order",
        )
        self.ax_pooled.axhline(0.0, color="0.3", linewidth=0.8)
        self.ax_pooled.set_xticks(features)
        self.ax_pooled.set_xlabel("feature of the pooled output")
        self.ax_pooled.set_ylabel("value")
        self.ax_pooled.set_title("pooled (mean) output")
        self.ax_pooled.legend(loc="upper right", fontsize=8)
        max_strength = self.controls["strength"].max
        limits = [
            np.abs(self._outputs(perm, s)[0].mean(axis=0)).max()
            for _, perm in self.controls["order"].options
            for s in (0.0, max_strength)
        ]
        top = 1.15 * max(limits)
        self.ax_pooled.set_ylim(-top, top)

    def _dynamic_artists(self) -> list:
        # The weights, their numbers and the bars change with both controls; the tick labels
        # (the words in order) only with the order, so each order keeps its own background.
        texts = [text for row in self.cell_text for text in row]
        return [self.heatmap, *texts, *self.bars_reference, *self.bars_current]

    def _background_key(self) -> tuple[int, ...]:
        return tuple(self.controls["order"].value)

    def _update(self, order: tuple[int, ...], strength: float) -> str:
        labels = [self.words[i] for i in order]
        output, weights = self._outputs(order, strength)
        reference, _ = self._outputs(tuple(range(len(self.words))), strength)
        self.heatmap.set_data(weights)
        for (i, j), value in np.ndenumerate(weights):
            self.cell_text[i][j].set_text(f"{value:.2f}")
            self.cell_text[i][j].set_color("black" if value > 0.55 else "white")
        self.ax_weights.set_xticklabels(labels)
        self.ax_weights.set_yticklabels(labels)
        pooled, pooled_reference = output.mean(axis=0), reference.mean(axis=0)
        for bar, height in zip(self.bars_reference, pooled_reference, strict=True):
            bar.set_height(height)
        for bar, height in zip(self.bars_current, pooled, strict=True):
            bar.set_height(height)
        gap = float(np.abs(pooled - pooled_reference).max())
        verdict = "identical" if gap < 1e-12 else "different"
        shown = "0" if gap < 1e-12 else f"{gap:.3f}"
        return (
            f"pooled output of <b>{' '.join(labels)}</b> minus that of "
            f"<b>{' '.join(self.words)}</b>: largest difference {shown} ({verdict})"
        )
