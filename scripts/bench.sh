#!/usr/bin/env bash
# Build a Release tree in build-release/ and run every bench of bench/ (bench/benches.tsv says how
# each is launched: scripts/run-bench.sh), from the repository root.
#   scripts/bench.sh [--quick] [NAME...]     all benches, or the ones named; --quick: CI's smoke run
# Exits non-zero naming each bench that failed; a bench whose reference tool is missing says so in
# its own table and still runs to its end.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
[ "${1:-}" = --quick ] && { quick=(--quick); shift; }
bash scripts/install-deps.sh
bash scripts/run-bench.sh --check
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j"$(nproc)" >/dev/null
[ $# -gt 0 ] || set -- $(bash scripts/run-bench.sh --list)
failed=()
for n in "$@"; do
  echo "### $n ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg))"
  rc=0
  bash scripts/run-bench.sh --bin-dir build-release "${quick[@]}" "$n" || rc=$?
  [ $rc = 0 ] || { echo "### $n FAILED (exit $rc)"; failed+=("$n"); }
  echo
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench.sh: ${#failed[@]} of $# benches failed: ${failed[*]}" >&2
  exit 1
fi
echo "bench.sh: all $# benches ran to their end"
