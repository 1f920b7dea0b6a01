"""The semantic key follows every way of importing a module (issue 49, item 1).

Chapter 11's record (``lab_digest``), the store of training runs (``cache.run_key``) and
the explorers' web frames (``tools/site/explorers.py``, ``grid_digest``) are keyed on the
code of the modules their code reaches (``posenc_helpers.lab.fingerprint.training_modules``).
Each case below rewrites, in a copy of the package, the one import of ALiBi's code in
``lab/model.py`` (the model) and in ``widgets/ch08_alibi.py`` (chapter 08's explorer) into
another import form, then changes one number of ALiBi's slopes in ``alibi.py``: all three
keys must change. Before issue 49 the walk read only ``from x import y`` naming a module
file, so nine of the eleven forms below left the record "valid" after the slopes changed
(only ``from .. import alibi`` and ``from posenc_helpers.alibi import ...`` were followed).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import posenc_helpers
from posenc_helpers.lab import cache, fingerprint, lab_digest
from tools.site import explorers

# (form, the import line, the call of NAME as written after it): NAME is alibi_bias in the
# model and alibi_slopes in the explorer, both defined in alibi.py and re-exported by
# posenc_helpers/__init__.py.
FORMS = {
    "from .. import alibi as module": ("from .. import alibi as _alibi", "_alibi.NAME("),
    "from .. import NAME (the __init__'s re-export)": ("from .. import NAME", "NAME("),
    "from posenc_helpers import NAME (the __init__'s re-export)": ("from posenc_helpers import NAME", "NAME("),
    "from posenc_helpers.alibi import NAME": ("from posenc_helpers.alibi import NAME", "NAME("),
    "import posenc_helpers.alibi as y": ("import posenc_helpers.alibi as _alibi", "_alibi.NAME("),
    "import posenc_helpers.alibi, then the dotted name": (
        "import posenc_helpers.alibi",
        "posenc_helpers.alibi.NAME(",
    ),
    "import posenc_helpers, then posenc_helpers.NAME": ("import posenc_helpers", "posenc_helpers.NAME("),
    "import posenc_helpers as p, then p.alibi.NAME": ("import posenc_helpers as _p", "_p.alibi.NAME("),
    "importlib.import_module('posenc_helpers.alibi')": (
        "import importlib",
        'importlib.import_module("posenc_helpers.alibi").NAME(',
    ),
    "getattr on the package": ("import posenc_helpers", 'getattr(posenc_helpers, "NAME")('),
    "from posenc_helpers import *": ("from posenc_helpers import *  # noqa: F403", "NAME("),
}

# The forms whose name the walk cannot read: it takes the whole package (broader, never narrower).
WHOLE_PACKAGE = {"getattr on the package", "from posenc_helpers import *"}

# Where the two modules import ALiBi's code, and which name.
IMPORTERS = {"lab/model.py": "alibi_bias", "widgets/ch08_alibi.py": "alibi_slopes"}

# One number of the slopes 2^(-8h/n) (the paper's 8), and a docstring-only edit of the same module.
SLOPES = ("2.0 ** (-8.0 * head / n)", "2.0 ** (-7.0 * head / n)")


def _package_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "posenc_helpers"
    shutil.copytree(
        Path(posenc_helpers.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__", "*.tar.xz")
    )
    return copy


def _rewrite_import(path: Path, name: str, form: str) -> None:
    """Replace ``from ..alibi import <name>`` in ``path`` by ``form``'s import, and each call of ``name``."""
    line, call = (part.replace("NAME", name) for part in FORMS[form])
    text = path.read_text(encoding="utf-8")
    old_import = f"from ..alibi import {name}\n"
    assert text.count(old_import) == 1, (path, old_import)
    text = text.replace(old_import, line + "\n")
    text, calls = re.subn(rf"(?<![\w.]){name}\(", lambda _: call, text)
    assert calls >= 1, (path, name)
    path.write_text(text, encoding="utf-8")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def _keys(copy: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The record's key, a stored run's key and chapter 08's frames' key, all read from ``copy``."""
    monkeypatch.setattr(fingerprint, "PACKAGE", copy)
    cache._training_path_digest.cache_clear()
    try:
        run = cache.run_key({"method": "alibi", "seed": 0})
    finally:
        monkeypatch.undo()
        cache._training_path_digest.cache_clear()
    return {
        "record": lab_digest(package=copy),
        "store": run,
        "frames": explorers.grid_digest("AlibiExplorer", explorers.GRIDS["AlibiExplorer"], copy),
    }


def _reached(copy: Path, module: str) -> set[str]:
    return {path.relative_to(copy).as_posix() for path in fingerprint.training_modules([module], package=copy)}


def test_every_import_form_reaches_the_module(tmp_path):
    """The walk alone (fast): through each form whose names it reads, the model and the explorer
    reach alibi.py and no more than the original import did (the two whole-package forms take
    seconds: the slow test below)."""
    copy = _package_copy(tmp_path)
    original = {module: _reached(copy, module) for module in IMPORTERS}
    texts = {module: (copy / module).read_text(encoding="utf-8") for module in IMPORTERS}
    for form in (form for form in FORMS if form not in WHOLE_PACKAGE):
        for module, name in IMPORTERS.items():
            (copy / module).write_text(texts[module], encoding="utf-8")
            _rewrite_import(copy / module, name, form)
            reached = _reached(copy, module)
            assert "alibi.py" in reached, (form, module, sorted(reached))
            assert reached == original[module], (form, module, sorted(reached ^ original[module]))


@pytest.mark.slow  # three keys, four times, per form (about 3 s each on two cores)
@pytest.mark.parametrize("form", list(FORMS))
def test_every_import_form_keys_the_record_the_store_and_the_frames(form, tmp_path, monkeypatch):
    copy = _package_copy(tmp_path)
    for module, name in IMPORTERS.items():
        _rewrite_import(copy / module, name, form)
    before = _keys(copy, monkeypatch)
    _edit(copy / "alibi.py", '    """ALiBi head slopes', '    """Reworded. ALiBi head slopes')
    assert _keys(copy, monkeypatch) == before, "a docstring is not code"
    if form in WHOLE_PACKAGE:
        assert "mla.py" in _reached(copy, "lab/model.py")  # broader than needed: every module
    else:  # a module the form does not reach stays out of the key
        _edit(copy / "mla.py", "\nimport", "\nUNREACHED = 1\nimport")
        assert _keys(copy, monkeypatch) == before, form
    _edit(copy / "alibi.py", *SLOPES)
    after = _keys(copy, monkeypatch)
    assert {part for part in before if after[part] == before[part]} == set(), form


def test_the_forms_rewrite_what_they_claim(tmp_path):
    """The rewriting itself: the model's line and call, written out for two forms."""
    copy = _package_copy(tmp_path)
    _rewrite_import(copy / "lab/model.py", "alibi_bias", "import posenc_helpers as p, then p.alibi.NAME")
    text = (copy / "lab/model.py").read_text()
    assert "import posenc_helpers as _p\n" in text and "from ..alibi import" not in text
    assert "bias = _p.alibi.alibi_bias(config.n_heads, length)" in text
    _rewrite_import(copy / "widgets/ch08_alibi.py", "alibi_slopes", "from .. import NAME (the __init__'s re-export)")
    assert "from .. import alibi_slopes\n" in (copy / "widgets/ch08_alibi.py").read_text()


def test_an_init_that_defines_a_used_name_is_keyed(tmp_path):
    """A name defined in an ``__init__`` itself (not handed on) puts that ``__init__`` in the key;
    one that only hands names on stays out (a new export elsewhere does not make the record stale)."""
    copy = _package_copy(tmp_path)
    _edit(copy / "lab/model.py", "from ..alibi import alibi_bias\n", "from .. import alibi_bias, BIAS_SCALE\n")
    (copy / "__init__.py").write_text((copy / "__init__.py").read_text() + "BIAS_SCALE = 1.0\n")
    names = {path.relative_to(copy).as_posix() for path in fingerprint.training_modules(["lab/model.py"], package=copy)}
    assert {"__init__.py", "alibi.py"} <= names
    untouched = {p.relative_to(copy).as_posix() for p in fingerprint.training_modules(["lab/tasks.py"], package=copy)}
    assert untouched == {"_validation.py", "lab/corpus.py", "lab/tasks.py"}


def test_package_inits_only_hand_names_on():
    """The key follows names, not code run at import: an ``__init__`` that ran code (set a global,
    patched a function) could change a result unseen. Each holds its docstring, imports, ``__all__``
    and ``__version__`` only."""
    import ast

    root = Path(posenc_helpers.__file__).parent
    found = []
    for path in sorted(root.rglob("__init__.py")):
        for statement in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(statement, ast.Import | ast.ImportFrom):
                continue
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue
            targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
            if isinstance(statement, ast.Assign | ast.AnnAssign) and all(
                isinstance(t, ast.Name) and t.id in ("__all__", "__version__") for t in targets
            ):
                continue
            found.append(f"{path.relative_to(root)}:{statement.lineno}")
    assert not found, f"move this code into a module of its own, which the key follows: {found}"
