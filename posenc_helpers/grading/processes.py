"""The processes a sandboxed command left behind, found and killed (read from ``/proc``).

Inside bubblewrap a PID namespace takes every process down with the sandbox; a run
without one (``isolation="user"`` or ``"none"``, where namespaces cannot be made) has
to find what the command started, and what the user it ran as still runs, itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

__all__ = ["descendants", "processes_of", "kill_tree", "ancestors", "kill_strays"]


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (read from /proc), for runs without a PID namespace.

    Examples
    --------
    >>> import os
    >>> os.getpid() in descendants(os.getppid())
    True
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def processes_of(uid: int) -> list[int]:
    """Every process whose real uid is ``uid`` (read from /proc).

    Examples
    --------
    >>> import os
    >>> os.getpid() in processes_of(os.getuid())
    True
    """
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                line = next(x for x in (entry / "status").read_text().splitlines() if x.startswith("Uid:"))
                if int(line.split()[1]) == uid:
                    found.append(int(entry.name))
    return found


def kill_tree(process: subprocess.Popen[bytes], uid: int | None) -> None:
    """Kill the command's whole process group (bwrap takes the sandbox with it), every process
    it started that is still below it (a kernel runs in a session of its own), and every process
    of the user it ran as (daemons included); then reap it."""
    victims = descendants(process.pid) if process.poll() is None else []
    for _ in range(3 if uid is not None else 1):  # a process of the user may fork while it is killed
        for pid in victims + (processes_of(uid) if uid is not None else []):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    process.wait()


def ancestors(pid: int) -> list[int]:
    """``pid`` and every process above it, up to the first (read from /proc).

    Examples
    --------
    >>> import os
    >>> ancestors(os.getpid())[:2] == [os.getpid(), os.getppid()]
    True
    """
    found = [pid]
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if pid <= 0:
            break
        found.append(pid)
    return found


def kill_strays() -> int:
    """Kill every process of this user but this one and those above it; how many were signalled.

    For a container that is the sandbox (``isolation="container"``), where the student's kernel
    runs as the grader's own user: a daemon it double-forked is reparented to the container's
    first process, out of reach of :func:`kill_tree`, and would otherwise live on beside the
    grader while it writes the grades. Nothing else of the grader's user may run there.
    """
    keep = set(ancestors(os.getpid()))
    signalled = 0
    for _ in range(3):  # a process may fork while it is killed
        for pid in processes_of(os.getuid()):
            if pid not in keep:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    signalled += 1
    return signalled
