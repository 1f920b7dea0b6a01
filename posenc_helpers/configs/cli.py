"""The command line of :mod:`posenc_helpers.configs`: ``python -m posenc_helpers.configs CONFIG``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .reading import describe, shipped_configs

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_helpers.configs",
        description="Explain the positions of a Hugging Face config.json, or of a shipped model.",
        epilog="shipped models:\n  " + ", ".join(shipped_configs()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("target", metavar="CONFIG_JSON_OR_MODEL", help="a path to a config.json, or a shipped model")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: print the position report of a config file (or a shipped model).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name; default ``sys.argv[1:]``. One
        argument: a path to a ``config.json``, or the key of a shipped model.

    Returns
    -------
    int
        0 on success (and for ``-h`` or ``--help``, which print the usage and the
        shipped models); 1 when the file cannot be read or describes no usable
        RoPE (the reason goes to stderr); 2 for a wrong number of arguments or an
        unknown option (argparse's usage goes to stderr).

    Raises
    ------
    TypeError
        Never for a bad file (that is exit status 1); only if ``argv`` is not a
        sequence of strings.

    Examples
    --------
    >>> main(["llama-3.1-8b"])  # doctest: +ELLIPSIS
    Llama 3.1 8B: positions by rotary embedding (RoPE).
    ...
    0
    """
    if argv is not None and (isinstance(argv, (str, bytes)) or not all(isinstance(arg, str) for arg in argv)):
        raise TypeError(f"argv must be a sequence of strings, got {argv!r}")
    try:
        target = _parser().parse_args(argv).target
    except SystemExit as exit_:  # -h, --help (0) or a usage error (2): argparse has printed why
        return exit_.code if isinstance(exit_.code, int) else 2
    shipped = shipped_configs()
    try:
        if target in shipped:
            config, name = shipped[target]["config"], shipped[target]["name"]
        else:
            with open(target, encoding="utf-8") as handle:
                config, name = json.load(handle), None
        report = describe(config, name=name)
    except OSError as error:
        print(f"error: cannot read {target}: {error.strerror or error}", file=sys.stderr)
        return 1
    except json.JSONDecodeError as error:
        print(f"error: {target} is not valid JSON: {error}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as error:
        print(f"error: {target}: {error}", file=sys.stderr)
        return 1
    print(report.to_text())
    return 0
