"""What a model's ``config.json`` says about positions, in numbers and in words.

:func:`describe` reads a Hugging Face style configuration (a mapping, as
``json.load`` returns it) and reports its position story: the RoPE base and
rotary width, the rescaling method and its parameters, the length the
rescaling formula is anchored to (``original_max_position_embeddings``, which
is not necessarily the length the model was trained on) and the longest
context, the frequency and wavelength of every pair at the longest context,
which pairs the rescaling kept, interpolated or blended, what scales the
attention logits and which query/key features that touches, and how finely
float32 and bfloat16 resolve the largest angle. Both config layouts are read: the older
``rope_theta`` plus ``rope_scaling`` (keyed ``rope_type`` or ``type``), and the
newer ``rope_parameters`` of transformers v5, a flat mapping or one mapping per
layer type (``"full_attention"``, ``"sliding_attention"``).

The position fields of a few public models ship with the package
(:func:`shipped_configs`), each with the address of its published
``config.json`` and the source the numbers were checked against.

The package reads in :mod:`.reading` (a config into the typed record,
:class:`PositionReport`; the fields each ``rope_type`` adds in :mod:`.rescaling`,
one reader per method, and the layer pattern in :mod:`.layers`, every field
checked by :mod:`.fields`), says it in words in :mod:`.report` (``str(report)``)
and runs from a shell in :mod:`.cli`.

From a shell::

    python -m posenc_helpers.configs path/to/config.json
    python -m posenc_helpers.configs llama-3.1-8b      # a shipped model
"""

from .cli import main
from .reading import describe, shipped_configs
from .report import PositionReport

__all__ = ["PositionReport", "describe", "shipped_configs", "main"]
