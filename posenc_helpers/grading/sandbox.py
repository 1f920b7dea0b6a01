"""Running a student's code where it can change nothing else: bubblewrap, a budget, a cage.

The autograder runs each submission through :func:`run`, which wraps the command in
`bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian's package
``bubblewrap``), the sandbox Flatpak uses:

* a root of its own (a fresh tmpfs) in which only the runtime is visible, read-only:
  ``/usr`` and a few files of ``/etc``, the Python installation, the grading
  environment (the virtual environment) and the ``posenc_helpers`` package. The
  course folder, the gradebook, other submissions, the repository (with its model
  answers) and every home directory are absent;
* private ``/tmp`` (a tmpfs of at most ``Limits.tmp_bytes``), ``/proc`` and
  ``/dev``; new PID, network (loopback only), IPC and UTS namespaces, so the
  sandbox sees no other process and reaches no network;
* an empty environment but for the variables :func:`run` is given; bubblewrap's own
  arguments are read from a file descriptor (``--args``), so that no host path shows
  in the sandbox's ``/proc/1/cmdline``;
* a control group of its own (:mod:`posenc_helpers.grading.cgroups`), where the
  machine offers one: memory, CPU time and processes of the *whole* sandbox bounded,
  so that a fork bomb or a memory bomb slows no submission graded beside it;
* resource limits (``prlimit``) on each process: address space, CPU seconds,
  largest file, open files; a wall-clock limit after which the whole sandbox is
  killed; stdout and stderr kept only up to a tail;
* ``--die-with-parent`` and a PID namespace: when the command ends (or is killed),
  every process it started dies with it, double-forked daemons included.

Who runs as whom (as root): a plain command runs as a user of its own (uid
:data:`UID_BASE` + a slot) with no capability, ``no_new_privs`` and the seccomp filter
of :mod:`posenc_helpers.grading.confine`. A *supervisor* (``supervisor=True``: the
grader's runner, :mod:`posenc_helpers.grading.runner`) runs as root inside the sandbox
with only the capabilities it needs to start that confined user (:data:`SUPERVISOR_CAPS`)
and is told its uid (``--kernel-uid``):
the student's kernel then runs as another user than the process holding the result
pipe, and cannot signal, trace or read it.

The command returns its result over a pipe of its own (``--result-fd``), read up
to ``Limits.result_bytes``; what the command prints cannot reach it.

Where bubblewrap cannot make namespaces (a container such as Gradescope's, which
grades one submission), ``isolation="user"`` runs a plain command, or a supervisor's
kernel, as that user of its own, confined the same way, without namespaces;
``isolation="none"`` runs the command with the limits and the result pipe but no
isolation at all, only when the person grading asks for it (``make grade UNSAFE=1``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from . import cgroups, confine, container
from .launch import Limits, SandboxRun, SandboxUnavailable, run_process
from .runtime import runtime_paths, system_binds

__all__ = [
    "DEFAULT_LIMITS",
    "SUPERVISOR_CAPS",
    "Limits",
    "SandboxRun",
    "SandboxUnavailable",
    "UID_BASE",
    "available",
    "best_isolation",
    "run",
    "user_works",
    "sandbox_command",
]

#: The first uid a sandbox runs as when the grader is root (slot 0); slot k runs as
#: ``UID_BASE + k``. Debian leaves 65000-65533 unassigned; ``POSENC_SANDBOX_UID_BASE``
#: picks another range on a machine that uses it.
UID_BASE = int(os.environ.get("POSENC_SANDBOX_UID_BASE", "65000"))
SLOTS = 64  # sandboxes that may run at once on one machine
#: The limits of a sandbox that is given none: one chapter's
#: (:class:`~posenc_helpers.grading.launch.Limits`' defaults).
DEFAULT_LIMITS = Limits()


# --------------------------------------------------------------------------- the command line


def _bwrap() -> str | None:
    return shutil.which("bwrap") or next((p for p in ("/usr/bin/bwrap",) if Path(p).exists()), None)


_PROBE: dict[str, str | None] = {}


def available() -> str | None:
    """None when bubblewrap can make a sandbox here; otherwise why not (one sentence)."""
    if "answer" in _PROBE:
        return _PROBE["answer"]
    bwrap = _bwrap()
    if bwrap is None:
        answer: str | None = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap"
    else:
        try:
            probe = subprocess.run(
                [bwrap, *_namespaces(), *system_binds(), "--proc", "/proc", "--dev", "/dev", "--", "/usr/bin/true"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError as error:  # present but not executable (a container may ship it so)
            answer = f"bwrap cannot be run here: {error}"
        else:
            why = probe.stderr.strip()[-300:] or f"it exited with status {probe.returncode}"
            answer = None if probe.returncode == 0 else f"bwrap cannot make a sandbox here: {why}"
    _PROBE["answer"] = answer
    return answer


def _namespaces() -> list[str]:
    # As root, no user namespace: the command drops to a uid of its own with setpriv, which
    # only works where that uid exists (the initial user namespace). Otherwise bwrap needs one.
    unshare = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    return unshare if os.geteuid() == 0 else ["--unshare-user", *unshare]


#: The folder of the slots' lock files: one per machine, never under ``TMPDIR``.
SLOT_LOCKS = Path("/tmp/posenc-sandbox-slots")


@contextlib.contextmanager
def _slot() -> Iterator[int]:
    """A sandbox slot no other grading process on this machine holds (a lock file per slot).

    The locks are in :data:`SLOT_LOCKS`, one folder for the whole machine whatever
    ``TMPDIR`` says: a slot names its user and its control group (``slot-N``), so two
    graders that each kept their locks in a ``TMPDIR`` of their own (as a Kubernetes pod's
    entry point does, played on one machine) both took slot 0, and the first to finish
    removed the other's group and killed its runner.
    """
    folder = SLOT_LOCKS
    folder.mkdir(mode=0o700, exist_ok=True)
    for index in range(SLOTS):
        handle = (folder / f"{index}.lock").open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        try:
            yield index
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    raise SandboxUnavailable(f"all {SLOTS} sandbox slots of this machine are in use")


def sandbox_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    readonly: Sequence[Path | tuple[Path, str]] = (),
    writable: Sequence[tuple[Path, str]] = (),
    tmpfs: Sequence[str] = (),
    cwd: str = "/tmp",
    uid: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    supervisor: bool = False,
) -> list[str]:
    """The ``bwrap`` command line that runs ``argv`` sandboxed (see the module docstring).

    ``readonly`` are host folders or files shown read-only (at the same path, or at the
    path paired with them); ``writable`` host paths shown writable (only for trusted runs
    that fill a store); ``tmpfs`` further private folders; ``uid`` the confined user
    (root only). A plain ``argv`` runs as that user
    (:func:`~posenc_helpers.grading.confine.kernel_command`); a ``supervisor`` runs as
    root with :data:`SUPERVISOR_CAPS`, told ``--kernel-uid`` (without root: ``--confine``).
    """
    bwrap = _bwrap()
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    args = [bwrap, *_namespaces(), "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    made: set[str] = {"/", "/usr", "/proc", "/dev", "/tmp", *tmpfs}

    def folders_above(target: str) -> list[str]:
        """bwrap makes missing parent folders readable by root alone: make them 0755 first."""
        out: list[str] = []
        for parent in reversed(Path(target).parents):
            if str(parent) not in made:
                made.add(str(parent))
                out += ["--perms", "0755", "--dir", str(parent)]
        return out

    size = str(int(limits.tmp_bytes))  # /tmp first: a checkout under /tmp is shown inside it
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += ["--perms", "0755", "--dir", "/etc"] + system_binds()
    made.add("/etc")
    for path in runtime_paths():
        args += folders_above(str(path)) + ["--ro-bind", str(path), str(path)]
    for folder in tmpfs:  # before the binds, which may show files inside them
        args += folders_above(folder) + ["--perms", "1777", "--size", size, "--tmpfs", folder]
    for item in readonly:
        source, target = (item, str(item)) if isinstance(item, Path) else (item[0], item[1])
        args += folders_above(target) + ["--ro-bind", str(source), target]
    for source, target in writable:
        args += folders_above(target) + ["--bind", str(source), target]
    for key, value in env.items():
        args += ["--setenv", key, value]
    if uid is not None:  # setpriv's, to become the confined user; a supervisor keeps them
        args += [arg for cap in SUPERVISOR_CAPS for arg in ("--cap-add", cap)]
    args += ["--chdir", cwd, "--"]
    return args + _inner(argv, uid, limits, supervisor)


#: What a supervisor keeps, as root in its sandbox: enough to start its kernel as the
#: confined user (setpriv: the uid, the gid, the bounding set), to give it its working
#: folders, and to stop it.
SUPERVISOR_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_KILL", "CAP_CHOWN")


def _inner(argv: Sequence[str], uid: int | None, limits: Limits, supervisor: bool) -> list[str]:
    """What runs inside: a plain command confined as ``uid``; a supervisor told whom to confine."""
    if supervisor:
        return [*argv, "--kernel-uid", str(uid)] if uid is not None else [*argv, "--confine"]
    return confine.kernel_command(argv, uid, processes=int(limits.processes) if uid is not None else None)


#: How a command can be kept from the grader (see :func:`run`).
ISOLATIONS = ("bwrap", "user", "container", "none")


def best_isolation() -> str:
    """The strongest isolation this machine offers: "bwrap", else "user" (:func:`user_works`),
    else "none"."""
    if available() is None:
        return "bwrap"
    return "user" if user_works() else "none"


def user_works() -> bool:
    """Whether root can start a kernel of this Python as another user here, as the runner of
    ``isolation="user"`` does (:func:`~posenc_helpers.grading.confine.kernel_command`): a probe,
    since the runtime must be readable to that user once it runs."""
    if "user" not in _PROBE:
        _PROBE["user"] = None
        if os.geteuid() == 0 and Path("/usr/bin/setpriv").exists():
            code = (  # the same installation, and what a kernel imports
                "import sys, numpy, ipykernel.kernelapp, posenc_helpers.grading.record\n"
                f"assert sys.base_prefix == {sys.base_prefix!r}, sys.base_prefix\n"
            )
            probe = subprocess.run(
                confine.kernel_command([sys.executable, "-I", "-c", code], UID_BASE + SLOTS - 1),
                capture_output=True,
                timeout=120,
                cwd="/",
            )
            _PROBE["user"] = "ok" if probe.returncode == 0 else None
    return _PROBE["user"] == "ok"


def run(
    argv: Sequence[str],
    *,
    stdin: bytes = b"",
    env: Mapping[str, str] | None = None,
    readonly: Sequence[Path | tuple[Path, str]] = (),
    writable: Sequence[tuple[Path, str]] = (),
    tmpfs: Sequence[str] = (),
    cwd: str = "/tmp",
    limits: Limits = DEFAULT_LIMITS,
    isolation: str = "bwrap",
    owner_of: Sequence[Path] = (),
    supervisor: bool = False,
    budget: bool | None = None,
) -> SandboxRun:
    """Run ``argv`` kept from the grader and return how it ended, its result and its log.

    ``isolation`` is "bwrap" (the sandbox of the module docstring), "user" (no
    namespaces: the command, or a supervisor's kernel, runs as a user of its own, as
    root alone can arrange, so that Unix permissions keep it from root's files; for a
    container that grades one submission and cannot make namespaces, such as
    Gradescope's), "container" (no namespaces and no root: the container is the sandbox,
    allowed only where :func:`posenc_helpers.grading.container.missing_conditions` finds it
    confined; a supervisor's kernel runs under the seccomp filter, as the same user) or
    "none" (the same limits and result pipe, no isolation: only when the person grading
    asks for it). ``argv`` receives the result pipe's descriptor as
    ``--result-fd N`` (appended), and ``stdin`` on its standard input. A ``supervisor``
    (the grader's runner) is trusted: it is not confined itself, and starts what it runs
    for the student through :func:`posenc_helpers.grading.confine.kernel_command` with
    the uid it is given (``--kernel-uid``). ``owner_of`` are host folders that the
    confined user must own while it runs (as root); they are given back to root
    afterwards, with everything written in them. ``readonly``, ``writable``, ``tmpfs``
    and ``cwd`` are for "bwrap" alone. ``budget``: put the whole command in a control
    group of its own (:mod:`posenc_helpers.grading.cgroups`); None does so where the
    machine allows it, True requires it.

    Raises
    ------
    SandboxUnavailable
        If the isolation, or the budget, asked for cannot be had here.
    """
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}; got {isolation!r}")
    if budget not in (None, True, False):
        raise TypeError(f"budget must be True, False or None; got {budget!r}")
    if isolation == "bwrap" and (reason := available()) is not None:
        raise SandboxUnavailable(reason)
    if isolation == "user" and (os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists()):
        raise SandboxUnavailable("isolation 'user' needs root and /usr/bin/setpriv (util-linux)")
    if isolation == "container" and (missing := container.missing_conditions()):
        raise SandboxUnavailable("the container is not confined enough to be the sandbox: " + "; ".join(missing))
    if isolation != "none" and (reason := confine.available()) is not None:
        raise SandboxUnavailable(reason)
    if budget and (reason := cgroups.available()) is not None:
        raise SandboxUnavailable(reason)
    env = dict(env or {})
    with contextlib.ExitStack() as stack:
        uid = None
        if isolation == "user" or (isolation == "bwrap" and os.geteuid() == 0):
            slot = stack.enter_context(_slot())
            uid = UID_BASE + slot
            for folder in owner_of:
                _chown_tree(folder, uid)
                stack.callback(_chown_tree, folder, 0)
        group = None
        if budget or (budget is None and cgroups.available() is None):
            name = f"slot-{uid - UID_BASE}" if uid is not None else f"pid-{os.getpid()}-{threading.get_ident()}"
            group = stack.enter_context(cgroups.budget(name, _budget(limits)))
        read_end, write_end = os.pipe()
        command = [*argv, "--result-fd", str(write_end)]
        keep = [write_end]
        if isolation == "bwrap":
            command = sandbox_command(
                command, env=env, readonly=readonly, writable=writable, tmpfs=tmpfs, cwd=cwd, uid=uid,
                limits=limits, supervisor=supervisor,
            )  # fmt: skip
            command, arguments = _arguments_from_fd(command)
            keep.append(arguments)
        elif isolation in ("user", "container"):
            command = _inner(command, uid, limits, supervisor)
        return run_process(command, stdin, env, read_end, keep, limits, isolation=isolation, uid=uid, group=group)
    raise AssertionError("unreachable")  # pragma: no cover - the with block returns


def _budget(limits: Limits) -> cgroups.Budget:
    """The control group of a sandbox with ``limits``: its memory and cores, and room for the
    confined user's processes and the supervisor's own."""
    return cgroups.Budget(memory_bytes=limits.group_memory_bytes, cpus=limits.cpus, processes=2 * limits.processes)


def _arguments_from_fd(command: list[str]) -> tuple[list[str], int]:
    """``bwrap OPTIONS... -- COMMAND`` as ``bwrap --args FD -- COMMAND``, the options in an
    anonymous file: bubblewrap's first process in the sandbox is PID 1 there, and its
    command line would show every host path the sandbox binds."""
    split = command.index("--")
    fd = os.memfd_create("bwrap-args", 0)
    os.write(fd, b"".join(arg.encode() + b"\0" for arg in command[1:split]))
    os.lseek(fd, 0, os.SEEK_SET)
    return [command[0], "--args", str(fd), *command[split:]], fd


def _chown_tree(folder: Path, uid: int) -> None:
    if not folder.exists():
        return
    os.chown(folder, uid, uid)
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            with contextlib.suppress(FileNotFoundError):
                os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
