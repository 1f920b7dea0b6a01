"""What a submission's folder may hold: regular files and folders, nothing that points elsewhere.

A student writes their submission's folder (nbgrader's exchange, a zip on Gradescope),
so its entries are the student's too. A symbolic link named ``notes.txt`` that points
at a file only the grader can read, or a hard link to one, would be read, copied and
shown back by any tool that follows it (``nbgrader collect`` run as root does; so does
``nbgrader autograde`` when it copies the folder). :func:`refused_entries` reads the
folder without following anything and names each entry a grader must not touch:
symbolic links, hard links (a regular file with more than one name), devices, FIFOs
and sockets. ``make collect`` and ``make grade`` refuse a submission that has one, with
that line in their report; the sandbox never sees the folder at all
(:mod:`posenc_helpers.grading.execute` sends in only the notebook).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["refused_entries", "describe_mode"]


def describe_mode(mode: int, links: int = 1) -> str | None:
    """What a grader must not follow or read, in words, for an entry of ``mode`` (``st_mode``)
    with ``links`` names; None for a folder or a regular file with one name.

    Examples
    --------
    >>> import stat
    >>> describe_mode(stat.S_IFLNK | 0o777)
    'a symbolic link'
    >>> describe_mode(stat.S_IFREG | 0o644, links=2)
    'a hard link (one of 2 names of the same file)'
    >>> describe_mode(stat.S_IFREG | 0o644) is None
    True
    """
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return None if links <= 1 else f"a hard link (one of {links} names of the same file)"
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "neither a file nor a folder"


def refused_entries(folder: Path) -> list[str]:
    """One line per entry of ``folder`` (at any depth) that a grader must not follow or read
    (:func:`describe_mode`), as ``"path/inside: what it is"``; ``folder`` itself included.
    Nothing is followed: a linked folder is reported, not entered."""
    if not isinstance(folder, Path):
        raise TypeError(f"folder must be a pathlib.Path; got {type(folder).__name__}")
    info = os.lstat(folder)
    what = describe_mode(info.st_mode, info.st_nlink if stat.S_ISREG(info.st_mode) else 1)
    if what is not None or not stat.S_ISDIR(info.st_mode):
        return [f"{folder.name}: {what or 'not a folder'}"]
    found: list[str] = []
    todo = [Path()]
    while todo:
        inside = todo.pop()
        with os.scandir(folder / inside) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                info = entry.stat(follow_symlinks=False)
                what = describe_mode(info.st_mode, info.st_nlink)
                if what is not None:
                    found.append(f"{(inside / entry.name).as_posix()}: {what}")
                elif stat.S_ISDIR(info.st_mode):
                    todo.append(inside / entry.name)
    return found
