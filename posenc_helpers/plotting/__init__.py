"""Figures for the book (matplotlib). Import explicitly: ``from posenc_helpers import plotting``.

Every function draws on a given ``ax`` (or makes its own figure) and returns
what it drew on, so notebooks can compose figures and add their own labels.
Call :func:`use_book_style` once in a notebook's setup cell.
"""

from ._labels import edge_labels, spread_apart
from ._style import DIVERGING_CMAP, OKABE_ITO, SEQUENTIAL_CMAP, use_book_style
from .ch01_why_order_matters import plot_attention_weights, plot_pooled_summaries
from .ch02_naive_positions import plot_norm_ratio, plot_normalized_strips, plot_step_against_length
from .ch03_sine_only import plot_collision_scan, plot_phase_circle, plot_sine_columns
from .ch04_sine_cosine_pairs import plot_encoding_heatmap, plot_wavelengths
from .ch05_rotation_proof import plot_pair_on_circle, plot_position_scores, plot_rotation_frames
from .ch06_learned_and_relative import plot_learned_table, plot_relative_matrix, plot_t5_buckets
from .ch07_rope import plot_decay_bound, plot_decay_scores, plot_rotation_matrix
from .ch08_alibi import plot_alibi_slopes, plot_bias_heatmaps, plot_weights_by_distance
from .ch09_long_context import plot_angle_errors, plot_stretch_factors
from .ch10_comparison import plot_checklist_grid, plot_head_weights
from .ch11_train_short_test_long import (
    METHOD_STYLES,
    log_binned,
    plot_interval_curves,
    plot_interval_panels,
    plot_length_curves,
    plot_pair_norms,
    plot_position_losses,
)
from .ch12_positions_in_todays_models import plot_report_wavelengths
from .ch13_positions_in_2026 import plot_rotating_pairs
from .ch14_positional_bugs_museum import plot_score_errors

__all__ = [
    "OKABE_ITO",
    "SEQUENTIAL_CMAP",
    "DIVERGING_CMAP",
    "use_book_style",
    "edge_labels",
    "spread_apart",
    "plot_attention_weights",
    "plot_pooled_summaries",
    "plot_norm_ratio",
    "plot_normalized_strips",
    "plot_step_against_length",
    "plot_collision_scan",
    "plot_phase_circle",
    "plot_sine_columns",
    "plot_encoding_heatmap",
    "plot_wavelengths",
    "plot_pair_on_circle",
    "plot_rotation_frames",
    "plot_position_scores",
    "plot_decay_bound",
    "plot_decay_scores",
    "plot_rotation_matrix",
    "plot_alibi_slopes",
    "plot_bias_heatmaps",
    "plot_weights_by_distance",
    "plot_learned_table",
    "plot_relative_matrix",
    "plot_t5_buckets",
    "plot_stretch_factors",
    "plot_angle_errors",
    "plot_checklist_grid",
    "plot_head_weights",
    "METHOD_STYLES",
    "log_binned",
    "plot_interval_curves",
    "plot_interval_panels",
    "plot_length_curves",
    "plot_position_losses",
    "plot_pair_norms",
    "plot_report_wavelengths",
    "plot_rotating_pairs",
    "plot_score_errors",
]
