"""The lab on other devices and machines (issue 48, item 3): the device in a run's key, the
record's runs trained in shards, and the merge of their stores."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pickle
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from posenc_helpers import lab
from posenc_helpers.lab import cache, shards

ROOT = Path(__file__).resolve().parents[2]
INPUTS = {"seed": 0, "steps": 5, "weights": np.arange(6, dtype=np.float32)}


@dataclasses.dataclass
class _FakeDevice:
    device_kind: str


# --------------------------------------------------------------------------- the device in the key
def test_the_run_key_holds_the_backend_the_device_and_the_precision(monkeypatch):
    """A fake GPU backend, another device kind, another processor, 64-bit mode or another
    matmul precision each give another key; the same CPU settings give the same key."""
    cpu = cache.run_key(INPUTS)
    assert cache.run_key(dict(INPUTS)) == cpu
    settings = cache.device_settings()
    cpu_machine = settings["machine"]
    assert settings["backend"] == "cpu" and settings["x64"] is False and settings["matmul_precision"] is None
    with monkeypatch.context() as patch:
        patch.setattr(jax, "default_backend", lambda: "gpu")
        patch.setattr(jax, "devices", lambda *args: [_FakeDevice("NVIDIA H100 80GB HBM3")])
        gpu = cache.run_key(INPUTS)
        patch.setattr(jax, "devices", lambda *args: [_FakeDevice("NVIDIA A100-SXM4-40GB")])
        other_gpu = cache.run_key(INPUTS)
    with monkeypatch.context() as patch:
        patch.setattr(jax, "devices", lambda *args: [_FakeDevice("TPU v5 lite")])
        other_kind = cache.run_key(INPUTS)
    with monkeypatch.context() as patch:
        patch.setattr(cache.platform, "machine", lambda: "aarch64" if cpu_machine != "aarch64" else "x86_64")
        other_processor = cache.run_key(INPUTS)
    assert cache.run_key(INPUTS) == cpu  # the settings are read at each key, not kept
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        x64 = cache.run_key(INPUTS)
    finally:
        jax.config.update("jax_enable_x64", previous)
    with jax.default_matmul_precision("highest"):
        highest = cache.run_key(INPUTS)
    keys = [cpu, gpu, other_gpu, other_kind, other_processor, x64, highest]
    assert len(set(keys)) == len(keys)
    assert cache.run_key(INPUTS) == cpu


def test_a_cpu_run_is_not_read_back_for_a_gpu_request(tmp_path, monkeypatch):
    """Stored on the CPU, the same inputs asked for under a (fake) GPU backend train anew, and
    the reverse; under the CPU again the CPU's run is read back."""
    monkeypatch.setenv(cache.CACHE_VARIABLE, str(tmp_path))
    calls = []

    def run(seed, steps, weights, backend):
        calls.append(backend)
        return {steps: ({"w": np.full(2, seed, np.float32)}, np.zeros(1), float(len(calls)))}

    assert cache.cached_run(run, INPUTS, backend="cpu")[5][2] == 1.0
    with monkeypatch.context() as patch:
        patch.setattr(jax, "default_backend", lambda: "gpu")
        patch.setattr(jax, "devices", lambda *args: [_FakeDevice("NVIDIA H100 80GB HBM3")])
        assert cache.cached_run(run, INPUTS, backend="gpu")[5][2] == 2.0
        assert cache.cached_run(run, INPUTS, backend="gpu")[5][2] == 2.0  # the GPU's own run, read back
    assert cache.cached_run(run, INPUTS, backend="cpu")[5][2] == 1.0
    assert calls == ["cpu", "gpu"]
    assert len(list(tmp_path.glob("*.pickle"))) == len(list(tmp_path.glob("*.sha256"))) == 2


