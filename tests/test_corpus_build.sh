#!/usr/bin/env bash
# Corpus build on real compiler output (clang-14/llc-14, AMD only: no nvcc needed):
#  - dedup: the -O2/-O3 pairs of tests/data/grid-small.tsv give identical MIR, dropped once each;
#  - a variant whose LDS exceeds 64 KiB is reported as a build failure with its variant name;
#  - kill -9 the whole build mid-compile, rerun: the same instances as an uninterrupted build;
#  - every instance of the small corpus has a ground truth, and export writes them.
set -euo pipefail
bin=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
grid=tests/data/grid-small.tsv

"$bin" corpus build --out "$tmp/clean.h5" --grid "$grid" -j2 > "$tmp/clean.log" 2>&1
"$bin" corpus list "$tmp/clean.h5" > "$tmp/clean.list"
check 'grep -q "4 duplicates dropped" "$tmp/clean.log"' "dedup of -O2/-O3 pairs: $(grep instances "$tmp/clean.log")"
check 'grep -q "^FAILED fa/hd128_bc16_threads256_rpt1_half_causal0_unroll_c1_unroll_d4/gfx90a.*LDS 90112 bytes" "$tmp/clean.list"' \
  "failing variant reported by name"
check '[ "$(grep -vc ^FAILED "$tmp/clean.list")" -eq 10 ]' "10 instances"
check '! grep -v ^FAILED "$tmp/clean.list" | grep -qv "truth$"' "every small-corpus instance has a ground truth"

# interrupted build: kill the process group once the first variant is done, then resume
"$bin" corpus build --out "$tmp/resumed.h5" --grid "$grid" -j1 > "$tmp/killed.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  n=$( (find "$tmp/resumed.h5.work" -mindepth 3 -maxdepth 3 -type d ! -name '*.tmp.*' 2>/dev/null || true) | wc -l)
  [ "$n" -ge 2 ] && break
  sleep 0.05
done
# freeze the build, kill its compiler jobs, then the build itself: a crash of the whole tree
kill -STOP "$pid" 2>/dev/null || true
pkill -9 -P "$pid" 2>/dev/null || true
kill -9 "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
check '[ ! -e "$tmp/resumed.h5" ]' "a killed build leaves no corpus file"
done_before=$(find "$tmp/resumed.h5.work" -mindepth 3 -maxdepth 3 -type d ! -name '*.tmp.*' | wc -l)
"$bin" corpus build --out "$tmp/resumed.h5" --grid "$grid" -j2 > "$tmp/resumed.log" 2>&1
"$bin" corpus list "$tmp/resumed.h5" > "$tmp/resumed.list"
check 'grep -q "($done_before cached" "$tmp/resumed.log" || grep -q "cached" "$tmp/resumed.log"' "resume reused the finished variants"
check 'cmp -s "$tmp/clean.list" "$tmp/resumed.list"' "resumed build equals the clean build: $(diff "$tmp/clean.list" "$tmp/resumed.list" | head -5)"

"$bin" corpus export "$tmp/clean.h5" --split train --out "$tmp/train.jsonl" 2> "$tmp/export.log"
"$bin" corpus export "$tmp/clean.h5" --split test --out "$tmp/test.jsonl" 2>> "$tmp/export.log"
total=$(( $(wc -l < "$tmp/train.jsonl") + $(wc -l < "$tmp/test.jsonl") ))
check '[ "$total" -eq 10 ]' "export writes every instance with truth once ($total)"
check 'head -1 "$tmp/train.jsonl" | grep -q "\"completion\":\"{\\\\\"[sv]0\\\\\":"' "completion is the normalized truth map"

# bad arguments are errors with a message, exit 2
set +e
"$bin" corpus build --grid "$grid" > /dev/null 2>&1; check '[ $? -eq 2 ]' "missing --out exits 2"
"$bin" corpus build --out "$tmp/x.h5" --targets sm_70 > "$tmp/bad.log" 2>&1; check '[ $? -eq 2 ] && grep -q sm_70 "$tmp/bad.log"' "unknown target named"
"$bin" corpus info "$tmp/nope.h5" > "$tmp/bad.log" 2>&1; check '[ $? -eq 2 ] && grep -q nope.h5 "$tmp/bad.log"' "missing corpus named"
set -e
echo "test_corpus_build: $fail failed"
[ "$fail" -eq 0 ]
