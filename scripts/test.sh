#!/usr/bin/env bash
# The README's test command: install dependencies, build twice and run the whole suite in both,
# then fuzz every untrusted-input parser:
#   build/        -Wall -Wextra -Werror
#   build-asan/   -fsanitize=address,undefined at -O2 (RelWithDebInfo: the same checks, the suite
#                 628 s here against 713 s at -O0)
#   build-fuzz/   clang-14 libFuzzer targets: saved regressions replayed, then each target fuzzed
#                 for RS_FUZZ_SECONDS (default 30 here; 0 only replays) - scripts/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
jobs=$(nproc)
cmake -S . -B build -DRS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
cmake -S . -B build-asan -DRS_WERROR=ON -DRS_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-asan -j"$jobs"
# The benches' smoke runs (bench_quick_*) run in build/ only: they time, the tests check, and under
# the sanitizer one of them (bench_run_h5) alone took 229 s of the 20-minute budget.
(cd build-asan && RS_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$jobs" -E '^bench_quick_')
bash scripts/fuzz.sh "${RS_FUZZ_SECONDS:-30}"
