"""Reusing a training run's result: an opt-in store of trained weights.

Set the environment variable ``POSENC_LAB_CACHE`` to a folder, and every training
run (:func:`~posenc_helpers.lab.train` and :func:`~posenc_helpers.lab.fine_tune`)
keeps its result there, keyed by everything that result depends on: the initial
weights, the position hooks, the method, sizes, data settings and seed, the code of
the lab's training path read by meaning (corpus, model, tasks, training, the optimiser,
this module and the numerics they import; docstrings and comments do not count:
:mod:`posenc_helpers.lab.fingerprint`), the versions of Python, numpy, JAX, jaxlib
and optax, and the device and precision in force (:func:`~posenc_helpers.lab.cache.device_settings`: JAX's
backend, the first device's kind, the processor, 64-bit mode and the default
matrix-product precision), so that a run trained on a GPU is never read back for the CPU, or the
reverse. A run whose key is already there
is read back instead of trained, with the same weights, losses
and recorded training time. Unset (the default), nothing is stored or read.

Each stored run is two files: ``<key>.pickle`` and ``<key>.sha256``, the SHA-256 of the
pickle's bytes (written first; a run read back is checked against it). With
``POSENC_LAB_STORED_ONLY=1`` as well, a run the store lacks is an error instead of a
training run: the evaluation of runs trained elsewhere (``make record-lab STORE=...``,
after ``make record-lab SHARD=i/N`` and ``make merge-lab-stores``: :mod:`posenc_helpers.lab.shards`).

``make test`` sets it to one folder for every run of chapter 11 (the notebook
tests under two CPU profiles, the student copy, the course), so each live model is
trained once per test run; two runs that need the same model at once train it once
(the second waits on a lock). The files are Python pickles: point the variable
only at a folder you made.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import pickle
import platform
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .fingerprint import fingerprint, training_modules

__all__ = ["CACHE_VARIABLE", "STORED_ONLY_VARIABLE", "device_settings", "entry_digest", "run_key", "cached_run"]

#: The environment variable that names the folder of stored runs.
CACHE_VARIABLE = "POSENC_LAB_CACHE"

#: Set to ``1`` (with :data:`CACHE_VARIABLE`): a run missing from the store raises instead of training.
STORED_ONLY_VARIABLE = "POSENC_LAB_STORED_ONLY"

#: The modules a training result depends on: the text, the model, the tasks, the
#: training loop, this store and every package module they import (the numerics),
#: by meaning (:mod:`.fingerprint`); editing evaluation or protocol code, or any
#: docstring, keeps the runs.
_TRAINING_PATH = ("lab/cache.py", "lab/corpus.py", "lab/model.py", "lab/tasks.py", "lab/training.py")


def _feed(digest: Any, value: object) -> None:
    """Add ``value`` to ``digest``: arrays by dtype, shape and bytes, containers item by item."""
    if isinstance(value, np.ndarray | jax.Array):
        array = np.asarray(jax.device_get(value))
        digest.update(f"array {array.dtype.str} {array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        _feed(digest, (type(value).__name__, dataclasses.asdict(value)))
    elif isinstance(value, dict):
        digest.update(b"dict")
        for key in sorted(value):
            _feed(digest, key)
            _feed(digest, value[key])
    elif isinstance(value, tuple | list):
        digest.update(f"{type(value).__name__} {len(value)}".encode())
        for item in value:
            _feed(digest, item)
    elif value is None or isinstance(value, str | int | float | bool | np.generic):
        digest.update(f"{type(value).__name__} {value!r}".encode())
    else:
        raise TypeError(f"cannot key a training run on a {type(value).__name__}")


@functools.lru_cache(maxsize=1)
def _training_path_digest() -> str:
    """The training path's fingerprint, read once per process (the code does not change under it)."""
    return fingerprint(training_modules(_TRAINING_PATH), python=platform.python_version())


def run_key(inputs: dict[str, object]) -> str:
    """The key of a training run with these ``inputs``, under this code and these libraries.

    Examples
    --------
    >>> run_key({"seed": 0, "steps": 5}) == run_key({"steps": 5, "seed": 0})
    True
    >>> run_key({"seed": 0, "steps": 5}) == run_key({"seed": 1, "steps": 5})
    False
    """
    digest = hashlib.sha256()
    digest.update(_training_path_digest().encode())
    _feed(digest, device_settings())
    _feed(digest, inputs)
    return digest.hexdigest()[:32]


