"""tools/site/numref_cache.py: numbered references read each page's doctree once."""

from __future__ import annotations

from types import SimpleNamespace

from sphinx.domains.std import StandardDomain

from tools.site import numref_cache


def test_the_resolver_reads_each_page_once_and_restores_the_environment(monkeypatch):
    reads = []
    trees = {"a": SimpleNamespace(ids={"x": 1}), "b": SimpleNamespace(ids={"y": 2})}

    class Env:
        def get_doctree(self, docname):
            reads.append(docname)
            return trees[docname]

    looked_up = []

    def sphinx_resolver(self, env, fromdocname, builder, typ, target, node, contnode):
        looked_up.append(env.get_doctree(target).ids)  # what Sphinx's resolver does with it
        return target

    monkeypatch.setattr(numref_cache, "_SPHINX_RESOLVER", sphinx_resolver)
    numref_cache._TREES.clear()
    env = Env()
    for target in ("a", "b", "a", "a", "b"):
        assert numref_cache._resolve_numref_xref(None, env, "here", None, "numref", target, None, None) == target
    assert reads == ["a", "b"]  # each page unpickled once, not five times
    assert looked_up == [{"x": 1}, {"y": 2}, {"x": 1}, {"x": 1}, {"y": 2}]
    assert "get_doctree" not in vars(env)  # the method is the class's again after each call
    numref_cache.forget_doctrees(None, None)
    assert numref_cache._TREES == {}


def test_the_patch_is_checked_against_sphinx_s_own_resolver():
    import inspect

    assert numref_cache._EXPECTED in inspect.getsource(numref_cache._SPHINX_RESOLVER)
    assert numref_cache._SPHINX_RESOLVER is not numref_cache._resolve_numref_xref
    assert StandardDomain._resolve_numref_xref in (numref_cache._SPHINX_RESOLVER, numref_cache._resolve_numref_xref)
