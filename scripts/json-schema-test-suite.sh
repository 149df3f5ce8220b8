#!/usr/bin/env bash
# Extracts the official JSON Schema Test Suite (draft 2020-12) from the `jsonschema` sdist on PyPI,
# which vendors it, into CACHE/json-schema-test-suite, and prints the path of tests/draft2020-12.
# Usage: scripts/json-schema-test-suite.sh CACHE
set -euo pipefail
cache="$1"
version=4.26.0
dest="$cache/json-schema-test-suite/$version"
if [ ! -d "$dest/tests/draft2020-12" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" "jsonschema==$version" >&2
  tar -xzf "$tmp/jsonschema-$version.tar.gz" -C "$tmp" "jsonschema-$version/json/tests/draft2020-12"
  mkdir -p "$dest/tests"
  mv "$tmp/jsonschema-$version/json/tests/draft2020-12" "$dest/tests/"
fi
echo "$dest/tests/draft2020-12"
