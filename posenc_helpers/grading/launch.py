"""Starting a sandbox's command and reading back what it wrote, within its limits.

:func:`run_process` is the last step of :func:`posenc_helpers.grading.sandbox.run`:
the command (already wrapped in bubblewrap, or confined as a user of its own) starts
under ``prlimit``'s resource limits, joins its control group
(:mod:`posenc_helpers.grading.cgroups`) before it becomes the command, gets its job on
standard input, and has its result pipe and its log read by threads of their own, each
up to its size; at the wall-clock limit, or when it ends, everything it started is
killed (:mod:`posenc_helpers.grading.processes`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import cgroups
from .processes import kill_strays, kill_tree

__all__ = ["Limits", "SandboxRun", "SandboxUnavailable", "run_process"]

_GiB = 2**30
_MiB = 2**20


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is missing or cannot create a sandbox on this machine."""


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use. Every field is a ceiling; the defaults suit one chapter.

    Attributes
    ----------
    wall_seconds : float
        Wall-clock time of the whole run; then every process of the sandbox is killed.
    cpu_seconds : int
        CPU time of each process (``RLIMIT_CPU``).
    memory_bytes : int
        Address space of each process (``RLIMIT_AS``). Chapter 11's kernel, which
        trains with JAX, is the largest.
    file_bytes : int
        The largest file a process may write (``RLIMIT_FSIZE``).
    tmp_bytes : int
        Size of the private ``/tmp`` (and of each other tmpfs): memory, not disk.
    processes : int
        Processes and threads of the sandbox's confined user (``RLIMIT_NPROC``), when the
        grader is root; the sandbox's control group allows twice as many, the runner's
        included.
    group_memory_bytes : int
        Resident memory of the whole sandbox (its control group), when it has one.
    cpus : float
        Cores' worth of CPU time the whole sandbox may use (its control group).
    open_files : int
        Open file descriptors per process (``RLIMIT_NOFILE``).
    result_bytes : int
        What is read from the result pipe; more is discarded and the result marked truncated.
    log_bytes : int
        The tail of stdout and stderr that is kept.
    """

    wall_seconds: float = 900.0
    cpu_seconds: int = 1800
    memory_bytes: int = 6 * _GiB
    file_bytes: int = 256 * _MiB
    tmp_bytes: int = 1 * _GiB
    processes: int = 256
    group_memory_bytes: int = 4 * _GiB
    cpus: float = 1.0
    open_files: int = 1024
    result_bytes: int = 192 * _MiB
    log_bytes: int = 64 * 1024

    def __post_init__(self) -> None:
        for name in (
            "wall_seconds",
            "cpu_seconds",
            "memory_bytes",
            "file_bytes",
            "tmp_bytes",
            "processes",
            "group_memory_bytes",
            "cpus",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"Limits.{name} must be a positive number; got {value!r}")


@dataclass
class SandboxRun:
    """What a sandboxed command did: how it ended, its result and the tail of its log."""

    returncode: int | None
    timed_out: bool
    seconds: float
    result: bytes
    result_truncated: bool
    log: str
    isolation: str
    command: list[str] = field(default_factory=list)
    budget: str = "none"  # "cgroup v1", "cgroup v2" or "none": what bounded the whole sandbox
    peak_memory: int | None = None  # the most memory the sandbox's group held, in bytes
    oom_kills: int = 0  # processes the out-of-memory killer ended in the sandbox's group
    throttled_seconds: float = 0.0  # how long the group's CPU quota held the sandbox back
    cpu_periods: int = 0  # the CPU quota's periods the sandbox's group ran in (0: no quota in force)


def _limited(command: list[str], limits: Limits) -> list[str]:
    """``command`` under the resource limits, set by util-linux's ``prlimit`` (inherited by
    everything it starts). Not by ``preexec_fn``: that makes Python run its fork handlers in
    the grader, and JAX's, where the grader has imported it, warns of a deadlock."""
    options = [
        f"--as={int(limits.memory_bytes)}",
        f"--cpu={int(limits.cpu_seconds)}",
        f"--fsize={int(limits.file_bytes)}",
        f"--nofile={int(limits.open_files)}",
        "--core=0",
    ]
    prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
    if not Path(prlimit).exists():
        raise SandboxUnavailable("prlimit (util-linux) is not installed: it sets the sandbox's resource limits")
    return [prlimit, *options, "--", *command]


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping at most ``limit`` bytes (the head, or the tail)."""

    def __init__(self, fd: int, limit: int, *, tail: bool) -> None:
        super().__init__(daemon=True)
        self.fd, self.limit, self.tail = fd, limit, tail
        self.chunks: list[bytes] = []
        self.kept = 0
        self.truncated = False

    def run(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self.fd, 1 << 16):
                if self.tail:
                    self.chunks.append(chunk)
                    self.kept += len(chunk)
                    while self.kept - len(self.chunks[0]) >= self.limit:
                        self.kept -= len(self.chunks.pop(0))
                        self.truncated = True
                elif self.kept < self.limit:
                    piece = chunk[: self.limit - self.kept]
                    self.chunks.append(piece)
                    self.kept += len(piece)
                    self.truncated |= len(piece) < len(chunk)
                else:
                    self.truncated = True

    def data(self) -> bytes:
        data = b"".join(self.chunks)
        return data[-self.limit :] if self.tail else data


#: Joins the control groups named by its arguments (up to ``--``), then becomes the command.
_JOIN = 'while [ "$1" != "--" ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def run_process(
    command: list[str],
    stdin: bytes,
    env: Mapping[str, str],
    read_end: int,
    keep: list[int],
    limits: Limits,
    *,
    isolation: str,
    uid: int | None,
    group: cgroups.Group | None,
) -> SandboxRun:
    """Run ``command`` (a sandbox's, made by :func:`posenc_helpers.grading.sandbox.run`) and
    return how it ended.

    ``stdin`` is written to its standard input; ``read_end`` is the grader's end of the result
    pipe whose other end, among ``keep`` (descriptors the command inherits, closed here once it
    started), the command writes; ``group`` its control group, which it joins before it becomes
    the command. ``isolation`` and ``uid`` say how to find what it leaves behind.
    """
    start = time.monotonic()
    command = _limited(command, limits)
    if group is not None:
        command = ["/bin/sh", "-c", _JOIN, "sh", *map(str, group.procs_files), "--", *command]
    log_read, log_write = os.pipe()
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=log_write,
            stderr=log_write,
            pass_fds=tuple(keep),
            env=dict(env) if isolation != "bwrap" else {"PATH": "/usr/bin:/bin"},
            start_new_session=True,
        )
    finally:
        for fd in (*keep, log_write):
            os.close(fd)
    result, log = _Drain(read_end, limits.result_bytes, tail=False), _Drain(log_read, limits.log_bytes, tail=True)
    result.start()
    log.start()
    feeder = threading.Thread(target=_feed, args=(process, stdin), daemon=True)
    feeder.start()
    timed_out = False
    try:
        process.wait(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        peak, kills = (group.peak_memory(), group.oom_kills()) if group is not None else (None, 0)
        throttled = group.throttled_seconds() if group is not None else 0.0
        periods = group.cpu_periods() if group is not None else 0
        if group is not None:
            group.kill()
        kill_tree(process, uid if isolation == "user" else None)
        if isolation == "container":  # the kernel ran as the grader's user: its daemons too
            kill_strays()
        # Every process of a sandbox dies with it; unsandboxed, a process that kept the pipes
        # open must not hold up the grader, so their readers get a moment, then the pipes close.
        for reader in (result, log):
            reader.join(timeout=5.0)
        for fd in (read_end, log_read):
            with contextlib.suppress(OSError):
                os.close(fd)
    return SandboxRun(
        returncode=process.returncode,
        timed_out=timed_out,
        seconds=time.monotonic() - start,
        result=result.data(),
        result_truncated=result.truncated,
        log=log.data().decode("utf-8", "replace"),
        isolation=isolation,
        command=command,
        budget="none" if group is None else f"cgroup v{group.version}",
        peak_memory=peak,
        oom_kills=kills,
        throttled_seconds=throttled,
        cpu_periods=periods,
    )


def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.write(data)
    with contextlib.suppress(OSError):
        process.stdin.close()
