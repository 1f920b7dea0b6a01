"""Write the training lab's corpus snapshot from this Python's standard library.

    python tools/lab_corpus_snapshot.py [--output PATH] [--force]

The snapshot holds ``posenc_helpers.lab.STDLIB_FILES`` and the PSF licence
(``LICENSE.txt``), read from this interpreter's standard library, in a tar file
compressed with xz; every member has mtime 0 and no owner, so the same sources give
the same bytes. The shipped snapshot was written from Python 3.11.7; after writing a
new one, update ``SNAPSHOT_SHA256`` in ``posenc_helpers/lab/corpus.py`` and run
``make record-lab`` (the record names the corpus it was made on). An existing file
is replaced only with ``--force``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import lzma
import sys
import sysconfig
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def snapshot_bytes(stdlib: Path) -> bytes:
    """The xz-compressed tar of the corpus files and the licence, from ``stdlib``."""
    sys.path.insert(0, str(ROOT))
    from posenc_helpers.lab.corpus import STDLIB_FILES  # noqa: PLC0415 (after the path is set)

    missing = [name for name in (*STDLIB_FILES, "LICENSE.txt") if not (stdlib / name).is_file()]
    if missing:
        raise SystemExit(f"{stdlib} lacks {len(missing)} corpus files, e.g. {missing[:3]}")
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w:xz", preset=9 | lzma.PRESET_EXTREME, format=tarfile.USTAR_FORMAT
    ) as archive:
        for name in (*STDLIB_FILES, "LICENSE.txt"):
            data = (stdlib / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=ROOT / "posenc_helpers" / "data" / "lab_corpus.tar.xz")
    parser.add_argument("--force", action="store_true", help="replace an existing snapshot")
    args = parser.parse_args(argv)
    if args.output.exists() and not args.force:
        print(f"{args.output} exists; pass --force to replace it", file=sys.stderr)
        return 1
    data = snapshot_bytes(Path(sysconfig.get_paths()["stdlib"]))
    args.output.write_bytes(data)
    print(f"wrote {args.output} ({len(data):,} bytes) from Python {sys.version.split()[0]}")
    print(f"SHA-256 {hashlib.sha256(data).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
