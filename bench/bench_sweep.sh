#!/usr/bin/env bash
# End-to-end sweep throughput, np = 2 (1 worker) vs np = 3 (2 workers), side by side: the same
# selection of the mini corpus with builtin:sampled and the native verifier, alternated twice.
# Prints attempts/s of each and the ratio, and the share of worker time outside generate+verify.
#   bench/bench_sweep.sh [BIN] [--quick]   BIN default build-release/regsweep; --quick: sgemm only,
#   4 samples, one round (CI's smoke run: it asserts nothing about speed)
set -euo pipefail
bin=build-release/regsweep quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    *) bin=$a ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins leak at exit (tests/test_sweep.sh)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
filter='family=sgemm|wmma|hgemm_mfma' samples=20 rounds=2
[ $quick = 1 ] && filter='family=sgemm' samples=4 rounds=1
args=(--corpus data/corpus-mini.h5 --model 'builtin:sampled?temp=0.5' --filter "$filter"
      --samples $samples --keep none --progress-every 1000)
declare -A rate
for round in $(seq 1 $rounds); do
  for np in 2 3; do
    start=$(date +%s.%N)
    mpirun -np $np "$bin" sweep "${args[@]}" --out "$tmp/r$np-$round" > "$tmp/out" 2> "$tmp/err" ||
      { echo "bench_sweep: np=$np failed:"; tail -5 "$tmp/err"; exit 1; }
    end=$(date +%s.%N)
    n=$(grep -o '^[0-9]* attempts in' "$tmp/out" | grep -o '^[0-9]*')
    r=$(echo "$n / ($end - $start)" | bc -l)
    rate[$np]="${rate[$np]:-} $r"
    printf 'np=%d round %d: %d attempts in %.1f s = %.1f attempts/s; %s\n' $np $round "$n" \
      "$(echo "$end - $start" | bc -l)" "$r" "$(grep 'worker time' "$tmp/err" | sed 's/sweep: //')"
  done
done
best() { echo "$1" | tr ' ' '\n' | sort -g | tail -1; }
b2=$(best "${rate[2]}"); b3=$(best "${rate[3]}")
printf 'best attempts/s: np=2 %.1f, np=3 %.1f, ratio np3/np2 = %.2f\n' "$b2" "$b3" "$(echo "$b3 / $b2" | bc -l)"
