"""Which isolation a grade runs with here: bubblewrap, a confined container, or (asked for) none.

:func:`choose_isolation` is the grader's policy. It asks
:mod:`posenc_helpers.grading.sandbox` whether bubblewrap can make a sandbox here and, where it
cannot, :mod:`posenc_helpers.grading.container` whether the container is confined enough to be
the sandbox itself; it never falls back to something weaker without saying so.
:mod:`posenc_helpers.grading.one` and the nbgrader preprocessors
(``posenc_helpers.grading.nbgrader``) call it before they grade anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import container, sandbox

__all__ = ["Isolation", "NoConfinedSandbox", "choose_isolation"]


class NoConfinedSandbox(RuntimeError):
    """Neither bubblewrap nor a confined container is here: the grader will not run."""


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
    container where it is confined (every condition of
    :data:`posenc_helpers.grading.container.CONDITIONS`), else none at all when ``unsafe``
    (asked for by the person grading).

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
        missing = container.missing_conditions()
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
