"""Collect submissions from nbgrader's exchange without following a student's link: ``make collect``.

Run it as a program, in (or with ``--course``) a course that ``make course`` wrote::

    python -m tools.course.collect ASSIGNMENT [--course _build/course] [--exchange DIR] [--update]

``nbgrader collect`` copies each submission folder out of the exchange's ``inbound``
with ``shutil.copytree``, which follows symbolic links: run as root, as a course
server's collect step usually is, it copies whatever a student's link points at (a
file only root can read, the gradebook) into ``submitted/``. The exchange's
``inbound`` is writable by every student, so its entries are theirs.

This program first copies each student's latest submission of ``ASSIGNMENT`` (the one
``nbgrader collect`` would pick) into a private exchange of its own, reading every entry
through a descriptor opened relative to its folder's own descriptor, without following
links (``O_NOFOLLOW``), and checking with ``fstat`` what it opened. A submission is
refused, with one line, and not collected when it holds a symbolic link, a hard link,
a device, a FIFO or a socket (:func:`posenc_helpers.grading.submission.describe_mode`),
when it lacks the ``timestamp.txt`` and ``submission_secret.txt`` that ``nbgrader
submit`` writes (without the secret, ``nbgrader release_feedback`` would stop at it, before
the students after it), or when it is larger than :data:`MAX_BYTES`. Then it runs
``nbgrader collect`` on the private copy, which holds only regular files. The private
folder keeps each submission's owner (as root), so nbgrader's owner check still works.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from posenc_helpers.grading.submission import describe_mode
from tools.course.common import DEFAULT_OUT
from tools.course.nbgrader import run_nbgrader

__all__ = ["MAX_BYTES", "Collected", "collect", "main", "NBGRADER_EXCHANGE"]

MAX_BYTES = 64 * 2**20  # one submission, every file together
#: Where nbgrader looks for its exchange by default (``Exchange.root``).
NBGRADER_EXCHANGE = Path("/usr/local/share/nbgrader/exchange")
#: What ``nbgrader submit`` writes into every submission.
REQUIRED = ("timestamp.txt", "submission_secret.txt")
_ASSIGNMENT = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass
class Collected:
    """What one run collected (student ids) and refused (student id -> why)."""

    collected: list[str]
    refused: dict[str, str]


def course_id(course: Path) -> str:
    """The course id in the course's ``nbgrader_config.py`` (``c.CourseDirectory.course_id``)."""
    config = course / "nbgrader_config.py"
    found = re.search(r"course_id\s*=\s*['\"]([^'\"]+)['\"]", config.read_text()) if config.is_file() else None
    if found is None:
        raise FileNotFoundError(f"{config} names no course id: run make course first")
    return found.group(1)


def latest(inbound: Path, assignment: str) -> dict[str, str]:
    """Each student's latest submission of ``assignment`` in ``inbound``: student -> folder name.
    Names are read as nbgrader reads them (``student+assignment+timestamp[+random]``, split
    from the right); its timestamps sort as text in time order."""
    chosen: dict[str, tuple[str, str]] = {}
    for entry in os.listdir(inbound):
        parts = entry.rsplit("+", 3)
        if len(parts) < 3 or parts[1] != assignment:
            continue
        student, timestamp = parts[0], parts[2]
        if student not in chosen or timestamp > chosen[student][0]:
            chosen[student] = (timestamp, entry)
    return {student: entry for student, (_, entry) in sorted(chosen.items())}


class Refused(Exception):
    """A submission a grader must not collect; the message says why."""


