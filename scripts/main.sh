#!/usr/bin/env bash
# The README's main command. Until the distributed sweep lands it builds regsweep and runs
# `regsweep inspect` over the shipped real-compiler kernels (AMD MIR at three llc stages, PTX).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
./build/regsweep inspect tests/fixtures/amd/*.prera.mir tests/fixtures/amd/*.final.mir tests/fixtures/nv/*.ptx
