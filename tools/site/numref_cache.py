"""``{numref}`` resolved from doctrees read once, not once per reference.

Sphinx 7.4 resolves each ``{numref}`` (``StandardDomain._resolve_numref_xref``) by
reading the target page's whole doctree back from its pickle (``env.get_doctree``),
only to look up the target node in it. The book has 146 numbered references into 28
pages, so a first build unpickled chapter doctrees 146 times: 4.8 s of a 33 s build
(profiled on the two-core machine). Upstream: sphinx-doc/sphinx#12883 (open), whose
pull request #12882 (closed unmerged) caches the unpickled doctrees.

Here, while a reference is resolved, ``env.get_doctree`` reads each page once and keeps
it for the next reference. The lookup only reads the tree (``.ids.get``), so sharing
one copy between references is safe; Sphinx's own writing still gets fresh trees (the
cache answers only inside the numref resolver). The cache lives in this module, never
on the environment that Sphinx pickles, and is emptied at each build's start and end.
"""

from __future__ import annotations

import inspect
from typing import Any

from sphinx.application import Sphinx
from sphinx.domains.std import StandardDomain
from sphinx.errors import ExtensionError

__all__ = ["cache_numref_doctrees", "forget_doctrees"]

_SPHINX_RESOLVER = StandardDomain._resolve_numref_xref
#: The one line of Sphinx's resolver that this relies on: it only looks a node up.
_EXPECTED = "target_node = env.get_doctree(docname).ids.get(labelid)"
_TREES: dict[str, Any] = {}


def _resolve_numref_xref(self: StandardDomain, env: Any, *args: Any) -> Any:
    read = env.get_doctree

    def cached(docname: str) -> Any:
        if docname not in _TREES:
            _TREES[docname] = read(docname)
        return _TREES[docname]

    env.get_doctree = cached  # shadows the method for this call only
    try:
        return _SPHINX_RESOLVER(self, env, *args)
    finally:
        del env.get_doctree


def cache_numref_doctrees(app: Sphinx) -> None:
    """``builder-inited``: numbered references read each page's doctree once."""
    if _EXPECTED not in inspect.getsource(_SPHINX_RESOLVER):
        raise ExtensionError(
            "tools/site/numref_cache.py: Sphinx's _resolve_numref_xref no longer reads the target's doctree "
            "as this patch expects; check whether Sphinx now caches it (sphinx-doc/sphinx#12883) and drop the patch"
        )
    _TREES.clear()
    StandardDomain._resolve_numref_xref = _resolve_numref_xref  # type: ignore[method-assign,assignment]


def forget_doctrees(app: Sphinx, exception: BaseException | None) -> None:
    """The cached doctrees go (called by ``finish_site`` at ``build-finished``)."""
    _TREES.clear()
