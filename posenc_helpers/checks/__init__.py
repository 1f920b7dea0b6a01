"""Automatic checks for the book's exercises.

Every check follows the same contract (see :mod:`posenc_helpers.checks._core`):
placeholder answers (``None`` or ``...``) give a falsy :class:`CheckResult`
reading "Not attempted yet"; wrong answers raise :class:`CheckFailed` with a
message that says what was expected and where the answer differs, without
revealing the answer; right answers give a truthy :class:`CheckResult`
reading "Correct: ...".

Checks are grouped by the idea they test, one module each.
"""

from ._core import CheckFailed, CheckResult
from .ch01_why_order_matters import (
    check_equivariant_prediction,
    check_permutation_matrix,
    check_symmetry_preserving_signal,
)
from .ch02_naive_positions import check_first_dominant_position, check_step_table
from .ch03_sine_only import check_period_and_first_repeat, check_shift_residual
from .ch04_sine_cosine_pairs import check_concat_readout, check_dimension_wavelength, check_encoding_row
from .ch05_rotation_proof import check_concat_shift_matrix, check_shift_matrix, check_swapped_rotation_block
from .ch06_learned_and_relative import check_clipped_distances, check_t5_buckets
from .ch07_rope import check_converted_projection, check_rotated_query
from .ch08_alibi import check_alibi_head_bias, check_alibi_slopes
from .ch09_long_context import check_first_interpolated_collision, check_rescaled_frequencies
from .ch10_comparison import check_alibi_weight_factor, check_offset_keys
from .ch11_train_short_test_long import check_length_jumps, check_unseen_pairs
from .ch12_positions_in_todays_models import check_axial_query, check_llama3_frequencies, check_position_ids
from .ch13_positions_in_2026 import check_layer_bases, check_packed_documents, check_proportional_frequencies
from .ch14_positional_bugs_museum import check_conforming_alibi, check_conforming_rope

__all__ = [
    "CheckFailed",
    "CheckResult",
    "check_permutation_matrix",
    "check_equivariant_prediction",
    "check_symmetry_preserving_signal",
    "check_step_table",
    "check_first_dominant_position",
    "check_period_and_first_repeat",
    "check_shift_residual",
    "check_encoding_row",
    "check_dimension_wavelength",
    "check_concat_readout",
    "check_swapped_rotation_block",
    "check_concat_shift_matrix",
    "check_shift_matrix",
    "check_rotated_query",
    "check_converted_projection",
    "check_alibi_slopes",
    "check_alibi_head_bias",
    "check_clipped_distances",
    "check_t5_buckets",
    "check_rescaled_frequencies",
    "check_first_interpolated_collision",
    "check_offset_keys",
    "check_alibi_weight_factor",
    "check_length_jumps",
    "check_unseen_pairs",
    "check_position_ids",
    "check_llama3_frequencies",
    "check_axial_query",
    "check_proportional_frequencies",
    "check_layer_bases",
    "check_packed_documents",
    "check_conforming_rope",
    "check_conforming_alibi",
]
