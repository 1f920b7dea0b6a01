"""The lab's text: Python standard-library source files, as bytes.

Every Python installation carries its standard library as ``.py`` files, so the
lab trains on real text without downloading anything. The files are a fixed,
sorted list of modules that exist as plain files in every supported Python
(3.11 and newer). Every fifth file, in sorted order, is held out: the model
never sees a byte of it during training, and all evaluation happens there.

The Python standard library is distributed under the Python Software Foundation
License (PSF-2.0); the lab reads it from the local installation and stores none
of it.
"""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._validation import check_count

__all__ = ["STDLIB_FILES", "Corpus", "stdlib_corpus", "sample_windows", "window_ends"]

#: The corpus: standard-library modules that are plain files from Python 3.11 on,
#: in sorted order. (Modules that became packages or shims, such as ``pathlib``
#: and ``datetime``, are left out so that the text is the same kind everywhere.)
STDLIB_FILES: tuple[str, ...] = (
    "abc.py",
    "argparse.py",
    "ast.py",
    "base64.py",
    "bdb.py",
    "bisect.py",
    "bz2.py",
    "calendar.py",
    "cmd.py",
    "code.py",
    "codecs.py",
    "codeop.py",
    "colorsys.py",
    "compileall.py",
    "configparser.py",
    "contextlib.py",
    "copy.py",
    "copyreg.py",
    "csv.py",
    "dataclasses.py",
    "difflib.py",
    "dis.py",
    "doctest.py",
    "enum.py",
    "filecmp.py",
    "fileinput.py",
    "fnmatch.py",
    "fractions.py",
    "ftplib.py",
    "functools.py",
    "genericpath.py",
    "getopt.py",
    "getpass.py",
    "gettext.py",
    "glob.py",
    "graphlib.py",
    "gzip.py",
    "hashlib.py",
    "heapq.py",
    "hmac.py",
    "imaplib.py",
    "inspect.py",
    "io.py",
    "ipaddress.py",
    "keyword.py",
    "linecache.py",
    "locale.py",
    "lzma.py",
    "mailbox.py",
    "mimetypes.py",
    "modulefinder.py",
    "netrc.py",
    "numbers.py",
    "opcode.py",
    "operator.py",
    "optparse.py",
    "os.py",
    "pdb.py",
    "pickle.py",
    "pickletools.py",
    "pkgutil.py",
    "platform.py",
    "plistlib.py",
    "poplib.py",
    "posixpath.py",
    "pprint.py",
    "profile.py",
    "pstats.py",
    "py_compile.py",
    "pyclbr.py",
    "queue.py",
    "quopri.py",
    "random.py",
    "reprlib.py",
    "rlcompleter.py",
    "runpy.py",
    "sched.py",
    "secrets.py",
    "selectors.py",
    "shelve.py",
    "shlex.py",
    "shutil.py",
    "signal.py",
    "site.py",
    "smtplib.py",
    "socket.py",
    "socketserver.py",
    "ssl.py",
    "stat.py",
    "statistics.py",
    "string.py",
    "stringprep.py",
    "struct.py",
    "subprocess.py",
    "symtable.py",
    "tabnanny.py",
    "tarfile.py",
    "tempfile.py",
    "textwrap.py",
    "threading.py",
    "timeit.py",
    "token.py",
    "tokenize.py",
    "trace.py",
    "traceback.py",
    "tracemalloc.py",
    "tty.py",
    "types.py",
    "typing.py",
    "uuid.py",
    "warnings.py",
    "wave.py",
    "weakref.py",
    "webbrowser.py",
    "zipapp.py",
    "zipimport.py",
)

HELD_OUT_EVERY = 5  # files 4, 9, 14, ... of the sorted list are held out


@dataclass(frozen=True)
class Corpus:
    """Training and held-out text as ``uint8`` arrays, with the files they came from."""

    train: np.ndarray
    held_out: np.ndarray
    train_files: tuple[str, ...]
    held_out_files: tuple[str, ...]
    missing_files: tuple[str, ...]


@lru_cache(maxsize=1)
def stdlib_corpus() -> Corpus:
    """Read the corpus from this Python's standard library (cached).

    Returns
    -------
    Corpus
        Training bytes (the files whose sorted index is not ``4 mod 5``) and
        held-out bytes (the others), each file's bytes followed by a blank line.
        Files of :data:`STDLIB_FILES` that this installation lacks are listed in
        ``missing_files``.

    Raises
    ------
    FileNotFoundError
        If fewer than 90 % of the files are present (an installation without
        its standard-library sources).

    Examples
    --------
    >>> corpus = stdlib_corpus()
    >>> corpus.train.dtype, corpus.train.size > 2_000_000, corpus.held_out.size > 400_000
    (dtype('uint8'), True, True)
    >>> set(corpus.train_files) & set(corpus.held_out_files)
    set()
    """
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    present = [name for name in STDLIB_FILES if (stdlib / name).is_file()]
    missing = tuple(name for name in STDLIB_FILES if name not in present)
    if len(present) < 0.9 * len(STDLIB_FILES):
        raise FileNotFoundError(
            f"the lab reads its text from the standard library's .py files in {stdlib}, "
            f"but {len(missing)} of {len(STDLIB_FILES)} are missing (e.g. {missing[:3]}); "
            "install a Python that ships its sources"
        )
    held = tuple(
        name
        for index, name in enumerate(STDLIB_FILES)
        if index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 and name in present
    )
    train = tuple(name for name in present if name not in held)

    def read(names: tuple[str, ...]) -> np.ndarray:
        return np.frombuffer(b"".join((stdlib / name).read_bytes() + b"\n\n" for name in names), dtype=np.uint8).copy()

    return Corpus(read(train), read(held), train, held, missing)


def sample_windows(text: np.ndarray, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` windows of ``length`` consecutive bytes at uniformly random places.

    Returns an ``int32`` array of shape ``(count, length)``.
    """
    length = check_count(length, "length", minimum=2)
    count = check_count(count, "count", minimum=1)
    if text.size < length:
        raise ValueError(f"length must be at most the text's {text.size} bytes, got {length}")
    starts = rng.integers(0, text.size - length + 1, size=count)
    return text[starts[:, None] + np.arange(length)[None, :]].astype(np.int32)


def window_ends(text: np.ndarray, longest: int, count: int, seed: int) -> np.ndarray:
    """``count`` end positions in ``text``, each with at least ``longest`` bytes before it.

    Evaluating every length on windows that end at the same places means that every
    length predicts the same bytes; only the context before them changes.
    """
    longest = check_count(longest, "longest", minimum=2)
    count = check_count(count, "count", minimum=1)
    if text.size <= longest:
        raise ValueError(f"longest must be below the text's {text.size} bytes, got {longest}")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(np.arange(longest, text.size + 1), size=count, replace=False))
