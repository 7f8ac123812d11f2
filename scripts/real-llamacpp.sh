#!/usr/bin/env bash
# real-llamacpp.sh - build a REAL llama.cpp server here (CPU only) and a tiny random-weight GGUF
# model for it, to measure regsweep against the server a new user meets (docs/models.md, "Measured
# against a real llama.cpp"). Not used by CI: CI cannot rely on the source being here.
#   scripts/real-llamacpp.sh build  [SRC_GIT_DIR]   llama-server into build/llamacpp/bin
#   scripts/real-llamacpp.sh model                  build/llamacpp/tiny.gguf (byte-level vocabulary)
#   scripts/real-llamacpp.sh serve  [PORT] [SLOTS] [CTX] [extra llama-server args...]
# The source is a git directory of llama.cpp (the `fetch` tool's mirror of ggerganov/llama.cpp,
# since the upstream ggml-org repository is too large to bring here); nothing is downloaded.
# The build is resumable: cmake keeps its objects, a second `build` only relinks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${LLAMACPP_DIR:-$root/build/llamacpp}
cmd=${1:-}
shift || true
case "$cmd" in
build)
  src_git=${1:-/work/.mirror/ggerganov+llama.cpp/repo}
  mkdir -p "$out"
  if [ ! -f "$out/src/CMakeLists.txt" ]; then
    mkdir -p "$out/src"
    # a few large vocabulary files (models/) and the kompute submodule are absent from the mirror
    git --git-dir="$src_git" archive HEAD -- . ":(exclude)models" ":(exclude)ggml/src/ggml-kompute/kompute" 2> "$out/archive.log" | tar -x -C "$out/src"
    git --git-dir="$src_git" log -1 --format='%H %cd' > "$out/src/COMMIT"
  fi
  # CPU only, no libcurl (no model download), no tests/examples beyond the server target.
  nice cmake -S "$out/src" -B "$out/b" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DGGML_OPENMP=OFF -DBUILD_SHARED_LIBS=OFF > "$out/cmake.log" 2>&1
  nice cmake --build "$out/b" -j2 --target llama-server > "$out/build.log" 2>&1
  mkdir -p "$out/bin"
  cp "$out/b/bin/llama-server" "$out/bin/"
  echo "built $out/bin/llama-server from $(cat "$out/src/COMMIT")"
  ;;
model)
  mkdir -p "$out"
  python3 "$root/scripts/tiny_gguf.py" "$out/tiny.gguf"
  ;;
serve)
  port=${1:-8089} slots=${2:-4} ctx=${3:-65536}
  shift 3 || shift $#
  exec "$out/bin/llama-server" -m "$out/tiny.gguf" --host 127.0.0.1 --port "$port" \
    --parallel "$slots" --ctx-size "$ctx" --threads 1 --alias tiny --no-webui "$@"
  ;;
*)
  sed -n '2,11p' "$0"
  exit 2
  ;;
esac
