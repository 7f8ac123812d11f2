#!/usr/bin/env bash
# Build a Release tree in build-release/ and run every bench/bench_* executable from the repo
# root (benches find fixtures by relative path). Extra arguments go to every bench, e.g.
#   scripts/bench.sh --rounds 31
# Exits non-zero if any bench fails; a bench whose reference tool is missing skips itself.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" >/dev/null
status=0
found=0
for b in build-release/bench/bench_*; do
  [ -f "$b" ] && [ -x "$b" ] || continue
  found=1
  echo "### $(basename "$b")"
  "$b" "$@" || { echo "### $(basename "$b") failed (exit $?)"; status=1; }
  echo
done
[ "$found" -eq 1 ] || { echo "bench.sh: no bench executables in build-release/bench" >&2; exit 1; }
exit "$status"
