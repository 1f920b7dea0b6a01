"""A budget per sandbox: a control group with its own memory, CPU and process limits.

Resource limits (``prlimit``) bound each *process* of a sandbox; a submission that starts
many processes (a fork bomb) or several large ones (a memory bomb) could still take a
machine from the submissions graded beside it. :func:`budget` puts one sandbox into a
control group of its own, made under the grader's own group:

* ``memory``: at most ``Budget.memory_bytes`` resident (and no swap), for the
  whole sandbox; past it the kernel's out-of-memory killer picks a process *of this
  group* (the student's kernel, which :mod:`~posenc_helpers.grading.confine` puts
  first in line);
* ``cpu``: at most ``Budget.cpus`` cores of CPU time (a CFS quota), so that a
  sandbox with many busy processes takes no more than one that has one;
* ``pids``: at most ``Budget.processes`` processes and threads.

On cgroup v2 (one unified hierarchy) the group is ``<own group>/posenc-grading/<name>``
with the three controllers enabled on the way; on a machine whose controllers are still
mounted as cgroup v1 hierarchies (``/sys/fs/cgroup/memory``, ``cpu``, ``pids``) it is
the same path in each of them (the files each writes are the kernel's [1]_). Making
either needs root (or a delegated group:
``POSENC_CGROUP_PARENT``). :func:`available` says whether it can be done here.

References
----------
.. [1] Linux kernel documentation, "Control Group v2" (``memory.max``,
   ``memory.swap.max``, ``cpu.max``, ``pids.max``, ``cgroup.kill``, the no-internal-
   process rule) and "Control Groups version 1" (``memory.limit_in_bytes``,
   ``cpu.cfs_quota_us``, ``pids.max``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Budget", "Group", "available", "budget", "hierarchies", "v1_folders"]

GROUP = "posenc-grading"
CONTROLLERS = ("memory", "cpu", "pids")
_PERIOD_US = 100_000


@dataclass(frozen=True)
class Budget:
    """What one sandbox may use, all its processes together.

    Attributes
    ----------
    memory_bytes : int
        Resident memory (and page cache) of the whole sandbox; no swap.
    cpus : float
        Cores' worth of CPU time (``cpus=1`` is one core, however many processes share it).
    processes : int
        Processes and threads at once.
    """

    memory_bytes: int = 4 * 2**30
    cpus: float = 1.0
    processes: int = 512

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "cpus", "processes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"Budget.{name} must be a positive number; got {value!r}")


@dataclass
class Group:
    """One sandbox's control group: a folder per hierarchy (one on cgroup v2)."""

    folders: list[Path]
    version: int

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its pid into to join the group."""
        return [folder / "cgroup.procs" for folder in self.folders]

    def pids(self) -> list[int]:
        found: set[int] = set()
        for path in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                found |= {int(line) for line in path.read_text().split()}
        return sorted(found)

    def peak_memory(self) -> int | None:
        """The most memory the group held (bytes), where the kernel reports it."""
        for folder in self.folders:
            for name in ("memory.peak", "memory.max_usage_in_bytes"):
                with contextlib.suppress(OSError, ValueError):
                    return int((folder / name).read_text())
        return None

    def throttled_seconds(self) -> float:
        """How long the group's CPU quota held it back, in seconds (``cpu.stat``: v1's
        ``throttled_time`` in nanoseconds, v2's ``throttled_usec``): above zero only when its
        processes together wanted more than their cores."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                for line in (folder / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "throttled_time":
                        return int(value) / 1e9
                    if key == "throttled_usec":
                        return int(value) / 1e6
        return 0.0

    def cpu_periods(self) -> int:
        """How many of the CPU quota's periods the group ran in (``cpu.stat``'s ``nr_periods``,
        both versions): above zero only while a quota is set on the group and it runs, however
        little of its quota the rest of the machine leaves it."""
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                for line in (folder / "cpu.stat").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "nr_periods":
                        return int(value)
        return 0

    def oom_kills(self) -> int:
        """How many processes of the group the out-of-memory killer ended."""
        for folder in self.folders:
            for name in ("memory.events", "memory.oom_control"):
                with contextlib.suppress(OSError):
                    for line in (folder / name).read_text().splitlines():
                        key, _, value = line.partition(" ")
                        if key == "oom_kill":
                            return int(value)
        return 0

    def kill(self) -> None:
        """Kill every process of the group (until none is left: a fork bomb forks while it dies)."""
        for folder in self.folders:
            with contextlib.suppress(OSError):
                (folder / "cgroup.kill").write_text("1")
        for _ in range(200):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for folder in self.folders:
            for _ in range(100):  # a killed process leaves its group a moment after it dies
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, type, options) of each cgroup mount in ``/proc/self/mountinfo``."""
    out = []
    for line in mountinfo.splitlines():
        head, _, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
            options = set(rest[2].split(",")) | set(fields[5].split(",") if len(fields) > 5 else [])
            out.append((fields[3], fields[4].replace("\\040", " "), rest[0], options))
    return out


def _own_paths(own: str) -> dict[str, str]:
    """Each controller's group path in ``/proc/self/cgroup`` (``""`` for the unified hierarchy)."""
    paths: dict[str, str] = {}
    for line in own.splitlines():
        number, controllers, path = line.split(":", 2)
        if number == "0" and controllers == "":
            paths[""] = path
        for controller in controllers.split(","):
            paths[controller] = path
    return paths


