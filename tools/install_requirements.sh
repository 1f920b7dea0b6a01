#!/bin/sh
# Install the pinned requirements into the project's virtual environment.
#
#   tools/install_requirements.sh VENV_PYTHON REQUIREMENTS_FILE
#
# With uv when it can (about ten times faster than pip): the uv on PATH, else
# uv $UV_VERSION installed into the environment by the system's pip
# (`$PYTHON -m pip --python VENV_PYTHON`, pip >= 22.3). USE_UV=0, or no way to
# get uv, falls back to the environment's own pip (added with ensurepip if the
# environment was created without it). Both install exactly the same pins.
set -eu
venv_python=$1
requirements=$2
: "${PYTHON:=python3}" "${USE_UV:=1}" "${UV_VERSION:=0.13.9}"

uv=""
if [ "$USE_UV" = 1 ]; then
    if command -v uv >/dev/null 2>&1; then
        uv=uv
    elif "$PYTHON" -m pip --python "$venv_python" install --quiet --disable-pip-version-check \
            "uv==$UV_VERSION" >/dev/null 2>&1; then
        uv="$(dirname "$venv_python")/uv"
    else
        echo "could not install uv with $PYTHON's pip: falling back to pip" >&2
    fi
fi

if [ -n "$uv" ]; then
    echo "installing the pinned requirements with uv ($("$uv" --version))"
    "$uv" pip install --python "$venv_python" --quiet -r "$requirements"
else
    echo "installing the pinned requirements with pip"
    "$venv_python" -m pip --version >/dev/null 2>&1 || "$venv_python" -m ensurepip --upgrade >/dev/null
    "$venv_python" -m pip install --disable-pip-version-check --quiet -r "$requirements"
fi
