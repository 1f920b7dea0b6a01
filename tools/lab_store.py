"""Chapter 11's record trained in shards: what ``make record-lab SHARD=i/N`` and ``make merge-lab-stores`` run.

Usage::

    python -m tools.lab_store train --shard 0/4 --store _build/lab-shards/0-of-4
    python -m tools.lab_store merge --out _build/lab-merged _build/lab-shards/*-of-4
    python -m tools.lab_store record --store _build/lab-merged

``train`` trains shard ``i`` of ``N`` (``i`` from 0, as ``SLURM_ARRAY_TASK_ID`` and
``JOB_COMPLETION_INDEX`` count) into its store and writes no record; ``merge`` checks
each stored run against its digest and joins the stores, refusing two different runs
under one key; ``record`` evaluates the runs of one store into the record
(``posenc_helpers/data/train_short_test_long.json``, or ``--record``) and trains none:
a run the store lacks is an error that names it (:mod:`posenc_helpers.lab.shards`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train one shard's runs into a store (no record)")
    train.add_argument("--shard", required=True, help="i/N: shard i (from 0) of N")
    train.add_argument("--store", required=True, type=Path, help="the folder of stored runs to train into")
    merge = commands.add_parser("merge", help="join stores of runs into one, checking every run")
    merge.add_argument("--out", required=True, type=Path, help="the merged store (created; runs already there kept)")
    merge.add_argument("stores", nargs="+", type=Path, help="the stores to merge")
    record = commands.add_parser("record", help="evaluate one store's runs into the record, training none")
    record.add_argument("--store", required=True, type=Path, help="a store holding every run (merged shards)")
    record.add_argument("--record", type=Path, default=None, help="where to write the record (default: the package's)")
    args = parser.parse_args(argv)

    from posenc_helpers.lab import cache, shards  # noqa: PLC0415 (JAX starts only for a valid command line)

    if args.command == "train":
        try:
            shards.parse_shard(args.shard)
        except ValueError as error:
            parser.error(str(error))
        os.environ[cache.CACHE_VARIABLE] = str(args.store.resolve())
        manifest = shards.train_shard(args.shard)
        print(f"record-lab: shard {manifest['shard']} trained {len(manifest['units'])} runs into {args.store}")
        return 0
    if args.command == "merge":
        try:
            counts = shards.merge_stores(args.stores, args.out)
        except ValueError as error:
            print(f"merge-lab-stores: {error}", file=sys.stderr)
            return 1
        print(f"merge-lab-stores: {counts['runs']} runs in {args.out} ({counts['copied']} copied now), "
              f"{counts['manifests']} shard manifests")  # fmt: skip
        return 0
    if not args.store.is_dir():
        parser.error(f"--store must be a folder of stored runs; {args.store} is not one")
    os.environ[cache.CACHE_VARIABLE] = str(args.store.resolve())
    os.environ[cache.STORED_ONLY_VARIABLE] = "1"
    from posenc_helpers.lab import record_lab  # noqa: PLC0415
    from posenc_helpers.measured import RECORD_PATH  # noqa: PLC0415

    result = record_lab(args.record or RECORD_PATH)
    print(result["verdicts"], result["reach"], result["seconds"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
