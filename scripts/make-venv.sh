#!/usr/bin/env bash
# Creates .venv with Python >= 3.11 and installs minidb with all extras,
# pinned by constraints.txt so every machine gets the same versions.
set -euo pipefail
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "make-venv: minidb needs Python 3.11 or newer; '$PYTHON' is $("$PYTHON" --version 2>&1 || echo missing)" >&2
    exit 1
fi
if ! "$PYTHON" -m venv .venv 2>/dev/null; then
    # Debian ships venv's ensurepip separately.
    ver=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    echo "make-venv: installing python${ver}-venv"
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && apt-get install -y -qq "python${ver}-venv" >/dev/null
    else sudo apt-get update -qq && sudo apt-get install -y -qq "python${ver}-venv" >/dev/null; fi
    rm -rf .venv
    "$PYTHON" -m venv .venv
fi
# --no-compile: Python compiles a module when it is first imported (and keeps it, see the Makefile), so
# only what is used is compiled, not every file of every package (a fifth of the set-up's time).
.venv/bin/python -m pip install --no-compile --quiet --disable-pip-version-check -c constraints.txt -e '.[viz,lab,spark,slides,dev]'
