"""What a sandbox is made of: the grading runtime's folders, the system files, its environment.

:func:`runtime_paths` are the folders a sandboxed kernel needs, shown read-only;
:func:`system_binds` the parts of ``/usr`` and ``/etc`` it needs; and
:func:`sandbox_environment` the only variables it sees. :func:`environment_digest`
fingerprints the runtime's files, so that the grader can tell that no submission
changed them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["SANDBOX_HOME", "sandbox_environment", "runtime_paths", "environment_digest", "system_binds"]

#: Files of /etc a Python process needs (the loader's cache, user and host names, time zone, fonts).
_ETC = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "passwd", "group", "hosts", "host.conf",
    "localtime", "fonts", "mime.types", "alternatives",
)  # fmt: skip


#: The environment of the sandbox: no variable of the grader's reaches the student's code.
SANDBOX_HOME = "/tmp/home"


def sandbox_environment(home: str = SANDBOX_HOME, lab_store: str | None = None) -> dict[str, str]:
    """The variables a sandboxed kernel sees: its own home and caches, one thread per
    numeric library (so that two sandboxes share two cores), no bytecode written."""
    env = {
        "HOME": home,
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp" if home == SANDBOX_HOME else str(Path(home).parent),
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.config/matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
        "JUPYTER_RUNTIME_DIR": f"{home}/.local/share/jupyter/runtime",
        "JUPYTER_PLATFORM_DIRS": "1",
        "XDG_CACHE_HOME": f"{home}/.cache",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
        "TQDM_DISABLE": "1",
    }
    if lab_store is not None:
        env["POSENC_LAB_CACHE"] = lab_store
    return env


def runtime_paths() -> list[Path]:
    """The folders the grading runtime needs, read-only: the Python installation, the
    environment (``sys.prefix``) and its site-packages wherever they are, and the
    ``posenc_helpers`` package itself (an editable install points outside the environment;
    only the package is shown, not the repository around it, whose notebooks hold the
    model answers). Other entries of ``sys.path`` (a test runner's, ``PYTHONPATH``'s) are
    not shown."""
    import sysconfig

    import posenc_helpers

    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(posenc_helpers.__file__).resolve().parent]
    paths += [Path(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    kept: list[Path] = []
    for path in sorted({p.resolve() for p in paths if p.is_dir()}, key=lambda p: len(p.parts)):
        if not any(path == parent or parent in path.parents for parent in kept):
            kept.append(path)
    return kept


def environment_digest(paths: Sequence[Path] | None = None) -> str:
    """A fingerprint of every file under the grading runtime (:func:`runtime_paths`): each
    file's path, size, mode and modification time (about 0.2 s for 26 000 files). A file
    added (a ``.pth``), removed or rewritten changes it; the sandbox shows these folders
    read-only, so between two submissions it never should. Bytecode caches
    (``__pycache__``) are left out: any Python process that imports a module for the
    first time writes them (the grader itself, or a test running beside it)."""
    import hashlib

    digest = hashlib.sha256()
    for root in paths if paths is not None else runtime_paths():
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    info = os.lstat(path)
                    digest.update(f"{path}\0{info.st_size}\0{info.st_mode}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def system_binds() -> list[str]:
    """``/usr`` and the merged-``/usr`` links (or folders) beside it, and the files of /etc in ``_ETC``."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args
