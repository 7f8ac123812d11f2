#!/usr/bin/env bash
# The pinned oracle over the shipped mini corpus: every ground-truth map verifies with both
# verifiers, and every mutant (>= 10 per instance, 11 kinds) is rejected with the expected category
# by both; zero misses, zero disagreements. Under the sanitizer build (RS_TEST_QUICK=1, set by
# scripts/test.sh) the first 40 instances are checked, the full set in the normal build, where
# every one of the 14 architectures must have its own line with truths and 0 misses.
set -uo pipefail
bin=$1
limit=()
[ "${RS_TEST_QUICK:-0}" = 1 ] && limit=(--limit 40)
# Z3's budget per check is 120 s, not the default 10 s: a check that runs out of time is a Z3
# "timeout", which the oracle counts as a disagreement; on a loaded machine (load 16 here once) a
# few fa postsplit checks took longer than 10 s. Faithfulness, not Z3's speed, is under test.
out=$("$bin" oracle data/corpus-mini.h5 -j "$(nproc)" --timeout-ms 120000 "${limit[@]}" 2>&1)
status=$?
echo "$out" | grep -E "^(DISAGREEMENT|MISS) " | head -20
echo "$out" | tail -30
echo "$out" | grep -q "oracle: 0 misses" && echo "$out" | grep -q "disagreements 0" && [ $status -eq 0 ] && \
  ! echo "$out" | grep -q "mutants rejected with the expected category 0/" && \
  { [ "${RS_TEST_QUICK:-0}" = 1 ] || for t in gfx908 gfx90a gfx940 gfx942 gfx950 gfx1030 gfx1100 gfx1200 gfx1201 sm_75 sm_80 sm_86 sm_89 sm_90; do
      echo "$out" | grep -Eq "^oracle: target $t +truths ([1-9][0-9]*)/\1, .* misses 0$" || { echo "no clean line for $t"; exit 1; }
    done; }
