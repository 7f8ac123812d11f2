#!/usr/bin/env bash
# Build the libFuzzer targets under fuzz/ with clang-14 in build-fuzz/ (ASan + UBSan + coverage),
# replay every saved crash (fuzz/regressions/<target>/), then fuzz each target for SECONDS.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      SECONDS default 60; targets: mir ptx candidate openai sass
# Environment: RS_FUZZ_BUILD (default build-fuzz), RS_FUZZ_JOBS (targets fuzzed at once; default
# nproc), RS_FUZZ_ARGS (extra libFuzzer flags). Prints executions, exec/s and crashes per target;
# a new crash, leak, timeout or OOM input is copied to fuzz/regressions/<target>/ (commit it) and
# the script exits non-zero; so does a saved regression that still fails. fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECS=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(mir ptx candidate openai sass)
BUILD=${RS_FUZZ_BUILD:-build-fuzz}
JOBS=${RS_FUZZ_JOBS:-$(nproc)}
CC_FUZZ=${RS_FUZZ_CC:-clang-14}
[[ "$SECS" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a number, got '$SECS'" >&2; exit 2; }

command -v "$CC_FUZZ" >/dev/null || { echo "fuzz.sh: $CC_FUZZ not found (apt-get install -y clang-14)" >&2; exit 2; }
# The libFuzzer runtime ships separately on some systems: install it only when linking fails.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$probe/p.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>/dev/null; then
  echo "fuzz.sh: libFuzzer runtime missing; installing libclang-rt-14-dev" >&2
  if [ "$(id -u)" -eq 0 ]; then apt-get install -y libclang-rt-14-dev >/dev/null; else sudo apt-get install -y libclang-rt-14-dev >/dev/null; fi
  "$CC_FUZZ" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" ||
    { echo "fuzz.sh: $CC_FUZZ cannot link -fsanitize=fuzzer" >&2; exit 2; }
fi

# Configure: -DRS_FUZZ=ON; until the top-level CMakeLists.txt has that option, fuzz/inject.cmake adds it.
extra=()
grep -q 'RS_FUZZ' CMakeLists.txt || extra=(-DCMAKE_PROJECT_INCLUDE="$ROOT/fuzz/inject.cmake")
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER="$CC_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_FUZZ=ON \
  -DRS_SANITIZE=OFF "${extra[@]}" >"$BUILD/configure.log" 2>&1 ||
  { cat "$BUILD/configure.log" >&2; exit 2; }
bins=()
for t in "${TARGETS[@]}"; do bins+=("fuzz_$t"); done
cmake --build "$BUILD" -j"$(nproc)" --target "${bins[@]}" >"$BUILD/build.log" 2>&1 ||
  { tail -50 "$BUILD/build.log" >&2; exit 2; }

# sass: 16 KiB, above its largest seed (10 kB): one execution costs time linear in the listing.
max_len() { case $1 in mir | ptx) echo 65536 ;; candidate | sass) echo 16384 ;; *) echo 65536 ;; esac; }
# A dictionary of the target's tokens, where fuzz/ has one (fuzz/sass.dict: opcodes, operands).
dict_arg() { if [ -f "fuzz/$1.dict" ]; then echo "-dict=fuzz/$1.dict"; fi; }
WORK="$BUILD/fuzz"
status=0

# Seed corpora (the working corpus under $WORK/corpus/<t> persists between runs and grows).
for t in "${TARGETS[@]}"; do
  seeds="$WORK/seeds/$t"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$WORK/corpus/$t" "$WORK/artifacts/$t" "fuzz/regressions/$t"
  case $t in
    mir) # the smaller fixtures (larger ones would only be cut at max_len), and fuzz/seeds/mir
      for f in tests/fixtures/amd/*.mir; do if [ "$(stat -c %s "$f")" -le 80000 ]; then cp "$f" "$seeds/"; fi; done
      cp fuzz/seeds/mir/* "$seeds/" ;;
    ptx)
      for f in tests/fixtures/nv/*.ptx; do if [ "$(stat -c %s "$f")" -le 65536 ]; then cp "$f" "$seeds/"; fi; done ;;
    candidate) # valid and invalid answers for the target's fixed Problem, written by its Initialize
      RS_FUZZ_WRITE_SEEDS="$seeds" "$BUILD/fuzz/fuzz_candidate" -runs=0 "$probe" >/dev/null 2>&1 ;;
    openai)
      cp fuzz/seeds/openai/* "$seeds/" ;;
    sass) # small real nvdisasm listings: whole kernels and fragments (fuzz/sass_seeds.sh), the ops fixtures
      cp fuzz/seeds/sass/* tests/fixtures/sass/front/ops/*.sass "$seeds/" ;;
  esac
done

# Replay every saved crash: each must now pass.
for t in "${TARGETS[@]}"; do
  n=$(find "fuzz/regressions/$t" -type f ! -name '.gitkeep' | wc -l)
  if ! "$BUILD/fuzz/fuzz_$t" -runs=0 -rss_limit_mb=2048 "fuzz/regressions/$t" >"$WORK/replay_$t.log" 2>&1; then
    echo "fuzz.sh: $t: a saved regression still fails (fuzz/regressions/$t, log $WORK/replay_$t.log)"
    grep -m3 -E 'ERROR: |runtime error' "$WORK/replay_$t.log" || true
    status=1
  else
    echo "fuzz.sh: $t: $n saved regression(s) pass"
  fi
done

[ "$SECS" -gt 0 ] || exit $status

run_one() {
  local t=$1
  # shellcheck disable=SC2046
  "$BUILD/fuzz/fuzz_$t" -max_len="$(max_len "$t")" $(dict_arg "$t") -rss_limit_mb=2048 -max_total_time="$SECS" -timeout=30 \
    -print_final_stats=1 -artifact_prefix="$WORK/artifacts/$t/" ${RS_FUZZ_ARGS:-} \
    "$WORK/corpus/$t" "$WORK/seeds/$t" >"$WORK/fuzz_$t.log" 2>&1 || true
}
running=0
for t in "${TARGETS[@]}"; do
  rm -f "$WORK/artifacts/$t"/*
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
done
wait || true

printf '%-10s %14s %10s %8s %7s  %s\n' target executions exec/s corpus crashes log
for t in "${TARGETS[@]}"; do
  log="$WORK/fuzz_$t.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | awk '{print $2}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | awk '{print $2}')
  if [ -z "$execs" ]; then # no final stats (killed): take the last status line
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    rate=$(grep -oE 'exec/s: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  fi
  ncorp=$(find "$WORK/corpus/$t" -type f | wc -l)
  crashes=0
  for a in "$WORK/artifacts/$t"/*; do
    [ -f "$a" ] || continue
    crashes=$((crashes + 1))
    cp "$a" "fuzz/regressions/$t/"
    echo "fuzz.sh: $t: NEW FAILURE saved as fuzz/regressions/$t/$(basename "$a")" >&2
  done
  if [ "$crashes" -gt 0 ]; then
    status=1
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log" >&2 || true
    grep -m4 -E '^ +#[0-9]+ 0x[0-9a-f]+ in ' "$log" >&2 || true
  fi
  printf '%-10s %14s %10s %8s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$ncorp" "$crashes" "$log"
done
exit $status
