#!/bin/sh
# The notebooks' Colab set-up cell (tools/generated_cells.py) run as Colab runs it:
# in a fresh environment of Colab's Python holding Colab's versions of what the book
# imports, it must install posenc_helpers from a git tag without touching numpy,
# matplotlib or JAX, and the package, its widgets and its lab must import.
#
#   tools/colab_check.sh PYTHON     (make colab-check COLAB_PYTHON=/path/to/python3.13)
#
# Colab's runtime, from Colab's own record of it, https://github.com/googlecolab/backend-info
# (commit a72407924822, 2026-08-19, "Upgrade to Python 3.13"): os-info.txt says Python
# 3.13.15 (the 2026.07 runtime, still selectable, is 3.12.13: README.md there); its
# pip-freeze.txt pins the versions below. The cell installs from a clone of this
# checkout's HEAD tagged v<version> (the tag a release pushes), by file:// URL, so no
# repository needs to be published; pip fetches the rest from the package index.
set -eu
python=${1:?give the Python to test with, e.g. tools/colab_check.sh ~/.pyenv/versions/3.13.0/bin/python}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$("$root/.venv/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); from tools.release import package_version; print(package_version())' "$root")

echo "[colab-check 1/4] a clone of HEAD tagged v$version"
git clone -q "$root" "$work/repo"
# The commit checked out here, explicitly (the tag below names it).
git -C "$work/repo" checkout -q "$(git -C "$root" rev-parse HEAD)"
git -C "$work/repo" tag "v$version"
echo "[colab-check 2/4] $("$python" --version) with Colab's numpy, matplotlib, ipywidgets, scipy, JAX, optax"
"$python" -m venv "$work/venv"
py=$work/venv/bin/python
"$py" -m pip install --quiet numpy==2.1.3 matplotlib==3.10.0 ipywidgets==7.7.1 scipy==1.16.3 \
    jax==0.7.2 optax==0.2.8 tqdm ipykernel
"$py" -m pip freeze | sort > "$work/before.txt"
echo "[colab-check 3/4] the set-up cell"
"$root/.venv/bin/python" -c 'import sys; sys.path.insert(0, sys.argv[1]); from tools.generated_cells import setup_cell_source; print(setup_cell_source(sys.argv[2], "main"))' \
    "$root" "file://$work/repo" > "$work/cell.py"
(cd "$work" && "$py" cell.py)
"$py" -m pip freeze | sort > "$work/after.txt"
echo "what the cell changed in Colab's environment:"
diff "$work/before.txt" "$work/after.txt" | grep '^[<>]' || true
for kept in numpy==2.1.3 matplotlib==3.10.0 jax==0.7.2 optax==0.2.8 scipy==1.16.3; do
    grep -qx "$kept" "$work/after.txt" || { echo "the set-up cell changed Colab's $kept"; exit 1; }
done
echo "[colab-check 4/4] the package, its widgets and its lab import"
(cd "$work" && "$py" -c '
import numpy as np
import posenc_helpers
import posenc_helpers.lab
import posenc_helpers.widgets
pe = posenc_helpers.sinusoidal_encoding(4, 8)
assert pe.shape == (4, 8) and abs(pe[1, 0] - np.sin(1.0)) < 1e-12, pe
print("posenc_helpers", posenc_helpers.__version__, "imports on", __import__("sys").version.split()[0])
')
echo "colab-check: passed"
