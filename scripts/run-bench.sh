#!/usr/bin/env bash
# Run one bench of bench/ the way bench/benches.tsv says it must be run (mpirun where needed).
#   scripts/run-bench.sh [--bin-dir DIR] [--quick] NAME [ARGS...]   DIR default build-release
#   scripts/run-bench.sh --check    every bench under bench/ has a line, every line a bench
#   scripts/run-bench.sh --list     the names, in manifest order
# --quick is passed on to the bench (its smallest input, one round) and caps it at RS_BENCH_CAP
# seconds (default 300). Exit: the bench's own status; 124 when the cap killed it; 2 for a bench
# the manifest does not know or whose executable was not built.
set -euo pipefail
cd "$(dirname "$0")/.."
manifest=bench/benches.tsv
names() { awk '!/^#/ && NF {print $1}' "$manifest"; }
if [ "${1:-}" = --list ]; then names; exit 0; fi
if [ "${1:-}" = --check ]; then
  bad=0
  for f in bench/bench_*.c bench/bench_*.sh; do
    [ -e "$f" ] || continue
    n=$(basename "$f"); n=${n%.*}
    names | grep -qx "$n" || { echo "run-bench: $f has no line in $manifest" >&2; bad=1; }
  done
  for n in $(names); do
    [ -e "bench/$n.c" ] || [ -e "bench/$n.sh" ] || { echo "run-bench: $manifest names $n, which bench/ does not have" >&2; bad=1; }
  done
  [ $bad = 0 ] && echo "run-bench: all $(names | wc -l) benches of bench/ are in $manifest"
  exit $bad
fi
bindir=build-release quick=()
while [ $# -gt 0 ]; do
  case $1 in
    --bin-dir) bindir=$2; shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: scripts/run-bench.sh [--bin-dir DIR] [--quick] NAME [ARGS...]" >&2; exit 2; }
name=$1; shift
line=$(awk -v n="$name" '!/^#/ && $1 == n' "$manifest")
[ -n "$line" ] || { echo "run-bench: $name: no line in $manifest" >&2; exit 2; }
read -r _ how np npq <<< "$line"
cap=()
[ ${#quick[@]} -eq 0 ] || cap=(timeout --kill-after=10 "${RS_BENCH_CAP:-300}")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
case $how in
  exe|mpi)
    exe=$bindir/bench/$name
    [ -x "$exe" ] || { echo "run-bench: $name: $exe was not built" >&2; exit 2; }
    if [ "$how" = mpi ]; then
      # sanitizer build: Open MPI's plugins leak at exit, unloaded before LeakSanitizer can name
      # them (as tests/test_sweep.sh says); address/UB checks stay on
      export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
      [ ${#quick[@]} -eq 0 ] || np=${npq:-$np}
      exec "${cap[@]}" mpirun -np "$np" "$exe" "${quick[@]}" "$@"
    fi
    exec "${cap[@]}" "$exe" "${quick[@]}" "$@" ;;
  sh)
    [ -x "$bindir/regsweep" ] || { echo "run-bench: $name: $bindir/regsweep was not built" >&2; exit 2; }
    exec "${cap[@]}" bash "bench/$name.sh" "$bindir/regsweep" "${quick[@]}" "$@" ;;
  *) echo "run-bench: $name: unknown launcher '$how' in $manifest" >&2; exit 2 ;;
esac