def test_a_stored_run_is_checked_and_stored_only_forbids_training(tmp_path, monkeypatch):
    """The ``.sha256`` beside a run holds the SHA-256 of its pickle; a run altered after it was
    stored is refused; with POSENC_LAB_STORED_ONLY=1 a missing run raises instead of training."""
    monkeypatch.setenv(cache.CACHE_VARIABLE, str(tmp_path))
    result = cache.cached_run(lambda seed, steps, weights: {steps: ({"w": np.ones(2)}, None, 0.5)}, INPUTS)
    (stored,) = tmp_path.glob("*.pickle")
    data = stored.read_bytes()
    assert stored.with_suffix(".sha256").read_text() == hashlib.sha256(data).hexdigest()
    assert pickle.loads(data)[5][2] == 0.5 and result[5][2] == 0.5
    monkeypatch.setenv(cache.STORED_ONLY_VARIABLE, "1")

    def no_training(**kwargs):
        raise AssertionError("trained although the store was to be read only")

    assert cache.cached_run(no_training, INPUTS)[5][2] == 0.5
    with pytest.raises(LookupError, match="POSENC_LAB_STORED_ONLY=1 forbids training it"):
        cache.cached_run(no_training, {**INPUTS, "seed": 1})
    stored.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ValueError, match="does not match its digest"):
        cache.cached_run(no_training, INPUTS)


# --------------------------------------------------------------------------- shards
@pytest.mark.parametrize("bad", ["4/4", "1/0", "-1/4", "1-4", "a/b", "1/4/2", "", "1 / 4"])
def test_a_shard_must_be_i_of_n(bad):
    with pytest.raises(ValueError, match="SHARD must be i/N"):
        shards.parse_shard(bad)
    with pytest.raises(TypeError, match="SHARD"):
        shards.parse_shard(3)  # type: ignore[arg-type]