def _folder(root: str, point: str, path: str) -> Path:
    """The folder of group ``path`` in a hierarchy whose mount at ``point`` starts at ``root``."""
    inside = os.path.relpath(path, root) if path.startswith(root) else path.lstrip("/")
    return Path(point) / ("" if inside == "." else inside)


def v1_folders(mountinfo: str, own: str, controllers: tuple[str, ...]) -> dict[str, Path]:
    """This process's group folder in each cgroup v1 hierarchy of ``controllers``.

    ``mountinfo`` is the text of ``/proc/self/mountinfo``, ``own`` that of
    ``/proc/self/cgroup``. A controller without a v1 hierarchy is left out; the
    benchmarks use this for the ``cpuacct`` hierarchy, which :func:`budget` does not touch.

    Examples
    --------
    >>> mounts = "35 25 0:30 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct"
    >>> v1_folders(mounts, "4:cpu,cpuacct:/job\\n0::/", ("cpuacct", "memory"))
    {'cpuacct': PosixPath('/sys/fs/cgroup/cpu,cpuacct/job')}
    """
    for name, text in (("mountinfo", mountinfo), ("own", own)):
        if not isinstance(text, str):
            raise TypeError(f"{name} must be the text of a /proc file (str); got {type(text).__name__}")
    if not isinstance(controllers, tuple) or not all(isinstance(c, str) and c for c in controllers):
        raise TypeError(f"controllers must be a tuple of controller names, such as ('cpuacct',); got {controllers!r}")
    if any(line.count(":") < 2 for line in own.splitlines()):
        raise ValueError("own must hold lines of /proc/self/cgroup, each 'number:controllers:path'")
    paths = _own_paths(own)
    found: dict[str, Path] = {}
    for root, point, kind, options in _mounts(mountinfo):
        for controller in controllers:
            if kind == "cgroup" and controller in options and controller in paths and controller not in found:
                found[controller] = _folder(root, point, paths[controller])
    return {name: found[name] for name in controllers if name in found}


def hierarchies(mountinfo: str | None = None, own: str | None = None) -> tuple[int, dict[str, Path]] | None:
    """Where this process's group is, per controller: ``(2, {"": folder})`` on a cgroup v2
    machine whose unified hierarchy offers the controllers, ``(1, {"memory": folder, "cpu":
    ..., "pids": ...})`` where they are v1 hierarchies, None where neither holds them all.
    ``mountinfo`` and ``own`` (the text of ``/proc/self/cgroup``) are read when not given."""
    mountinfo = Path("/proc/self/mountinfo").read_text() if mountinfo is None else mountinfo
    own = Path("/proc/self/cgroup").read_text() if own is None else own
    v1 = v1_folders(mountinfo, own, CONTROLLERS)
    if set(v1) == set(CONTROLLERS):
        return 1, v1
    paths = _own_paths(own)
    for root, point, kind, _ in _mounts(mountinfo):
        if kind == "cgroup2" and "" in paths:
            base = _folder(root, point, paths[""])
            offered = set((Path(point) / "cgroup.controllers").read_text().split()) if Path(point).is_dir() else set()
            if set(CONTROLLERS) <= offered or os.environ.get("POSENC_CGROUP_PARENT"):
                parent = os.environ.get("POSENC_CGROUP_PARENT")
                return 2, {"": Path(parent) if parent else base}
    return None


