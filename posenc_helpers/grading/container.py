"""Grading inside a container that is itself the sandbox: when, and only when, it is confined.

Bubblewrap needs to make namespaces. Inside many containers (a Kubernetes pod with the
runtime's default seccomp profile, Gradescope's) it cannot, and the grader then has two
choices: refuse, or let the container be the sandbox. :func:`choose_isolation` lets the
container be the sandbox only when each of these holds, each checked here, not assumed:

* the grader runs as a user other than root (the student's kernel, its child, then
  has no capability either and cannot change the container);
* the root filesystem is mounted read-only (nothing of the grading environment, the
  package or Python, can be changed for the runs after this one);
* the only network interface is loopback (nothing leaves the pod, and nothing reaches
  it: a NetworkPolicy alone leaves the interface, so it is not enough here);
* the seccomp filter of :mod:`posenc_helpers.grading.confine` can be built (the kernel
  is started under it, as in the sandbox: it cannot trace or read the grader's runner).

Then the grade runs with ``isolation="container"``
(:func:`posenc_helpers.grading.sandbox.run`): the runner and the kernel run as the
container's user, the kernel under the filter. Otherwise the grader refuses, naming
each condition that fails. It never falls back to something weaker without saying so:
the choice and its reasons go to standard error and into the JSON result
(:mod:`posenc_helpers.grading.one`).

The probes are plain functions of this module (:data:`PROBES`) so that tests replace
them one by one.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import confine, sandbox

__all__ = [
    "CONDITIONS",
    "Isolation",
    "NoConfinedSandbox",
    "PROBES",
    "choose_isolation",
    "missing_conditions",
    "network_interfaces",
    "root_is_read_only",
]

#: The condition each probe checks, in words (what the refusal names when it fails).
CONDITIONS = {
    "non_root": "a user other than root (runAsNonRoot, runAsUser)",
    "read_only_root": "a read-only root filesystem (readOnlyRootFilesystem: true)",
    "no_network": "no network interface but loopback (the pod has one: run it without a network)",
    "seccomp": "the kernel's seccomp filter (pyseccomp and libseccomp2 in the image)",
}


class NoConfinedSandbox(RuntimeError):
    """Neither bubblewrap nor a confined container is here: the grader will not run."""


def root_is_read_only(path: str = "/") -> bool:
    """Whether the filesystem holding ``path`` is mounted read-only (``statvfs``'s ``ST_RDONLY``)."""
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def network_interfaces() -> list[str]:
    """The names of this network namespace's interfaces, loopback included."""
    try:
        return sorted(name for _, name in socket.if_nameindex())
    except OSError:
        folder = Path("/sys/class/net")
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _non_root() -> bool:
    return os.geteuid() != 0


def _no_network() -> bool:
    return all(name == "lo" for name in network_interfaces())


def _seccomp() -> bool:
    return confine.available() is None


def _read_only_root() -> bool:
    return root_is_read_only("/")


#: The probes, by condition; each returns True when its condition holds.
PROBES: dict[str, Callable[[], bool]] = {
    "non_root": _non_root,
    "read_only_root": _read_only_root,
    "no_network": _no_network,
    "seccomp": _seccomp,
}


def missing_conditions() -> list[str]:
    """The conditions of :data:`CONDITIONS` that do not hold here, in words, in their order."""
    return [CONDITIONS[name] for name, probe in PROBES.items() if not probe()]


@dataclass
class Isolation:
    """How a submission is kept from the grader here, and why.

    Attributes
    ----------
    kind : str
        ``"bwrap"`` (bubblewrap's sandbox), ``"container"`` (the confined container is the
        sandbox) or ``"none"`` (the person grading asked for no sandbox).
    notes : list of str
        What was found on the way, in sentences (empty for bubblewrap).
    """

    kind: str
    notes: list[str] = field(default_factory=list)


def choose_isolation(*, unsafe: bool = False, allow_container: bool = True) -> Isolation:
    """The isolation a grade runs with here: bubblewrap where it can make a sandbox, else the
    container where it is confined (every condition of :data:`CONDITIONS`), else none at all
    when ``unsafe`` (asked for by the person grading).

    Raises
    ------
    NoConfinedSandbox
        Bubblewrap cannot make a sandbox, the container is not confined (the message names
        each missing condition) and ``unsafe`` is False.
    """
    if not isinstance(unsafe, bool) or not isinstance(allow_container, bool):
        raise TypeError("unsafe and allow_container must be True or False")
    reason = sandbox.available()
    if reason is None:
        return Isolation("bwrap")
    notes = [f"bubblewrap cannot make a sandbox here ({reason})"]
    if allow_container:
        missing = missing_conditions()
        if not missing:
            notes.append(
                "the container is the sandbox: a non-root user, a read-only root filesystem, "
                "loopback only; the kernel runs under the seccomp filter"
            )
            return Isolation("container", notes)
        notes.append("the container is not confined enough to be the sandbox; it lacks: " + "; ".join(missing))
    if unsafe:
        notes.append("grading WITHOUT a sandbox, as asked: the student's code can reach this machine")
        return Isolation("none", notes)
    raise NoConfinedSandbox(". ".join(notes) + ". Nothing was graded.")
