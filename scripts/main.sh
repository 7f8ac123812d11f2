#!/usr/bin/env bash
# The README's main command: install dependencies, build, and run a real sweep on the shipped
# mini corpus (data/corpus-mini.h5: 616 instances of real clang-14/16/22, llc-14/16/22 and nvcc/ptxas output) with
# the built-in synthetic baseline model, on 3 MPI ranks (1 coordinator + 2 workers). Prints the
# pass@k table and where run.h5 is. Extra arguments are passed to `regsweep sweep`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
out="runs/main-$(date +%Y%m%d-%H%M%S)"
mkdir -p runs
mpirun -np 3 ./build/regsweep sweep --corpus data/corpus-mini.h5 --model 'builtin:sampled?temp=0.5' \
  --samples 10 --out "$out" "$@"