def _copy_folder(source: int, target: Path, where: str, budget: list[int], refusals: list[str]) -> None:
    """Copy the folder open at descriptor ``source`` into ``target`` (made), entry by entry,
    following nothing; each entry that is not a regular file with one name or a folder is
    left out and named in ``refusals``. Raise :class:`Refused` past the size budget."""
    target.mkdir(mode=0o755)
    for name in sorted(os.listdir(source)):
        inside = f"{where}{name}"
        info = os.stat(name, dir_fd=source, follow_symlinks=False)
        what = describe_mode(info.st_mode, info.st_nlink)
        if what is not None:
            refusals.append(f"{inside}: {what}")
            continue
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        if stat.S_ISDIR(info.st_mode):
            flags |= os.O_DIRECTORY
        try:
            descriptor = os.open(name, flags, dir_fd=source)
        except OSError as error:  # replaced by a link or a FIFO since it was looked at
            refusals.append(f"{inside}: could not be opened without following it ({error.strerror})")
            continue
        try:
            opened = os.fstat(descriptor)
            what = describe_mode(opened.st_mode, opened.st_nlink)
            if what is not None or stat.S_IFMT(opened.st_mode) != stat.S_IFMT(info.st_mode):
                refusals.append(f"{inside}: {what or 'changed while it was read'}")
                continue
            if stat.S_ISDIR(opened.st_mode):
                _copy_folder(descriptor, target / name, f"{inside}/", budget, refusals)
                continue
            budget[0] -= opened.st_size
            if budget[0] < 0:
                raise Refused(f"larger than the {MAX_BYTES // 2**20} MiB a submission may hold")
            with open(target / name, "wb") as out:
                while chunk := os.read(descriptor, 1 << 20):
                    budget[0] -= max(0, len(chunk) - opened.st_size)  # a file that grew while read
                    out.write(chunk)
        finally:
            os.close(descriptor)


def copy_submission(source: Path, target: Path) -> None:
    """Copy the submission folder ``source`` into ``target`` following nothing (see the module
    docstring), with ``source``'s owner where this process may set it.

    Raises
    ------
    Refused
        If it holds anything but folders and regular files with one name, lacks one of
        :data:`REQUIRED`, or is larger than :data:`MAX_BYTES`; ``target`` is then removed.
    """
    try:
        top = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise Refused(
            f"{source.name}: not a folder that can be opened without following it ({error.strerror})"
        ) from None
    refusals: list[str] = []
    try:
        owner = os.fstat(top)
        _copy_folder(top, target, "", [MAX_BYTES], refusals)
        missing = [name for name in REQUIRED if not (target / name).is_file()]
        if missing:
            refusals.append(f"no {' and no '.join(missing)} (nbgrader submit writes them)")
        if refusals:
            raise Refused("; ".join(refusals))
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        os.close(top)
    if os.geteuid() == 0:
        os.chown(target, owner.st_uid, owner.st_gid)


def collect(course: Path, assignment: str, exchange: Path, *, update: bool = False) -> Collected:
    """Collect ``assignment`` from ``exchange`` into ``course/submitted`` (see the module docstring)."""
    if not isinstance(assignment, str) or not _ASSIGNMENT.match(assignment):
        raise ValueError(f"assignment must be an assignment name such as 'ch04'; got {assignment!r}")
    identifier = course_id(course)
    inbound = exchange / identifier / "inbound"
    if not inbound.is_dir():
        raise FileNotFoundError(f"no inbound folder for course {identifier!r} in the exchange {exchange}")
    chosen = latest(inbound, assignment)
    refused: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="posenc-collect-") as scratch:
        private = Path(scratch) / "exchange"
        staged = private / identifier / "inbound"
        staged.mkdir(parents=True)
        for student, entry in chosen.items():
            try:
                copy_submission(inbound / entry, staged / entry)
            except Refused as why:
                refused[student] = str(why)
        collected = sorted(set(chosen) - set(refused))
        if collected:  # the private exchange holds only these, each the student's latest
            arguments = ["collect", assignment, f"--Exchange.root={private}", *(["--update"] if update else [])]
            run_nbgrader(arguments, course)
    return Collected(collected, refused)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.course.collect", description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="the assignment, e.g. ch04")
    parser.add_argument("--course", type=Path, default=DEFAULT_OUT, help="the course folder (default _build/course)")
    parser.add_argument(
        "--exchange", type=Path, default=NBGRADER_EXCHANGE, help=f"nbgrader's exchange (default {NBGRADER_EXCHANGE})"
    )
    parser.add_argument("--update", action="store_true", help="replace submissions collected before with newer ones")
    args = parser.parse_args(argv)
    try:
        done = collect(args.course.resolve(), args.assignment, args.exchange, update=args.update)
    except (ValueError, FileNotFoundError) as error:
        print(error, file=sys.stderr)
        return 2
    print(f"{args.assignment}: {len(done.collected)} submissions collected, {len(done.refused)} refused")
    for student, why in done.refused.items():
        print(f"  {student}: refused, not collected: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
