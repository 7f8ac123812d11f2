#!/usr/bin/env bash
# The table grown by construction (issue 42): SASS forms seen / known per architecture on
# scripts/ptxgen.py's kernels (our own, from the PTX-ISA grammar), with the table of a baseline
# regsweep (--baseline BIN, e.g. one built from the commit before) and of this one side by side,
# table rows only the generator reaches (vs tests/fixtures' listings), pinned identical and live
# = nvdisasm on the listings, and the wall time of each step (build: cached after the first run).
#   bench/bench_ptxgen.sh [BIN] [--quick] [--baseline BIN]
#   --quick: three small groups (iadd, idp, ibits: 61 variants) for sm_80 only, cached beside BIN
#   in ptxgen-bench-quick/ (CI's smoke run)
#   default: every group, every architecture, cached in build/ptxgen (the first run compiles
#   ~20,000 kernels: ~5 min alone on 2 cores, ~16 min on a loaded machine; reruns read the cache)
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${REGSWEEP:-build/regsweep}
base=""
quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --baseline) base=$2; shift ;;
    *) bin=$1 ;;
  esac
  shift
done
PY=/usr/bin/python3
for t in "$PY" "${PTXAS:-/usr/local/cuda/bin/ptxas}" "${NVDISASM:-/opt/nvidia-cuda-11.8/usr/bin/nvdisasm}" "$bin"; do
  [ -x "$t" ] || { echo "bench_ptxgen: SKIPPED: $t not found"; exit 0; }
done
if [ $quick = 1 ]; then
  # three small groups, 61 variants (the quick subset, ~240 kernels, took 25 s of CI's plain
  # phase); its own folder, not the test's: ctest -j may run both at once
  args=(--arch sm_80 --groups iadd,idp,ibits --out "$(cd "$(dirname "$bin")" && pwd)/ptxgen-bench-quick")
else
  args=(--out build/ptxgen)
fi
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
t=$(date +%s%N)
$PY scripts/ptxgen.py build "${args[@]}" --regsweep "$bin" || exit 1
echo "build: $(ms "$t") ms"
if [ -n "$base" ]; then
  t=$(date +%s%N)
  $PY scripts/ptxgen.py report "${args[@]}" --regsweep "$base" | sed -E 's/^ptxgen:? /before: /'
  echo "report (before): $(ms "$t") ms"
else
  echo "before: no --baseline BIN given (docs/ptxgen.md has the numbers of the table before the generator)"
fi
t=$(date +%s%N)
$PY scripts/ptxgen.py report "${args[@]}" --regsweep "$bin" | sed -E 's/^ptxgen:? /after:  /'
echo "report (after): $(ms "$t") ms"
t=$(date +%s%N)
$PY scripts/ptxgen.py check "${args[@]}" --regsweep "$bin" | grep '^ptxgen check sm_[0-9]*:'
echo "check (pinned + live, after): $(ms "$t") ms"
