"""posenc_helpers: the numerics behind the book *Positional Encoding, from scalars to RoPE and ALiBi*.

The core is pure numpy and is imported here. Plotting (matplotlib) lives in
:mod:`posenc_helpers.plotting`, interactive explorers (ipywidgets) in
:mod:`posenc_helpers.widgets` and exercise checks in
:mod:`posenc_helpers.checks`, and the conformance kit that names the bug in a
reader's own positional code in :mod:`posenc_helpers.conformance` (chapter 14);
import those explicitly where needed.

==============================  ==========================================
module                          idea
==============================  ==========================================
:mod:`.positions`               raw and normalised indices
:mod:`.sinusoidal`              sine-only and sine/cosine encodings, ``M(phi)``
:mod:`.rope`                    rotary embeddings
:mod:`.rope_analysis`           RoPE's matrix, layout permutation, decay bound and scores
:mod:`.rope_2d`                 RoPE with several position axes: 2-D axial RoPE, M-RoPE (sectioned, interleaved)
:mod:`.long_context`            RoPE frequency rescaling (PI, NTK, dynamic, YaRN, llama3, LongRoPE, p-RoPE)
:mod:`.scaling_arguments`       the rescaling recipes' arguments, checked per method
:mod:`.unseen_angles`           RoPE pairs whose angles at a new length training never produced
:mod:`.partial_rotary`          which features turn: ordinary partial rotary against proportional p-RoPE
:mod:`.mla`                     multi-head latent attention's decoupled RoPE (DeepSeek)
:mod:`.kv_cache`                re-rotating cached keys for a position shift, attention-sink caches
:mod:`.packing`                 position ids and masks of packed documents
:mod:`.packing_paths`           the documents each of transformers' paths reads
:mod:`.attention_scaling`       logit scales that grow with position (Qwen's log-n, Llama 4's temperature)
:mod:`.base_bound`              Men et al.'s criterion for the RoPE base, unrotated features included
:mod:`.alibi`                   linear attention biases
:mod:`.relative`                T5 relative-position buckets
:mod:`.learned`                 learned absolute tables, Shaw's clipped relative vectors
:mod:`.attention`               softmax and scaled dot-product attention
:mod:`.metrics`                 distances between encodings, least-squares shift maps
:mod:`.binning`                 means over position bins that widen on a log scale
:mod:`.collisions`              near-collisions of one sine over integer positions
:mod:`.precision`               RoPE angles in float16/bfloat16/float32/float64, colliding positions
:mod:`.answer_cells`            reading a student's answer cell (the checks' and the grader's)
:mod:`.checklist`               the six-property checklist, scored by code, and its n/a rules
:mod:`.checklist_tables`        the scored checklist as Markdown tables and grids
:mod:`.encoders`                every method as an encoder for the checklist
:mod:`.offset_head`             the hand-built head that looks phi tokens back
:mod:`.configs`                 a model's config.json explained: RoPE, rescaling, contexts, precision
:mod:`.conformance`             is my positional code right? ``diagnose`` names the bug (imported explicitly)
:mod:`.measured`                what chapter 11's trained models did, read from its record (no JAX)
:mod:`.lab`                     chapter 11's training lab: tiny transformers in JAX (imported explicitly)
:mod:`.grading`                 the course's grading runtime: sandbox, records, verdict (imported explicitly)
:mod:`.plotting`                each chapter's figures, in the book's style (matplotlib; imported explicitly)
:mod:`.widgets`                 each chapter's explorer (ipywidgets; imported explicitly)
:mod:`.checks`                  each chapter's exercise checks (imported explicitly)
==============================  ==========================================
"""

