"""The student's kernel confined: a user of its own, no capabilities, and a seccomp filter.

A sandbox holds two programs (:mod:`posenc_helpers.grading.runner`): the runner, the
grader's own code, which reads the job and writes the result, and the kernel it starts,
which runs the student's code. The kernel must not reach the runner: with the runner's
result pipe in hand it could write a grade of its own. So the runner starts every kernel
through this module's :func:`kernel_command`:

* ``python -I .../posenc_helpers/grading/confine.py`` sets the process limit of the
  kernel's user, marks the kernel first in line for the out-of-memory killer, sets
  ``no_new_privs`` and loads the seccomp filter of :func:`seccomp_filter`, which the
  kernel and everything it starts keep;
* ``setpriv`` (util-linux) then makes it a user of its own (``uid``), different from
  the runner's, with no capability and no supplementary group, and ``exec``\\ s the
  kernel. The kernel can then neither signal nor trace the runner, nor open its
  ``/proc`` entries (the runner also makes itself non-dumpable).

The filter refuses (``EPERM``) the system calls that reach into another process or
out of the sandbox: :data:`DENIED`, new namespaces (``unshare``, and ``clone`` with a
namespace flag), and ``clone3`` (``ENOSYS``, whose arguments a filter cannot read, so
that the C library falls back to ``clone``, as Docker's default profile does). It is
compiled by libseccomp [2]_, through the ctypes bindings of ``pyseccomp``. What each
refused call would give another process, and why a different user and a non-dumpable
runner already keep it out, is in the man pages [1]_.

References
----------
.. [1] Linux man-pages, seccomp(2), ptrace(2) ("Ptrace access mode checking"),
   pidfd_getfd(2), prctl(2) (``PR_SET_DUMPABLE``, ``PR_SET_NO_NEW_PRIVS``).
.. [2] libseccomp, https://github.com/seccomp/libseccomp; Moby's default seccomp profile,
   https://github.com/moby/moby/blob/master/profiles/seccomp/default.json (``clone3``
   answered with ``ENOSYS``).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import resource
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["DENIED", "NAMESPACE_FLAGS", "available", "kernel_command", "make_non_dumpable", "seccomp_filter", "main"]

#: System calls the kernel is refused: reading or writing another process (``ptrace``,
#: ``process_vm_*``, ``pidfd_getfd``, ``kcmp``), profiling it (``perf_event_open``), and
#: what only a system's administrator does (mounts, modules, keys, BPF, io_uring, whose
#: operations a seccomp filter would not see).
DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "perf_event_open",
    "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount",
    "fsconfig", "fspick", "bpf", "userfaultfd", "keyctl", "add_key", "request_key", "init_module",
    "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "acct", "quotactl", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "syslog",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "lookup_dcookie", "fanotify_init",
)  # fmt: skip

#: The ``clone`` and ``unshare`` flags of a new namespace (linux/sched.h).
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}

_PR_SET_DUMPABLE = 4


def available() -> str | None:
    """None when the filter can be compiled here; otherwise why not (one sentence)."""
    try:
        seccomp_filter()
    except (ImportError, OSError, RuntimeError) as error:
        return f"the kernel's seccomp filter cannot be built here ({error}): pip install pyseccomp (libseccomp2)"
    return None


def seccomp_filter() -> Any:
    """The kernel's filter (a ``pyseccomp.SyscallFilter``, not loaded): every system call is
    allowed but those of :data:`DENIED` and new namespaces (``EPERM``) and ``clone3`` (``ENOSYS``)."""
    import pyseccomp as seccomp  # type: ignore[import-untyped]

    flags = 0
    for value in NAMESPACE_FLAGS.values():
        flags |= value
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        with contextlib.suppress(RuntimeError, ValueError):  # a call this kernel's architecture lacks
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for name in ("unshare", "clone"):
        for flag in NAMESPACE_FLAGS.values():
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name, seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    return rules


def make_non_dumpable() -> None:
    """``prctl(PR_SET_DUMPABLE, 0)`` for this process: no core dump, no ``ptrace`` or
    ``/proc/<pid>/fd`` access by a process of the same user without ``CAP_SYS_PTRACE``."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def kernel_command(argv: Sequence[str], uid: int | None, *, processes: int | None = None) -> list[str]:
    """The command that runs ``argv`` confined: under the seccomp filter, then as ``uid``
    (``setpriv``; None: as the caller, for a grader that is not root, whose sandbox maps a
    single user) with at most ``processes`` processes of that user.

    The filter is loaded first, by the caller's user, and ``setpriv`` changes the user
    last: the ``exec`` of ``argv`` is then still made with the caller's rights, so that a
    Python installed under a folder the new user cannot search (root's home) still starts.
    """
    if uid is not None and (isinstance(uid, bool) or not isinstance(uid, int) or uid <= 0):
        raise ValueError(f"uid must be a positive user id or None; got {uid!r}")
    # Run by its path, not with -m: importing the package would import numpy and the rest
    # (about a quarter of a second at every kernel start); this module needs only pyseccomp.
    command = [sys.executable, "-I", str(Path(__file__).resolve())]
    if processes is not None:
        command += ["--processes", str(int(processes))]
    command.append("--")
    if uid is not None:
        command += [
            "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--",
        ]  # fmt: skip
    return command + list(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Load the filter and ``exec`` the command (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -I posenc_helpers/grading/confine.py")
    parser.add_argument("--processes", type=int, default=None, help="RLIMIT_NPROC of the command's user")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run after --")
    if args.processes is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (args.processes, args.processes))
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
        handle.write("1000")  # the kernel, not the runner, is the one to go when memory runs out
    try:
        rules = seccomp_filter()
        rules.load()  # libseccomp sets no_new_privs first, as an unprivileged filter needs
    except Exception as error:  # noqa: BLE001 - whatever stops the filter stops the kernel
        print(f"posenc_helpers.grading.confine: the seccomp filter could not be loaded: {error}", file=sys.stderr)
        return 126
    os.execv(command[0], command)
    return 127  # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
