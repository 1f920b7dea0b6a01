"""Whether the container the grader runs in is confined enough to be the sandbox itself.

Bubblewrap needs to make namespaces. Inside many containers (a Kubernetes pod with the
runtime's default seccomp profile, Gradescope's) it cannot, and the grader then has two
choices: refuse, or let the container be the sandbox.
:func:`posenc_helpers.grading.isolation.choose_isolation` lets the container be the
sandbox only when each of these holds, each checked here, not assumed:

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
from pathlib import Path

from . import confine

__all__ = [
    "CONDITIONS",
    "PROBES",
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