_PROBE: dict[str, str | None] = {}


def available() -> str | None:
    """None when :func:`budget` can make a group here; otherwise why not (one sentence)."""
    if "answer" in _PROBE:
        return _PROBE["answer"]
    answer: str | None = None
    try:  # a name of this process's own: two graders probing at once each remove only theirs
        with budget(f"probe-{os.getpid()}", Budget()):
            pass
    except (OSError, RuntimeError) as error:
        answer = f"no control group can be made for a sandbox here: {error}"
    _PROBE["answer"] = answer
    return answer


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _make_v1(folders: dict[str, Path], name: str, limits: Budget) -> Group:
    made = []
    try:
        for controller in CONTROLLERS:
            folder = folders[controller] / GROUP / name
            folder.mkdir(parents=True, exist_ok=True)
            made.append(folder)
        memory, cpu, pids = (folders[c] / GROUP / name for c in CONTROLLERS)
        _write(memory / "memory.limit_in_bytes", str(int(limits.memory_bytes)))
        if (memory / "memory.memsw.limit_in_bytes").exists():
            with contextlib.suppress(OSError):  # only where swap accounting is on
                _write(memory / "memory.memsw.limit_in_bytes", str(int(limits.memory_bytes)))
        _write(cpu / "cpu.cfs_period_us", str(_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(max(1000, int(limits.cpus * _PERIOD_US))))
        _write(pids / "pids.max", str(int(limits.processes)))
    except BaseException:
        Group(made, 1).remove()
        raise
    return Group(made, 1)


def _make_v2(parent: Path, name: str, limits: Budget) -> Group:
    enable = " ".join(f"+{c}" for c in CONTROLLERS)
    top = parent / GROUP
    try:
        _write(parent / "cgroup.subtree_control", enable)
    except OSError as error:
        raise RuntimeError(
            f"cannot enable {', '.join(CONTROLLERS)} below {parent} ({error.strerror}): a group that holds "
            "processes cannot delegate them; run the grader in a group of its own or set POSENC_CGROUP_PARENT "
            "to a delegated group"
        ) from None
    top.mkdir(exist_ok=True)
    _write(top / "cgroup.subtree_control", enable)
    folder = top / name
    folder.mkdir(exist_ok=True)
    group = Group([folder], 2)
    try:
        _write(folder / "memory.max", str(int(limits.memory_bytes)))
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        _write(folder / "cpu.max", f"{max(1000, int(limits.cpus * _PERIOD_US))} {_PERIOD_US}")
        _write(folder / "pids.max", str(int(limits.processes)))
    except BaseException:
        group.remove()
        raise
    return group


@contextlib.contextmanager
def budget(name: str, limits: Budget) -> Iterator[Group]:
    """A control group named ``name`` (one per sandbox slot) with ``limits``, removed (its
    processes killed) on exit.

    Raises
    ------
    RuntimeError
        Where no group can be made (see :func:`available`).
    """
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be a plain folder name; got {name!r}")
    if not isinstance(limits, Budget):
        raise TypeError(f"limits must be a Budget; got {type(limits).__name__}")
    found = hierarchies()
    if found is None:
        raise RuntimeError("this machine's cgroup file system offers no memory, cpu and pids controllers")
    version, folders = found
    try:
        group = _make_v1(folders, name, limits) if version == 1 else _make_v2(folders[""], name, limits)
    except PermissionError as error:
        raise RuntimeError(f"no right to make a group ({error.filename}): grade as root") from None
    try:
        yield group
    finally:
        group.remove()