@pytest.mark.slow
def test_make_record_lab_names_a_bad_shard():
    """The command line (``make record-lab SHARD=3/3``) refuses a malformed SHARD, naming it,
    with argparse's status 2 and before training anything."""
    result = subprocess.run(
        [sys.executable, "-m", "tools.lab_store", "train", "--shard", "3/3", "--store", "unused"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "SHARD must be i/N with 0 <= i < N" in result.stderr


def test_the_shards_cover_every_run_once_in_balance():
    """The record's 81 units (6 methods x 3 seeds of text, 2 controls x 3, 3 tasks x 6 methods x 3
    of questions, 1 question control x 3) dealt into 1 to 8 shards: each exactly once, the same
    way twice, and no shard above an equal share plus the largest unit (the greedy rule's bound)."""
    units = shards.training_units()
    names = [unit.name for unit in units]
    assert len(names) == len(set(names)) == 6 * 3 + 2 * 3 + 3 * 6 * 3 + 1 * 3
    for count in range(1, 9):
        dealt = shards.shard_units(units, count)
        again = shards.shard_units(shards.training_units(), count)
        assert [[u.name for u in shard] for shard in dealt] == [[u.name for u in shard] for shard in again]
        assert sorted(u.name for shard in dealt for u in shard) == sorted(names)
        loads = [sum(u.cost for u in shard) for shard in dealt]
        total, largest = sum(u.cost for u in units), max(u.cost for u in units)
        assert max(loads) <= total / count + largest
    with pytest.raises(ValueError, match="count"):
        shards.shard_units(units, 0)


def test_a_shard_needs_a_store(monkeypatch):
    monkeypatch.delenv(cache.CACHE_VARIABLE, raising=False)
    with pytest.raises(ValueError, match="POSENC_LAB_CACHE must name the store"):
        shards.train_shard("0/2")


# --------------------------------------------------------------------------- the merge
def _entry(store: Path, key: str, data: bytes, digest: str | None = None) -> None:
    store.mkdir(parents=True, exist_ok=True)
    (store / f"{key}.pickle").write_bytes(data)
    (store / f"{key}.sha256").write_text(digest or hashlib.sha256(data).hexdigest())


def test_the_merge_joins_stores_and_refuses_what_it_cannot_check(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    _entry(a, "k1", b"one")
    _entry(a, "k2", b"two")
    _entry(b, "k2", b"two")  # the same entry in both: kept once
    _entry(b, "k3", b"three")
    (b / "shard-1-of-2.json").write_text("{}")
    (b / "k9.lock").write_text("")
    assert shards.merge_stores([a, b], out) == {"runs": 3, "copied": 3, "manifests": 1}
    assert sorted(path.name for path in out.iterdir()) == [
        "k1.pickle", "k1.sha256", "k2.pickle", "k2.sha256", "k3.pickle", "k3.sha256", "shard-1-of-2.json"
    ]  # fmt: skip
    assert (out / "k3.pickle").read_bytes() == b"three"
    assert shards.merge_stores([a], out)["copied"] == 0  # merging again adds nothing

    c = tmp_path / "c"
    _entry(c, "k2", b"TWO")
    with pytest.raises(ValueError, match="two different entries under k2.pickle"):
        shards.merge_stores([a, c], tmp_path / "never")
    with pytest.raises(ValueError, match="two different entries under k2.pickle"):
        shards.merge_stores([c], out)  # against what out already holds
    d = tmp_path / "d"
    _entry(d, "k4", b"four", digest=hashlib.sha256(b"fore").hexdigest())
    with pytest.raises(ValueError, match="does not match its digest"):
        shards.merge_stores([a, d], tmp_path / "never")
    e = tmp_path / "e"
    _entry(e, "k5", b"five")
    (e / "k5.sha256").unlink()
    with pytest.raises(ValueError, match="has no digest"):
        shards.merge_stores([e], tmp_path / "never")
    assert not (tmp_path / "never").exists()  # a refused merge writes nothing
    with pytest.raises(ValueError, match="not a folder"):
        shards.merge_stores([tmp_path / "missing"], out)
    with pytest.raises(ValueError, match="at least one"):
        shards.merge_stores([], out)


# --------------------------------------------------------------------------- two shards = one process
MINIATURE = dataclasses.replace(
    lab.PROTOCOL, budgets=(2, 4), seeds=(0, 1), batch_size=2, warmup=1, multiples=(1, 2), sweep_multiples=(1, 2),
    windows=2, ngram_orders=(1, 2), retrieval_steps=2, marker_steps=2, order_steps=2, question_batch_size=2,
    question_windows=2, rescue_steps=1, rescue_batch_size=1,
)  # fmt: skip


def _stored_numbers(store: Path) -> dict[str, list[bytes]]:
    """Each stored run's weights and losses as bytes (its recorded training time left out)."""
    numbers = {}
    for path in sorted(store.glob("*.pickle")):
        run = pickle.loads(path.read_bytes())
        numbers[path.stem] = [
            np.ascontiguousarray(array).tobytes()
            for budget in sorted(run)
            for array in (*jax.tree_util.tree_leaves(run[budget][0]), np.asarray(run[budget][1]))
        ]
    return numbers


@pytest.mark.slow
def test_two_shards_merged_give_the_record_one_process_gives(tmp_path, monkeypatch):
    """A miniature protocol recorded in one process, and trained as shards 0/2 and 1/2 into two
    stores, merged, then evaluated with training forbidden: the same runs (by key) with the
    same weights and losses byte for byte, and the same record but for the times."""
    one, parts, merged = tmp_path / "one", [tmp_path / "shard0", tmp_path / "shard1"], tmp_path / "merged"
    monkeypatch.delenv(cache.STORED_ONLY_VARIABLE, raising=False)
    monkeypatch.setenv(cache.CACHE_VARIABLE, str(one))
    alone = lab.record_lab(tmp_path / "alone.json", protocol=MINIATURE, progress=False)
    for index, store in enumerate(parts):
        monkeypatch.setenv(cache.CACHE_VARIABLE, str(store))
        manifest = shards.train_shard(f"{index}/2", protocol=MINIATURE, progress=False)
        assert json.loads((store / f"shard-{index}-of-2.json").read_text())["units"] == manifest["units"]
    assert shards.merge_stores(parts, merged)["manifests"] == 2
    monkeypatch.setenv(cache.CACHE_VARIABLE, str(merged))
    monkeypatch.setenv(cache.STORED_ONLY_VARIABLE, "1")
    from_shards = lab.record_lab(tmp_path / "merged.json", protocol=MINIATURE, progress=False)

    first, second = (set(p.stem for p in store.glob("*.pickle")) for store in parts)
    assert first and second and not first & second  # each shard trained its own runs
    assert _stored_numbers(merged) == _stored_numbers(one)
    times = ("seconds", "training_seconds")
    assert {k: v for k, v in from_shards.items() if k not in times} == {
        k: v for k, v in alone.items() if k not in times
    }
    assert from_shards["training_seconds"].keys() == alone["training_seconds"].keys()
