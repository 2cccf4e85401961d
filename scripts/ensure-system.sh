#!/usr/bin/env bash
# Installs the system programs minidb needs when they are missing:
#   dot (Debian package graphviz)   - drawing trees and graphs in notebooks
#   java 17 or newer                - Apache Spark, for the data pipeline
#   chromium (Debian package)       - the browser test of the notebooks (Playwright drives it;
#                                     it never downloads a browser of its own)
# Uses apt-get (through sudo when not root). Prints what it does; quiet when
# everything is present.
set -euo pipefail

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "ensure-system: need root (or sudo) to run: $*" >&2; exit 1; fi
}

missing=()
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)

java_major() {
    command -v java >/dev/null 2>&1 || { echo 0; return; }
    java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}
if [ "$(java_major)" -lt 17 ] 2>/dev/null; then missing+=(openjdk-17-jre-headless); fi

if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null; then
        echo "ensure-system: please install: ${missing[*]} (no apt-get on this machine)" >&2
        exit 1
    fi
    echo "ensure-system: installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
