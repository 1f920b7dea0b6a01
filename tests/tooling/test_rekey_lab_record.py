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