def device_settings() -> dict[str, object]:
    """Where and how JAX computes now: what a run's numbers depend on besides its inputs and code.

    Read at every key (64-bit mode and the matrix-product precision can change within a
    process; the backend is fixed once JAX has started).

    Returns
    -------
    dict
        ``backend`` (``jax.default_backend()``: ``"cpu"``, ``"gpu"``, ``"tpu"``),
        ``device_kind`` (the first device's, e.g. ``"cpu"`` or ``"NVIDIA H100 80GB HBM3"``),
        ``x64`` (``jax_enable_x64``), ``matmul_precision``
        (``jax_default_matmul_precision``; None: the backend's default) and ``machine``
        (``platform.machine()``: every CPU's device kind is ``"cpu"``, and an x86-64 and
        an ARM processor need not round alike).

    Examples
    --------
    >>> sorted(device_settings())
    ['backend', 'device_kind', 'machine', 'matmul_precision', 'x64']
    """
    precision = jax.config.jax_default_matmul_precision  # type: ignore[attr-defined]  # JAX adds its flags at run time
    return {
        "backend": str(jax.default_backend()),
        "device_kind": str(jax.devices()[0].device_kind),
        "x64": bool(jax.config.jax_enable_x64),  # type: ignore[attr-defined]
        "matmul_precision": None if precision is None else str(precision),
        "machine": platform.machine(),
    }


def entry_digest(data: bytes) -> str:
    """The SHA-256 (hexadecimal) that a stored run's ``.sha256`` file holds for its pickle's bytes ``data``.

    Examples
    --------
    >>> entry_digest(b"")[:16]
    'e3b0c44298fc1c14'
    """
    if not isinstance(data, bytes):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    return hashlib.sha256(data).hexdigest()


def cached_run(run: Callable[..., dict], inputs: dict[str, object], **extra: object) -> dict:
    """``run(**inputs, **extra)``, or its stored result when ``POSENC_LAB_CACHE`` holds one.

    ``inputs`` are what the result depends on (they make the key); ``extra`` are not
    (a progress bar, its description). ``run`` returns ``{budget: (params, losses,
    seconds)}``. Two processes that need the same run at once train it once: the
    second waits for the first (a lock file beside the result) and reads its result.

    Examples
    --------
    Without the variable, the run simply runs:

    >>> import os
    >>> _ = os.environ.pop(CACHE_VARIABLE, None)
    >>> cached_run(lambda seed: {1: ({"w": seed}, None, 0.0)}, {"seed": 3})
    {1: ({'w': 3}, None, 0.0)}
    """
    folder = os.environ.get(CACHE_VARIABLE)
    if not folder:
        return run(**inputs, **extra)
    path = Path(folder) / f"{run_key(inputs)}.pickle"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.with_suffix(".lock")):
        if path.is_file():
            return _read_back(path)
        if os.environ.get(STORED_ONLY_VARIABLE) == "1":
            raise LookupError(
                f"run {path.stem} ({extra.get('description', 'no description')}) is not in the store {folder}, "
                f"and {STORED_ONLY_VARIABLE}=1 forbids training it: train the shard that holds it and merge again"
            )
        result = run(**inputs, **extra)
        data = pickle.dumps(
            {budget: (jax.device_get(p), losses, seconds) for budget, (p, losses, seconds) in result.items()}
        )
        _write_whole(path.with_suffix(".sha256"), entry_digest(data).encode())  # the digest first
        _write_whole(path, data)
    return result


def _read_back(path: Path) -> dict:
    """The stored run at ``path``, checked against its ``.sha256`` where the store has one."""
    data = path.read_bytes()
    digest_file = path.with_suffix(".sha256")
    if digest_file.is_file() and digest_file.read_text().strip() != entry_digest(data):
        raise ValueError(f"the stored run {path} does not match its digest {digest_file}: delete both and rerun")
    result = pickle.loads(data)
    return {
        budget: (jax.tree_util.tree_map(jnp.asarray, params), losses, seconds)
        for budget, (params, losses, seconds) in result.items()
    }


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a partial file renamed into place)."""
    partial_file = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    partial_file.write_bytes(data)
    os.replace(partial_file, path)


@contextlib.contextmanager
def _locked(lock_path: Path):
    """Hold an exclusive lock on ``lock_path`` (POSIX ``flock``; threads of one process
    take turns on a lock of their own, since ``flock`` is per open file)."""
    with _THREAD_LOCKS.setdefault(str(lock_path), threading.Lock()), lock_path.open("a") as handle:
        try:
            import fcntl  # noqa: PLC0415 (POSIX only: elsewhere, no cross-process lock)
        except ImportError:
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_THREAD_LOCKS: dict[str, threading.Lock] = {}
