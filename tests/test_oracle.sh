#!/usr/bin/env bash
# The pinned oracle over the shipped mini corpus: every ground-truth map verifies with both
# verifiers, and every mutant (>= 10 per instance, 9 kinds) is rejected with the expected category
# by both; zero misses, zero disagreements. Under the sanitizer build (RS_TEST_QUICK=1, set by
# scripts/test.sh) the first 40 instances are checked, the full set in the normal build.
set -uo pipefail
bin=$1
limit=()
[ "${RS_TEST_QUICK:-0}" = 1 ] && limit=(--limit 40)
out=$("$bin" oracle data/corpus-mini.h5 -j "$(nproc)" "${limit[@]}" 2>&1)
status=$?
echo "$out" | tail -8
echo "$out" | grep -q "oracle: 0 misses" && echo "$out" | grep -q "disagreements 0" && [ $status -eq 0 ] && \
  ! echo "$out" | grep -q "mutants rejected with the expected category 0/"
