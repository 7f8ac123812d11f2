#!/usr/bin/env bash
# The README's test command: install dependencies, build twice and run the suite across both (every
# test at least once, under the sanitizer unless it is a bench), then fuzz every untrusted-input
# parser:
#   build/        -Wall -Wextra -Werror
#   build-asan/   -fsanitize=address,undefined at -O2 (RelWithDebInfo: the same checks, the suite
#                 628 s here against 713 s at -O0)
#   build-fuzz/   clang-14 libFuzzer targets: saved regressions replayed, then each target fuzzed
#                 for RS_FUZZ_SECONDS (default 30 here; 0 only replays) - scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS phases=""
# phase NAME: the seconds since the last mark, printed together at the end, pass or fail (CI
# shows the tail)
phase() { phases="$phases $1 $((SECONDS - t0)) s,"; t0=$SECONDS; }
trap 'rc=$?; echo "test.sh: exit $rc;$phases total $SECONDS s"' EXIT
bash scripts/install-deps.sh
phase install
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
jobs=$(nproc)
cmake -S . -B build -DRS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
phase build
# Each assertion runs once where it checks most (tests/CMakeLists.txt): a test doing the same work
# in both builds (label `once`) runs in the sanitizer build only; one that trims itself under
# RS_TEST_QUICK=1 runs in full here too; the benches' smoke runs (bench_quick_*) only here: they
# time, the tests check, and under the sanitizer one of them (bench_run_h5) alone took 229 s.
(cd build && ctest --output-on-failure -j"$jobs" -LE once)
phase ctest
cmake -S . -B build-asan -DRS_WERROR=ON -DRS_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-asan -j"$jobs"
phase build-asan
(cd build-asan && RS_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs" -E '^bench_quick_')
phase ctest-asan
bash scripts/fuzz.sh "${RS_FUZZ_SECONDS:-30}"
phase fuzz
