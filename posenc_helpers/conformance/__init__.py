"""Is my positional code right? A conformance kit that names the bug.

:func:`diagnose` takes a practitioner's implementation (sinusoidal table, RoPE,
RoPE frequencies, ALiBi bias, or a whole attention function), calls it on small
probes designed to tell the common mistakes apart, and returns a :class:`Report`: whether it conforms to
what the spec says it should compute and, if not, which named mistake of
:data:`BUGS` it makes, where (probe, position, pair, head), and which section of
the book explains the right thing. Numpy only; torch or JAX functions work
through ``np.asarray`` on their outputs (``inputs_as`` converts the inputs).

==============================  ==========================================
module                          what it probes
==============================  ==========================================
:mod:`.rope`                    ``fn(x, positions)``: unit vectors, the matrix per position
:mod:`.rope_frequencies`        ``fn()``: the inverse frequencies, read as a law
:mod:`.sinusoidal`              ``fn(positions, d_model)``: the table, pairs and columns
:mod:`.alibi`                   ``fn(n_heads, seq_len)``: slopes per head, per head count
:mod:`.attention`               ``fn(q, k, v, positions)``: what only the whole attention shows
:mod:`.angles`                  direction, phase, offset and frequency law of measured angles
:mod:`.formats`                 what a declared dtype costs; rounded angles recognised
:mod:`.bugs`                    the named mistakes and the sections that explain them
:mod:`.spec`                    what the reader meant (the spec), checked once; the guarded call of their code
:mod:`.diagnosis`               ``diagnose``: runs a kind's probes and names what is wrong
:mod:`.report`                  what a diagnosis returns: the report and its evidence
:mod:`.cli`                     ``python -m posenc_helpers.conformance``: the command line
==============================  ==========================================

From a shell::

    python -m posenc_helpers.conformance rope mypackage.module:function --head-dim 64 --base 10000 --layout half
    python -m posenc_helpers.conformance attention mypackage.module:attention --head-dim 64 --dtype bfloat16

prints the report and exits 0 only when the code conforms.
"""

from .bugs import BUGS, EXPLAINED_IN, WORKING_COPIES_MARKER, describe, explained_in, formula_section, notebook_reference
from .cli import main
from .diagnosis import diagnose
from .report import Evidence, Report

__all__ = [
    "diagnose",
    "Report",
    "Evidence",
    "BUGS",
    "EXPLAINED_IN",
    "describe",
    "explained_in",
    "formula_section",
    "notebook_reference",
    "WORKING_COPIES_MARKER",
    "main",
]
