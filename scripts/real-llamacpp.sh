#!/usr/bin/env bash
# real-llamacpp.sh - build a REAL llama.cpp server here (CPU only) and a tiny random-weight GGUF
# model for it, to measure regsweep against the server a new user meets (docs/models.md, "Measured
# against a real llama.cpp"). Not used by CI: CI cannot rely on the source being here.
#   scripts/real-llamacpp.sh build  [SRC_GIT_DIR]   llama-server into build/llamacpp/bin
#   scripts/real-llamacpp.sh model                  build/llamacpp/tiny.gguf (byte-level vocabulary)
#   scripts/real-llamacpp.sh serve  [PORT] [SLOTS] [CTX] [extra llama-server args...]
#   scripts/real-llamacpp.sh measure [REGSWEEP]       the figures of docs/models.md ("Measured
#                                                   against a real llama.cpp"), in build/llamacpp/m/
#     (each step keeps its run directory: a second `measure` skips what is done)
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
measure)
  set +e # a sweep that stops (the probe, the small context) is a measurement, not a failure
  bin=$(realpath "${1:-$root/build/regsweep}")
  m=$out/m
  mkdir -p "$m"
  corpus=$root/data/corpus-mini.h5
  filt='family=conv2d,target=gfx908|gfx1030|gfx1100,form=postsplit'
  port=8089 bad=8090
  srv=() mon=""
  stop() { [ -n "$mon" ] && kill "$mon" 2>/dev/null; for p in "${srv[@]}"; do kill "$p" 2>/dev/null; done; }
  trap stop EXIT
  up() { # PORT SLOTS CTX [args]: start a server, wait until it answers
    "$0" serve "$@" > "$m/server-$1.log" 2>&1 &
    srv+=($!)
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$1/health" > /dev/null && return 0; sleep 0.2; done
    echo "server on $1 did not start"; return 1
  }
  up $port 4 65536 --slots --metrics
  # 1. the probe: the old probe's 24 tokens cut the applied answer; each dialect's verdict now
  curl -s "http://127.0.0.1:$port/v1/chat/completions" -d '{"model":"tiny","messages":[{"role":"user","content":"Say hello in one word."}],"max_tokens":24,"temperature":0,"json_schema":{"type":"object","properties":{"regsweep_probe":{"type":"string","pattern":"^zq7$"}},"required":["regsweep_probe"],"additionalProperties":false}}' > "$m/probe24.json"
  for d in openai llamacpp vllm; do
    [ -e "$m/probe-$d/run.h5" ] || "$bin" sweep --corpus "$corpus" --filter "$filt" --split test --samples 1 \
      --model "openai:http://127.0.0.1:$port/v1?model=tiny&schema=$d&max_tokens=16" --out "$m/probe-$d" > "$m/probe-$d.log" 2>&1
    echo "probe $d: exit $? $(grep -ho 'probe: [^;]*' "$m/probe-$d.log" <("$bin" attempts "$m/probe-$d" --provenance 2>/dev/null) | head -1)$(grep -o 'schema=[a-z]*: the server does not apply.*' "$m/probe-$d.log" | cut -c1-600)"
  done
  # 2-4. sweeps with and without the strict schema: requests at the server (its /metrics every
  # second), timeouts, verdicts, tokens per second
  for strict in 0 1; do
    r=$m/sweep-strict$strict
    [ -e "$r/run.h5" ] && continue
    rm -rf "$r"
    ( while :; do curl -s "http://127.0.0.1:$port/metrics" | grep -E '^llamacpp:requests_(processing|deferred)' | tr '\n' ' '; echo; sleep 1; done ) > "$r.metrics" &
    mon=$!
    "$bin" sweep --corpus "$corpus" --filter "$filt" --split test --samples 3 --progress-every 10 \
      --model "openai:http://127.0.0.1:$port/v1?model=tiny&schema=llamacpp&schema_strict=$strict&max_tokens=4096&timeout=600" \
      --out "$r" > "$r.log" 2>&1
    kill "$mon"; mon=""
  done
  for strict in 0 1; do
    r=$m/sweep-strict$strict
    echo "strict=$strict: $(grep -m1 -o '[0-9]* in flight (window [^)]*))' "$r.log")"
    echo "  server: max processing $(awk '{for(i=1;i<=NF;i++) if($i ~ /processing/) print $(i+1)}' "$r.metrics" | sort -n | tail -1), max deferred $(awk '{for(i=1;i<=NF;i++) if($i ~ /deferred/) print $(i+1)}' "$r.metrics" | sort -n | tail -1)"
    "$bin" attempts "$r" --timings | awk -F'\t' '{v[$5]++; tok+=$10; s+=$13; n++; if ($11==1) cut++} END {printf "  %d attempts:", n; for (k in v) printf " %s %d", k, v[k]; printf "; %d cut at max_tokens; completion tokens %d in %.0f s of requests: %.1f tokens/s per request\n", cut, tok, s, tok/s}'
    grep -m1 "Timeout" "$r.log" || echo "  timed out: $(grep -c 'timed out' <("$bin" attempts "$r" --texts)) attempts"
  done
  # 5. a server whose context is too small (1024 tokens a slot, no context shift): every attempt
  # refused; the sweep stops early with the reason
  up $bad 4 4096 --no-context-shift
  rm -rf "$m/small-ctx"
  "$bin" sweep --corpus "$corpus" --filter "$filt" --split test --samples 3 \
    --model "openai:http://127.0.0.1:$bad/v1?model=tiny&schema=llamacpp&max_tokens=4096" --out "$m/small-ctx" > "$m/small-ctx.log" 2>&1
  echo "small context: exit $?: $(grep -m1 -o 'the server refused.*' "$m/small-ctx.log" | cut -c1-500)"
  ;;
*)
  sed -n '2,14p' "$0"
  exit 2
  ;;
esac
