#!/bin/sh
# A newcomer's first run, timed: a fresh clone of this repository's HEAD in a
# temporary folder, with empty uv and pip caches, then `make book` and `make test`.
#
#   benchmarks/first_run.sh            # both
#   benchmarks/first_run.sh book       # only make book
#   USE_UV=0 benchmarks/first_run.sh   # the plain-pip fallback
#
# Prints the wall-clock time of each command; the clone and caches are removed at
# the end. It downloads every package, so it needs the network, and takes minutes.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone --quiet "$repo" "$scratch/clone"
export UV_CACHE_DIR="$scratch/uv-cache" PIP_NO_CACHE_DIR=1
cd "$scratch/clone"
for target in ${1:-book test}; do
    start=$(date +%s)
    if make "$target" > "$scratch/$target.log" 2>&1; then status=ok; else status=FAILED; fi
    echo "make $target: $(( $(date +%s) - start )) s ($status, fresh clone, empty caches, USE_UV=${USE_UV:-1})"
    [ "$status" = ok ] || { tail -n 30 "$scratch/$target.log"; exit 1; }
    rm -rf .venv _build  # each command starts from nothing, as on a newcomer's machine
done
