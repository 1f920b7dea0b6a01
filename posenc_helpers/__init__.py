"""posenc_helpers: the numerics behind the book *Positional Encoding, from scalars to RoPE and ALiBi*.

The core is pure numpy and is imported here. Plotting (matplotlib) lives in
:mod:`posenc_helpers.plotting`, interactive explorers (ipywidgets) in
:mod:`posenc_helpers.widgets` and exercise checks in
:mod:`posenc_helpers.checks`; import those explicitly where needed.

==============================  ==========================================
module                          idea
==============================  ==========================================
:mod:`.positions`               raw and normalised indices
:mod:`.sinusoidal`              sine-only and sine/cosine encodings, ``M(phi)``
:mod:`.rope`                    rotary embeddings
:mod:`.long_context`            RoPE frequency rescaling (PI, NTK, YaRN)
:mod:`.alibi`                   linear attention biases
:mod:`.relative`                T5 relative-position buckets
:mod:`.attention`               softmax and scaled dot-product attention
:mod:`.metrics`                 distances between encodings, least-squares shift maps
:mod:`.collisions`              near-collisions of one sine over integer positions
:mod:`.checklist`               the six-property checklist, scored by code
==============================  ==========================================
"""

from .alibi import alibi_bias, alibi_slopes
from .attention import scaled_dot_product_attention, softmax
from .collisions import collision_scan
from .checklist import CHECKLIST, checklist_markdown, score_encoding
from .long_context import scaled_rope_frequencies
from .metrics import linear_shift_fit, min_pairwise_distance
from .positions import integer_positions, normalized_positions
from .relative import t5_relative_bucket
from .rope import apply_rope, rope_frequencies
from .sinusoidal import (
    frequencies,
    shift_matrix,
    sine_only_encoding,
    sinusoidal_encoding,
    wavelengths,
)

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
    "scaled_rope_frequencies",
    "alibi_slopes",
    "alibi_bias",
    "t5_relative_bucket",
    "softmax",
    "scaled_dot_product_attention",
    "min_pairwise_distance",
    "collision_scan",
    "linear_shift_fit",
    "CHECKLIST",
    "score_encoding",
    "checklist_markdown",
]
