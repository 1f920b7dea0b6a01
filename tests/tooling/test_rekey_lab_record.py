"""tools/rekey_lab_record.py and tools/lab_probe.py: a record is re-keyed only for code that
computes the same numbers (issue 35: refactors of the lab without a re-record)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import posenc_helpers
from tools import rekey_lab_record

ROOT = Path(__file__).resolve().parents[2]


def _probe(package_root: Path) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "lab_probe.py")],
        cwd=package_root,
        env={**os.environ, "PYTHONPATH": str(package_root), "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["package"] == str(package_root / "posenc_helpers" / "__init__.py")  # the copy, not the install
    return report["probe"]


@pytest.mark.slow
def test_the_probe_sees_a_changed_slope_and_not_a_reworded_docstring(tmp_path):
    """ALiBi's slopes 2^(-8h/n) become 2^(-7h/n) in a copy: the probe differs. A docstring
    reworded in the same place does not change it."""
    same, changed = tmp_path / "same", tmp_path / "changed"
    for root in (same, changed):
        shutil.copytree(Path(posenc_helpers.__file__).parent, root / "posenc_helpers",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    alibi = same / "posenc_helpers" / "alibi.py"
    alibi.write_text(alibi.read_text().replace('"""', '"""Reworded. ', 1))
    alibi = changed / "posenc_helpers" / "alibi.py"
    source = alibi.read_text()
    assert source.count("-8.0 *") + source.count("-8 *") == 1, "the slope formula moved: update this test"
    alibi.write_text(source.replace("-8.0 *", "-7.0 *").replace("-8 *", "-7 *"))
    assert _probe(same) == _probe(ROOT)
    assert _probe(changed) != _probe(ROOT)


def test_only_the_records_key_line_is_rewritten(tmp_path, monkeypatch):
    record = tmp_path / rekey_lab_record.RECORD
    record.parent.mkdir(parents=True)
    text = '{\n "digest": "old",\n "text": {"rope": [1.5, 2.5]}\n}\n'
    record.write_text(text)
    monkeypatch.setattr(rekey_lab_record, "ROOT", tmp_path)
    assert rekey_lab_record.write_key("new")
    assert record.read_text() == text.replace('"old"', '"new"')
    assert not rekey_lab_record.write_key("new")


def test_a_bad_base_is_refused(tmp_path):
    with pytest.raises(ValueError, match="commit must name a commit"):
        rekey_lab_record.export_package("--output=/tmp/x", tmp_path)
    with pytest.raises(ValueError, match="commit must name a commit of this repository"):
        rekey_lab_record.export_package("no-such-commit-0123", tmp_path)


# --------------------------------------------------------------------------- which remedy a stale record needs
# Issue 49: the stale-record test said "make record-lab" (an hour) for every failure, even for a
# rename that make rekey-lab (minutes) fixes. The descriptions below are written by hand.
_VALID = {
    "valid": True,
    "protocol": {"seeds": [0, 1, 2], "train_len": 64},
    "corpus": "ab12",
    "lab_version": 1,
    "code": {"lab/model.py": "m1", "alibi.py": "a1"},
}


def test_code_changes_alone_point_to_rekey_and_name_the_modules():
    renamed = {**_VALID, "code": {"lab/model.py": "m2", "alibi.py": "a1"}}
    advice = rekey_lab_record.which_remedy(_VALID, renamed, "5d053eb")
    assert advice.startswith("make rekey-lab BASE=5d053eb if the change to lab/model.py is a refactor")
    assert "otherwise make record-lab" in advice
    moved = {**_VALID, "code": {"lab/model.py": "m1", "alibi.py": "a1", "lab/bias.py": "b1"}}  # a module split out
    assert "the change to lab/bias.py is" in rekey_lab_record.which_remedy(_VALID, moved, "5d053eb")


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("protocol", {"seeds": [0, 1, 2, 3], "train_len": 64}, "the protocol (PROTOCOL)"),
        ("corpus", "cd34", "the corpus snapshot"),
        ("lab_version", 2, "LAB_VERSION"),
    ],
)
def test_a_changed_setting_points_to_record_lab(field, value, named):
    changed = {**_VALID, field: value, "code": {"lab/model.py": "m2", "alibi.py": "a1"}}
    advice = rekey_lab_record.which_remedy(_VALID, changed, "5d053eb")
    assert advice.startswith(f"make record-lab (about an hour): {named} changed since 5d053eb")
    assert "rekey" not in advice


def test_an_environment_change_points_to_record_lab():
    """The base's own record does not match the base's own code here: the libraries moved on."""
    advice = rekey_lab_record.which_remedy({**_VALID, "valid": False}, _VALID, "5d053eb")
    assert advice.startswith("make record-lab (about an hour): 5d053eb's record does not match")


@pytest.mark.slow  # four Python processes that import JAX
def test_the_remedy_read_from_a_package_copy(tmp_path):
    """End to end, against the record's own commit: a local variable renamed in the model is
    a refactor (rekey, naming lab/model.py); another seed count in PROTOCOL needs a re-record."""
    base = rekey_lab_record.record_commit()
    assert base, "no git history"
    copy = tmp_path / "posenc_helpers"
    shutil.copytree(rekey_lab_record.ROOT / "posenc_helpers", copy, ignore=shutil.ignore_patterns("__pycache__"))
    model = copy / "lab" / "model.py"
    source = model.read_text()
    assert source.count("theta") == 4, "the model's RoPE lines moved: update this test"
    model.write_text(source.replace("theta", "inverse_wavelengths"))  # a local variable renamed
    assert rekey_lab_record.remedy(base, tmp_path).startswith(
        f"make rekey-lab BASE={base} if the change to lab/model.py"
    )
    protocol = copy / "lab" / "protocol.py"
    source = protocol.read_text()
    assert source.count("seeds: tuple[int, ...] = (") == 1, "PROTOCOL moved: update this test"
    protocol.write_text(source.replace("seeds: tuple[int, ...] = (", "seeds: tuple[int, ...] = (99, ", 1))
    assert rekey_lab_record.remedy(base, tmp_path).startswith("make record-lab (about an hour): the protocol")
