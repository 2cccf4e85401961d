#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image, with this zip unpacked in
# /autograder/source. It makes source/.venv: a Python 3.11 or newer with what grading needs
# (@PACKAGES@), pinned by constraints.txt as scripts/make-venv.sh pins every package. With a wheels/
# folder in the zip (scripts/autograder.py --wheels DIR) nothing comes from the network: pip takes the
# pinned wheels from there. minidb itself is not installed: run_autograder runs it from this folder.
set -euo pipefail
cd "$(dirname "$0")"

python=""
for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    # Older Ubuntu images have an older python3; their python3.11 package is enough.
    apt-get update -qq
    apt-get install -y -qq python3.11 python3.11-venv >/dev/null
    python=python3.11
fi
if ! "$python" -m venv .venv 2>/dev/null; then
    # Debian and Ubuntu ship venv's ensurepip separately.
    ver=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    apt-get update -qq
    apt-get install -y -qq "python${ver}-venv" >/dev/null
    rm -rf .venv
    "$python" -m venv .venv
fi
offline=()
if [ -d wheels ]; then
    offline=(--no-index --find-links wheels)
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check ${offline[@]+"${offline[@]}"} \
    -c constraints.txt @PACKAGES@
