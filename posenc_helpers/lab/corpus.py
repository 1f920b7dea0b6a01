"""The lab's text: Python standard-library source files, as bytes, from a snapshot in the package.

The text is the ``.py`` source of 116 modules of the Python 3.11.7 standard library,
stored in the package as one xz-compressed tar file (``data/lab_corpus.tar.xz``,
about 0.66 MB, 3.36 MB unpacked) with the licence it is distributed under. The
lab reads that snapshot, never the local installation, so the training and
held-out bytes are the same on every machine and every Python version; the
snapshot's SHA-256 is checked when it is read. Every fifth file, in sorted
order, is held out (2.7 MB to train on, 0.63 MB held out): the models never see a
byte of it during training, and all evaluation happens there.

The Python standard library is distributed under the Python Software Foundation
License Version 2 (PSF-2.0); its text is ``LICENSE.txt`` inside the snapshot
and ``posenc_helpers/data/LICENSE-PSF.txt`` beside it. ``tools/lab_corpus_snapshot.py``
wrote the snapshot from a Python 3.11.7 installation.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._validation import require_count

__all__ = [
    "STDLIB_FILES",
    "SNAPSHOT_PATH",
    "SNAPSHOT_SHA256",
    "Corpus",
    "stdlib_corpus",
    "read_snapshot",
    "sample_windows",
    "window_ends",
]

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


#: The snapshot of :data:`STDLIB_FILES` (and the PSF licence) that the lab reads.
SNAPSHOT_PATH = Path(__file__).resolve().parent.parent / "data" / "lab_corpus.tar.xz"
#: Its SHA-256: :func:`read_snapshot` refuses any other bytes.
SNAPSHOT_SHA256 = "f2bdc20c3b294ad50a98737414b0c3f4992c3d0884367da2586e46a629e61990"

HELD_OUT_EVERY = 5  # files 4, 9, 14, ... of the sorted list are held out


@dataclass(frozen=True)
class Corpus:
    """Training and held-out text as ``uint8`` arrays, with the files they came from."""

    train: np.ndarray
    held_out: np.ndarray
    train_files: tuple[str, ...]
    held_out_files: tuple[str, ...]


def read_snapshot(path: Path | str = SNAPSHOT_PATH) -> dict[str, bytes]:
    """The files of the corpus snapshot, ``{name: bytes}``, after checking its SHA-256.

    Raises
    ------
    FileNotFoundError
        If the snapshot is missing.
    ValueError
        If its bytes are not those the lab was recorded with (:data:`SNAPSHOT_SHA256`).

    Examples
    --------
    >>> files = read_snapshot()
    >>> len(files), "LICENSE.txt" in files, files["abc.py"][:1]
    (117, True, b'#')
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"the lab's corpus snapshot is missing: {path}")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SNAPSHOT_SHA256:
        raise ValueError(f"the corpus snapshot at {path} has SHA-256 {digest}, expected {SNAPSHOT_SHA256}")
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:xz") as archive:
        files = {}
        for member in archive:
            if member.isfile():
                content = archive.extractfile(member)
                if content is None:  # never for a regular file; the check is for the type checker
                    raise ValueError(f"the corpus snapshot at {path} holds an unreadable file {member.name}")
                files[member.name] = content.read()
        return files


@lru_cache(maxsize=1)
def stdlib_corpus() -> Corpus:
    """Read the corpus from the package's snapshot (cached).

    Returns
    -------
    Corpus
        Training bytes (the files whose sorted index is not ``4 mod 5``) and
        held-out bytes (the others), each file's bytes followed by a blank line.

    Examples
    --------
    >>> corpus = stdlib_corpus()
    >>> corpus.train.dtype, corpus.train.size > 2_000_000, corpus.held_out.size > 400_000
    (dtype('uint8'), True, True)
    >>> corpus.train.size, corpus.held_out.size
    (2711185, 631761)
    >>> set(corpus.train_files) & set(corpus.held_out_files)
    set()
    """
    files = read_snapshot()
    held = tuple(name for index, name in enumerate(STDLIB_FILES) if index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1)
    train = tuple(name for name in STDLIB_FILES if name not in held)

    def joined(names: tuple[str, ...]) -> np.ndarray:
        return np.frombuffer(b"".join(files[name] + b"\n\n" for name in names), dtype=np.uint8).copy()

    return Corpus(joined(train), joined(held), train, held)


def sample_windows(text: np.ndarray, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` windows of ``length`` consecutive bytes at uniformly random places.

    Returns an ``int32`` array of shape ``(count, length)``.
    """
    length = require_count(length, "length", minimum=2)
    count = require_count(count, "count", minimum=1)
    if text.size < length:
        raise ValueError(f"length must be at most the text's {text.size} bytes, got {length}")
    starts = rng.integers(0, text.size - length + 1, size=count)
    return text[starts[:, None] + np.arange(length)[None, :]].astype(np.int32)


def window_ends(text: np.ndarray, longest: int, count: int, seed: int) -> np.ndarray:
    """``count`` end positions in ``text``, each with at least ``longest`` bytes before it.

    Evaluating every length on windows that end at the same places means that every
    length predicts the same bytes; only the context before them changes.
    """
    longest = require_count(longest, "longest", minimum=2)
    count = require_count(count, "count", minimum=1)
    if text.size <= longest:
        raise ValueError(f"longest must be below the text's {text.size} bytes, got {longest}")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(np.arange(longest, text.size + 1), size=count, replace=False))
