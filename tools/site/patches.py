"""The HTML rewrites of upstream markup, each named, counted, and loud when it matches nothing.

A page step that rewrites what Sphinx, the theme or an extension writes (the patch ledger
in ``tools/site/README.md``) finds it by a pattern. After an upgrade the markup may
change, and a pattern that no longer matches does nothing without a word: the build
passes and the site quietly loses the repair. So every such rewrite goes through a
:class:`Patch`: a name (the ledger's), the pattern, and a *marker*, a looser sign that
the upstream feature the patch works on is on the page (the theme's script for the
theme's chrome, ``class="math`` for formulas).

:func:`tools.site.pipeline.run` counts each patch's matches over the pages Sphinx wrote
in this build (an incremental build leaves the other pages as the last build patched
them) and calls :func:`require_matches`: a patch whose marker is on some such page but
which matched on none of them stops the build with :class:`PatchMatchedNothing`, naming
the patch and what to do.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

#: The theme's own script, on every page it renders (not on the root redirect).
THEME_PAGE = "pydata-sphinx-theme.js"

_COUNTS: ContextVar[Counter[str] | None] = ContextVar("patch_counts", default=None)


class PatchMatchedNothing(RuntimeError):
    """A patch of upstream markup found nothing to patch where its marker says it should."""


@dataclass(frozen=True)
class Patch:
    """A named rewrite of upstream markup (a row of the patch ledger).

    Attributes
    ----------
    name : str
        ``module.what``, as the ledger names it.
    pattern : re.Pattern
        What the rewrite finds.
    marker : str
        A substring that is on a page whenever the upstream markup the patch works on is.
    """

    name: str
    pattern: re.Pattern[str]
    marker: str

    def _count(self, matches: int) -> None:
        counts = _COUNTS.get()
        if counts is not None:
            counts[self.name] += matches

    def sub(self, replacement: str | Callable[[re.Match[str]], str], text: str) -> str:
        """``pattern.sub(replacement, text)``, its matches counted for the build."""
        new, matches = self.pattern.subn(replacement, text)
        self._count(matches)
        return new

    def finditer(self, text: str) -> list[re.Match[str]]:
        """``pattern.finditer(text)`` as a list, its matches counted for the build."""
        found = list(self.pattern.finditer(text))
        self._count(len(found))
        return found


#: Every patch, by name (their modules use them; the ledger lists them).
PATCHES: dict[str, Patch] = {}


def patch(name: str, pattern: str, marker: str, flags: int = 0) -> Patch:
    """A :class:`Patch`, registered in :data:`PATCHES` (one per name)."""
    if not isinstance(name, str) or not re.fullmatch(r"[a-z_]+\.[a-z_]+", name):
        raise ValueError(f"name must read module.what (lower case), got {name!r}")
    if not isinstance(marker, str) or not marker:
        raise ValueError(f"marker must be a non-empty string, got {marker!r}")
    if name in PATCHES:
        raise ValueError(f"name {name!r} is already a patch")
    PATCHES[name] = Patch(name, re.compile(pattern, flags), marker)
    return PATCHES[name]


@contextlib.contextmanager
def counting(counts: Counter[str] | None) -> Iterator[None]:
    """Count the matches of every patch applied inside into ``counts`` (None: count nothing)."""
    token = _COUNTS.set(counts)
    try:
        yield
    finally:
        _COUNTS.reset(token)


def require_matches(counts: Counter[str], fresh_pages: Iterable[str]) -> None:
    """Stop when a patch matched nothing on the pages written in this build though its marker is there.

    Parameters
    ----------
    counts : Counter
        Each patch's matches over ``fresh_pages``.
    fresh_pages : iterable of str
        The text of each page Sphinx wrote in this build, before the page steps.

    Raises
    ------
    PatchMatchedNothing
        Naming every such patch.

    Examples
    --------
    >>> import collections
    >>> require_matches(collections.Counter(), ["<p>no theme, no math</p>"])
    """
    pages = list(fresh_pages)
    silent = [
        name for name, each in PATCHES.items() if counts[name] == 0 and any(each.marker in text for text in pages)
    ]
    if silent:
        raise PatchMatchedNothing(
            f"site patch {', '.join(silent)} matched nothing on the {len(pages)} pages written in this build, "
            "though the markup it patches is there: the upstream HTML changed (an upgrade?). Update the "
            "pattern to the new markup, or, if upstream fixed the bug, remove the patch and its ledger row "
            "(tools/site/README.md, Patch ledger)."
        )
