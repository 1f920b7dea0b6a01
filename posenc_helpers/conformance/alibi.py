"""Probe for an ALiBi bias ``fn(n_heads, seq_len)``: slopes read off each head's rows.

For every head count probed (powers of two and not), the bias of each head is
read as ``bias[h, i, j] = c_i - m_h * (i - j)``: a constant per row is allowed,
since softmax ignores it (the ``m * j`` shortcut of chapter 08, under a causal
mask). The slopes ``m_h`` are compared with :func:`~posenc_helpers.alibi_slopes`;
when they differ, the kit reads what they are: the same slopes with the sign
flipped, the reference slopes in another head order (at any head count), the
power-of-two formula used for a head count that is not one, or the head index
counted from 0.
"""

from __future__ import annotations

import numpy as np

from ..alibi import alibi_slopes
from .report import Evidence
from .spec import UserCall

__all__ = ["SEQ_LEN", "diagnose_alibi", "read_slopes"]

SEQ_LEN = 6


def read_slopes(bias: np.ndarray, causal: bool) -> tuple[np.ndarray, float]:
    """Each head's slope, and the largest departure from ``c_i - m_h |i - j|`` (per-row constants allowed)."""
    n_heads, length, _ = bias.shape
    i, j = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    seen = (j < i) if causal else (j != i)
    relative = bias - np.diagonal(bias, axis1=1, axis2=2)[:, :, None]  # subtract each row's diagonal
    distance = np.abs(i - j).astype(np.float64)
    slopes = -np.sum(relative[:, seen] * distance[seen], axis=1) / np.sum(distance[seen] ** 2)
    misfit = np.abs(relative[:, seen] + slopes[:, None] * distance[seen])
    return slopes, float(np.max(misfit)) if misfit.size else 0.0


def _naive(n_heads: int) -> np.ndarray:
    return 2.0 ** (-8.0 * np.arange(1, n_heads + 1) / n_heads)


def _wrong_rules(n_heads: int) -> dict[str, np.ndarray]:
    """Rules for a head count that is not a power of two that real code got wrong, by what each does."""
    lower = 1 << (n_heads.bit_length() - 1)
    return {
        "the power-of-two formula 2**(-8h/n) is used for a head count that is not a power of two": _naive(n_heads),
        "the next power of two's slopes are cut short to the head count": _naive(2 * lower)[:n_heads],
        # every other slope of the next power from the second ([1::2]) is the lower power's slopes again
        "the extra heads repeat the lower power of two's slopes (as taking every other slope of the next "
        "power from the second, [1::2], instead of the first, [0::2], does)": np.resize(_naive(lower), n_heads),
    }


def _explain(n_heads: int, got: np.ndarray, meant: np.ndarray) -> list[Evidence]:
    probe = f"n_heads={n_heads}, seq_len={SEQ_LEN}"
    findings: list[Evidence] = []
    slopes = got
    if np.all(got < 0) and not np.allclose(got, meant, rtol=1e-6):
        findings.append(
            Evidence(
                probe,
                "the slopes have the wrong sign: distant keys gain",
                head=0,
                expected=float(-meant[0]),
                got=float(-got[0]),
                bug="alibi-sign",
            )
        )
        slopes = -got
    if np.allclose(slopes, meant, rtol=1e-6, atol=1e-12):
        return findings
    head = int(np.argmax(np.abs(slopes - meant)))
    where = {"head": head, "expected": float(meant[head]), "got": float(slopes[head])}
    power_of_two = n_heads & (n_heads - 1) == 0
    rule = next((note for note, wrong in _wrong_rules(n_heads).items() if np.allclose(slopes, wrong, rtol=1e-6)), None)
    if np.allclose(np.sort(slopes), np.sort(meant), rtol=1e-6):
        order = "reversed" if np.allclose(slopes, meant[::-1], rtol=1e-6) else "in another order"
        note = f"every slope of the paper's list is there, but {order} over the heads"
        findings.append(Evidence(probe, note, bug="alibi-head-order", **where))  # type: ignore[arg-type]
    elif not power_of_two and rule is not None:
        findings.append(Evidence(probe, rule, bug="alibi-slopes-non-power-of-two", **where))  # type: ignore[arg-type]
    elif np.allclose(slopes, meant * 2.0 ** (8.0 / (1 << (n_heads.bit_length() - 1))), rtol=1e-6) and power_of_two:
        note = "head h gets the slope of head h - 1: heads counted from 0 in 2**(-8h/n)"
        findings.append(Evidence(probe, note, bug="off-by-one", **where))  # type: ignore[arg-type]
    else:
        findings.append(Evidence(probe, "the slopes follow no rule the kit knows", **where))  # type: ignore[arg-type]
    return findings


def _by_powers_of_two(heads: tuple[int, ...], findings: list[Evidence], failed: set[int]) -> list[Evidence]:
    """Name an unrecognised slope rule when the kit's own evidence is the signature of one.

    Every power-of-two head count probed conforms and only the other counts fail, on their
    slopes alone (the bias is a slope times the distance): the rule for other head counts is wrong.
    """
    powers = [n for n in heads if n & (n - 1) == 0]
    others = sorted(n for n in failed if n & (n - 1))
    if not powers or not others or any(n in failed for n in powers):
        return findings
    if any(item.bug is not None or not item.note.startswith("the slopes follow no rule") for item in findings):
        return findings
    counts = ", ".join(map(str, powers))
    note = (
        f"the slopes are right for {counts} heads (powers of two) and wrong for {', '.join(map(str, others))} "
        "heads: the rule for a head count that is not a power of two differs from the paper's"
    )
    first = findings[0]
    return [Evidence(first.probe, note, head=first.head, bug="alibi-slopes-non-power-of-two")]


def diagnose_alibi(call: UserCall, heads: tuple[int, ...], causal: bool) -> tuple[list[Evidence], bool]:
    """Run the probes; return the evidence (empty when the code conforms) and whether all of it is explained."""
    findings: list[Evidence] = []
    failed: set[int] = set()
    i, j = np.meshgrid(np.arange(SEQ_LEN), np.arange(SEQ_LEN), indexing="ij")
    for n_heads in heads:
        shape = (n_heads, SEQ_LEN, SEQ_LEN)
        finite_where = np.broadcast_to(j <= i, shape) if causal else None
        bias = call((n_heads, SEQ_LEN), f"n_heads={n_heads}, seq_len={SEQ_LEN}", shape, finite_where)
        slopes, misfit = read_slopes(bias, causal)
        if misfit > 1e-6 * max(1.0, float(np.max(np.abs(slopes)))):
            side = "" if causal else " (without a causal mask the bias must fall on both sides of the diagonal)"
            note = f"the bias is not a slope times the distance, up to a constant per row{side}"
            findings.append(Evidence(f"n_heads={n_heads}, seq_len={SEQ_LEN}", note))
            failed.add(n_heads)
            continue
        for item in _explain(n_heads, slopes, alibi_slopes(n_heads)):
            failed.add(n_heads)
            if all((item.bug, item.note) != (seen.bug, seen.note) or item.bug is None for seen in findings):
                findings.append(item)
    findings = _by_powers_of_two(heads, findings, failed)
    return findings, all(item.bug is not None for item in findings)
