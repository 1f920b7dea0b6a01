"""``python -m posenc_helpers.conformance KIND MODULE:FUNCTION [spec options]``."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .diagnosis import diagnose

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_helpers.conformance",
        description=(
            "Check a positional-encoding function against what it is meant to compute, and name the bug.\n\n"
            "What FUNCTION must look like, by KIND (numpy arrays in; numpy, torch or JAX arrays out):\n"
            "  sinusoidal        fn(positions, d_model) -> table, shape (n, d_model);\n"
            "                    positions: integers, shape (n,)\n"
            "  rope              fn(x, positions) -> x rotated, same shape as x;\n"
            "                    x: shape (batch, seq, head_dim); positions: integers, shape (seq,)\n"
            "  rope_frequencies  fn() -> inverse frequencies, shape (rotary_dim // 2,),\n"
            "                    or (inverse frequencies, attention factor)\n"
            "  alibi             fn(n_heads, seq_len) -> bias added to the logits,\n"
            "                    shape (n_heads, seq_len, seq_len)"
        ),
        epilog=(
            "Example: python -m posenc_helpers.conformance rope mypackage.module:rope --head-dim 64 "
            "--base 10000 --layout half\n"
            "Exit status: 0 when the function conforms, 1 when it does not (or raised), 2 for a usage error."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("kind", choices=("sinusoidal", "rope", "rope_frequencies", "alibi"))
    parser.add_argument("function", help="the function to check, as package.module:function")
    parser.add_argument("--head-dim", type=int, help="rope, rope_frequencies: width of one head")
    parser.add_argument("--d-model", type=int, help="sinusoidal: width of the encoding; rope: the model width")
    parser.add_argument("--base", type=float, help="the base (default 10000)")
    parser.add_argument("--layout", help="rope: half (default) or interleaved; sinusoidal: interleaved or concat")
    parser.add_argument(
        "--convention",
        choices=("vaswani", "tensor2tensor", "fairseq"),
        help="sinusoidal: the paper's table (default) or tensor2tensor's and fairseq's (sines | cosines, d/2 - 1)",
    )
    parser.add_argument("--rotary-fraction", type=float, help="rope: fraction of the head that rotates")
    parser.add_argument("--rotary-dim", type=int, help="rope: number of features that rotate")
    parser.add_argument(
        "--scaling",
        help=(
            "rope, rope_frequencies: the rescaling as a JSON object of scaled_rope_frequencies' arguments, e.g. "
            '\'{"method": "linear", "factor": 4}\', DeepSeek-style YaRN \'{"method": "yarn", "factor": 40, '
            '"original_max_len": 4096, "mscale": 1.0, "mscale_all_dim": 1.0}\' or p-RoPE '
            '\'{"method": "proportional", "partial_rotary_factor": 0.25}\'; a key the method does not read is refused'
        ),
    )
    parser.add_argument("--no-causal", action="store_true", help="alibi: the bias is meant without a causal mask")
    parser.add_argument("--n-heads", help="alibi: head counts to probe, comma-separated (default 4,8,6,12)")
    return parser


def _load(target: str) -> Callable[..., Any]:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"function must be written package.module:function, got {target!r}")
    obj: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def _scaling(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        example = '{"method": "linear", "factor": 4}'
        raise ValueError(f"--scaling must be a JSON object such as '{example}': {exc}") from None


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "head_dim": args.head_dim,
        "d_model": args.d_model,
        "base": args.base,
        "layout": args.layout,
        "convention": args.convention,
        "rotary_fraction": args.rotary_fraction,
        "rotary_dim": args.rotary_dim,
        "scaling": None if args.scaling is None else _scaling(args.scaling),
    }
    if args.kind == "alibi":
        spec = {"causal": not args.no_causal}
        if args.n_heads:
            spec["n_heads"] = [int(item) for item in args.n_heads.split(",")]
    return {key: value for key, value in spec.items() if value is not None}


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: diagnose a function named ``package.module:function`` and print the report.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default ``sys.argv[1:]``): the kind,
        the function, and the spec as options (``--head-dim 64 --base 10000
        --layout half``; ``--help`` lists them).

    Returns
    -------
    int
        0 when the function conforms; 1 when it does not, or raised on a probe;
        2 when the arguments, the spec or the function cannot be used (the
        reason goes to stderr).

    Raises
    ------
    SystemExit
        From argparse, for ``--help`` (status 0) and malformed options (status 2).

    Examples
    --------
    >>> main(["alibi", "posenc_helpers:alibi_bias"])
    ALiBi (causal=True): conforms on every probe.
    0
    """
    args = _parser().parse_args(argv)
    try:
        fn = _load(args.function)
        report = diagnose(args.kind, fn, **_spec(args))
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1
