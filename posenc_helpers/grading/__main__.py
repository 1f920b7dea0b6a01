"""``python -m posenc_helpers.grading COMMAND``: the grading runtime's commands.

* ``one``: grade one submission against one course's release and write the autograded
  notebook and a JSON result (:mod:`posenc_helpers.grading.one`);
* ``stage`` and ``publish``: the first and last steps of a pod of the course's Kubernetes
  Job (:mod:`posenc_helpers.grading.pod`): ``stage --data DIR --to DIR`` and
  ``publish --from DIR --to DIR``, for the pod's ``JOB_COMPLETION_INDEX``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

COMMANDS = ("one", "stage", "publish")


def _pod_step(command: str, argv: list[str]) -> int:
    from .pod import publish, stage

    parser = argparse.ArgumentParser(prog=f"python -m posenc_helpers.grading {command}")
    if command == "stage":
        parser.add_argument("--data", type=Path, required=True, help="the assignment's folder on the shared volume")
        parser.add_argument("--to", type=Path, required=True, help="the pod's own inputs folder")
    else:
        parser.add_argument("--from", dest="source", type=Path, required=True, help="the grading step's --out")
        parser.add_argument("--to", type=Path, required=True, help="the results folder on the shared volume")
    args = parser.parse_args(argv)
    try:
        if command == "stage":
            entry = stage(args.data, args.to)
            print(f"staged submission {entry['index']} ({entry['student']})")
        else:
            print(f"published {publish(args.source, args.to)}")
    except (TypeError, ValueError, OSError) as error:
        print(f"{command}: {error}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command named by the first argument."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m posenc_helpers.grading {{{','.join(COMMANDS)}}} ... (--help for its options)",
              file=sys.stderr)  # fmt: skip
        return 2
    if argv[0] != "one":
        return _pod_step(argv[0], argv[1:])
    from .one import main as one

    return one(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