from .alibi import alibi_bias, alibi_bias_shifted, alibi_slopes
from .attention import scaled_dot_product_attention, softmax
from .attention_scaling import llama4_attention_scale, logn_attention_scale
from .base_bound import first_negative_distance, men_criterion, smallest_passing_base
from .binning import log_binned
from .checklist import (
    BY_CONSTRUCTION,
    CHECKLIST,
    HEURISTIC,
    MECHANISMS,
    NOT_APPLICABLE,
    criterion_applies,
    score_encoding,
)
from .checklist_tables import checklist_grid, checklist_markdown, comparison_markdown
from .collisions import collision_scan
from .configs import PositionReport, describe, shipped_configs
from .encoders import method_encoders
from .kv_cache import rerotate_keys, sink_cache_positions
from .learned import (
    clipped_relative_positions,
    learned_encoding,
    learned_position_table,
    shaw_attention_logits,
    shaw_relative_index,
)
from .long_context import scaled_rope_frequencies, unseen_angle_pairs
from .metrics import linear_shift_fit, min_pairwise_distance
from .mla import mla_scores
from .offset_head import offset_head_closed_form, offset_head_profile, offset_head_weights, offset_score
from .packing import (
    flash_varlen_cu_seqlens,
    flash_varlen_is_packed,
    packed_attention_mask,
    packed_position_ids,
    varlen_attention_mask,
)
from .packing_paths import (
    flash_path_attention_mask,
    flash_path_document_ids,
    mask_path_attention_mask,
    mask_path_document_ids,
)
from .partial_rotary import partial_rotary_pairs
from .positions import integer_positions, normalized_positions
from .precision import angle_errors, colliding_positions, rope_angles, round_to_bfloat16, round_to_precision
from .relative import t5_relative_bucket
from .rope import apply_rope, rope_frequencies
from .rope_2d import axial_rope, mrope_pair_axes, multimodal_rope
from .rope_analysis import (
    rope_decay_bound,
    rope_decay_scores,
    rope_layout_permutation,
    rope_rotation_matrix,
    rope_slowest_pair_vector,
)
from .sinusoidal import (
    frequencies,
    shift_matrix,
    sine_only_encoding,
    sinusoidal_encoding,
    wavelengths,
)

# The one place the version is written. pyproject.toml reads it (setuptools' dynamic version), the
# book's footer shows it (tools/release.py), and tests/tooling/test_project.py holds CITATION.cff
# and CHANGELOG.md to it. To release, change it here (CONTRIBUTING.md, "Cutting a release").
__version__ = "0.1.0"

__all__ = [
    "integer_positions",
    "normalized_positions",
    "frequencies",
    "wavelengths",
    "sine_only_encoding",
    "sinusoidal_encoding",
    "shift_matrix",
    "rope_frequencies",
    "apply_rope",
    "rope_rotation_matrix",
    "rope_layout_permutation",
    "rope_decay_bound",
    "rope_decay_scores",
    "rope_slowest_pair_vector",
    "axial_rope",
    "multimodal_rope",
    "mrope_pair_axes",
    "scaled_rope_frequencies",
    "unseen_angle_pairs",
    "partial_rotary_pairs",
    "mla_scores",
    "rerotate_keys",
    "sink_cache_positions",
    "packed_position_ids",
    "packed_attention_mask",
    "flash_varlen_is_packed",
    "flash_varlen_cu_seqlens",
    "varlen_attention_mask",
    "mask_path_document_ids",
    "mask_path_attention_mask",
    "flash_path_document_ids",
    "flash_path_attention_mask",
    "llama4_attention_scale",
    "logn_attention_scale",
    "men_criterion",
    "first_negative_distance",
    "smallest_passing_base",
    "round_to_bfloat16",
    "round_to_precision",
    "rope_angles",
    "angle_errors",
    "colliding_positions",
    "alibi_slopes",
    "alibi_bias",
    "alibi_bias_shifted",
    "t5_relative_bucket",
    "learned_position_table",
    "learned_encoding",
    "clipped_relative_positions",
    "shaw_relative_index",
    "shaw_attention_logits",
    "softmax",
    "scaled_dot_product_attention",
    "min_pairwise_distance",
    "collision_scan",
    "linear_shift_fit",
    "log_binned",
    "CHECKLIST",
    "score_encoding",
    "checklist_markdown",
    "MECHANISMS",
    "NOT_APPLICABLE",
    "BY_CONSTRUCTION",
    "HEURISTIC",
    "method_encoders",
    "criterion_applies",
    "checklist_grid",
    "comparison_markdown",
    "offset_score",
    "offset_head_closed_form",
    "offset_head_weights",
    "offset_head_profile",
    "PositionReport",
    "describe",
    "shipped_configs",
]
