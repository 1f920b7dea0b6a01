"""The course tools' command line: ``python -m tools.course``.

::

    python -m tools.course [--out _build/course] [--force] [CHAPTER ...]   # make course
    python -m tools.course --otter [--out _build/otter] [--force] [CHAPTER ...]   # make otter
    python -m tools.course --student-copies DIR [--out _build/course] [--force]   # make student
    python -m tools.course --student-branch DIR [--out _build/course] [--force]   # make student-branch
    python -m tools.course --student-book   # make student-book

``OUT`` must be empty or absent, or a folder these tools wrote before, unless
``--force`` is given. ``make grade`` is ``python -m tools.course.grade`` and the
exercise numbers of ``make sync-setup`` are ``python -m tools.course.numbers``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tools.course.common import DEFAULT_OUT
from tools.course.nbgrader import write_course
from tools.course.otter import write_otter
from tools.course.record import chapters_with_exercises
from tools.course.student import build_student_book, write_student_branch, write_student_copies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course", description="The book's chapters as a course.")
    parser.add_argument("chapters", nargs="*", type=Path, help="chapter notebooks (default: all with exercises)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument("--force", action="store_true", help="write into a folder these tools did not make")
    parser.add_argument(
        "--student-copies",
        type=Path,
        metavar="DIR",
        help="only copy the course's release notebooks into DIR (after make course)",
    )
    parser.add_argument("--otter", action="store_true", help="write otter-grader assignments into --out instead")
    parser.add_argument(
        "--student-branch",
        type=Path,
        metavar="DIR",
        help="only write the student branch's tree into DIR (after make course)",
    )
    parser.add_argument("--student-book", action="store_true", help="build the website without solutions")
    args = parser.parse_args(argv)
    try:
        if args.student_book:
            return build_student_book()
        if args.student_branch is not None:
            copies = write_student_branch(args.out.resolve(), args.student_branch.resolve(), force=args.force)
            print(f"student branch in {args.student_branch}: {len(copies)} notebooks; publish it as the branch")
            return 0
        if args.student_copies is not None:
            copies = write_student_copies(args.out.resolve(), args.student_copies, force=args.force)
            print(f"{len(copies)} student notebooks in {args.student_copies}")
            return 0
        chapters = [path.resolve() for path in args.chapters] or chapters_with_exercises()
        if args.otter:  # the release runs in the sandbox (POSENC_GRADING_UNSAFE=1: without one)
            unsafe = os.environ.get("POSENC_GRADING_UNSAFE", "") not in ("", "0")
            zips = write_otter(args.out.resolve(), chapters, force=args.force, isolation="none" if unsafe else "bwrap")
            print(f"otter-grader assignments in {args.out}: {len(zips)} autograder zip files")
            return 0
        names = write_course(args.out.resolve(), chapters, force=args.force)
    except (FileExistsError, FileNotFoundError, ValueError) as error:
        print(error, file=sys.stderr)
        return 2
    except RuntimeError as error:  # no sandbox here (posenc_helpers.grading.sandbox.SandboxUnavailable)
        print(f"cannot run the release: {error}", file=sys.stderr)
        return 2
    print(f"nbgrader course in {args.out}: {', '.join(names)} (source/ and release/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
