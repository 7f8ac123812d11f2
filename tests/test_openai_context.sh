#!/usr/bin/env bash
# A small context is a fact of each instance, not a reason to stop (issue 41), through the
# standalone stand-in tests/standin_server.c, a TEST DOUBLE (not a model: it scrambles the prompt)
# run llama.cpp-like with 9,000 tokens of context per slot and 4 slots (--ctx 9000), two ranks:
#   1 the server states its context (/props n_ctx) and counts tokens (/apply-template, /tokenize):
#     the sweep ends with its table; every instance whose prompt + max_tokens exceeds 9,000 is an
#     infra attempt "context: prompt P tokens + max_tokens M = N > ..." with P in its row, and no
#     request of it reached the server (0 refusals); every other attempt was answered; the summary
#     counts the instances and names the context that would fit them all
#   2 the same server saying nothing (404 on /props, /tokenize): the first refusal of an instance
#     (llama.cpp's own message) marks the instance: --until-pass sends each too-large instance one
#     request, and the same instances are counted too large as in 1 or fewer (those whose prompt
#     alone fits are answered, as llama.cpp does)
set -uo pipefail
bin=$(realpath "$1")
standin=$(dirname "$bin")/tests/standin_server
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
start() { # NAME [stand-in options]: start one, print its port
  "$standin" --port-file "$tmp/$1.port" --requests-file "$tmp/$1.req" "${@:2}" > "$tmp/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$tmp/$1.port" ] && break; sleep 0.05; done
  cat "$tmp/$1.port"
}
mpi=(mpirun -np 2)
command -v mpirun > /dev/null || mpi=()
# gfx90a prera and sm_90 ptx: flash attention's prompts (13,000+ tokens) do not fit, the GEMMs' do
args=(--corpus "$PWD/data/corpus-mini.h5" --filter 'target=sm_90|gfx90a,form=ptx|prera' --bind none --progress-every 30)

# 1: the server says its context and counts tokens
p1=$(start a --ctx 9000 --slots 4)
"${mpi[@]}" "$bin" sweep "${args[@]}" --samples 2 --model "openai:http://127.0.0.1:$p1/v1?model=tiny&timeout=20" \
  --out "$tmp/a" > "$tmp/a.log" 2>&1
st=$?
"$bin" attempts "$tmp/a" > "$tmp/a.tsv" 2>/dev/null
big=$(awk -F'\t' '$5 == "infra" {print $1}' "$tmp/a.tsv" | sort -u | wc -l)
answered=$(awk -F'\t' '$5 != "infra"' "$tmp/a.tsv" | wc -l)
sent=$(grep -c '^200 ' "$tmp/a.req")
check '[ $st -eq 0 ] && grep -q "^| family | setting |" "$tmp/a.log"' "the sweep ends with its table (status $st)"
check '[ "$big" -ge 1 ] && [ "$answered" -ge 1 ]' "$big instances too large, $answered attempts answered"
check '! grep -q "^400 " "$tmp/a.req" && [ "$sent" -eq "$answered" ]' \
  "requests: $sent sent (= the answered attempts), $(grep -c '^400 ' "$tmp/a.req") refused: none for the too-large instances"
# every too-large row carries its prompt tokens (column 9) and they exceed 9000 - 4096
check '[ "$(awk -F"\t" '"'"'$5 == "infra" && $9 + 4096 <= 9000'"'"' "$tmp/a.tsv" | wc -l)" -eq 0 ] && [ "$(awk -F"\t" '"'"'$5 == "infra" && $9 == 0'"'"' "$tmp/a.tsv" | wc -l)" -eq 0 ]' \
  "each too-large row has its prompt tokens, all over 9000 - 4096"
need=$(awk -F'\t' '$5 == "infra" && $9 + 4096 > m {m = $9 + 4096} END {print m}' "$tmp/a.tsv")
check 'grep -q "Too large for the server.s context: $big instances of .* (its context: 9000 tokens); prompt + max_tokens needs up to $need tokens: a context of $need tokens would fit them all" "$tmp/a/summary.md"' \
  "summary.md: $(grep -m1 -o 'Too large for.*would fit them all' "$tmp/a/summary.md" | sed 's/openai:[^ ]*/M/')"
check 'grep -q "context: prompt [0-9]* tokens + max_tokens 4096 = [0-9]* > the server.s context 9000" "$tmp/a/summary.md"' "the infra table names the reason"
check '"$bin" report "$tmp/a" | grep -q "Too large for the server.s context: $big instances"' "report counts them too"
check '"$bin" attempts "$tmp/a" --provenance | grep -q "context 9000 tokens (llama.cpp /props n_ctx), prompts counted by llama.cpp /tokenize"' \
  "provenance names the context and the tokenizer"

# 2: a server that says nothing: the first refusal of an instance marks it (until-pass: one each)
p2=$(start b --ctx 9000 --slots 4 --says-nothing 1)
"${mpi[@]}" "$bin" sweep "${args[@]}" --samples 3 --until-pass --model "openai:http://127.0.0.1:$p2/v1?model=tiny&timeout=20" \
  --out "$tmp/b" > "$tmp/b.log" 2>&1
st=$?
"$bin" attempts "$tmp/b" > "$tmp/b.tsv" 2>/dev/null
bigb=$(awk -F'\t' '$5 == "infra" {print $1}' "$tmp/b.tsv" | sort -u | wc -l)
refused=$(grep -c '^400 ' "$tmp/b.req")
check '[ $st -eq 0 ] && [ "$bigb" -ge 1 ] && [ "$bigb" -le "$big" ]' "says nothing: the sweep ends (status $st), $bigb instances too large"
check '[ "$refused" -eq "$bigb" ]' "one refused request per too-large instance ($refused for $bigb), the later attempts not sent"
check 'grep -q "Too large for the server.s context: $bigb instances .*(its context: 9000 tokens); prompt + max_tokens needs up to" "$tmp/b/summary.md"' \
  "the refusal's own numbers: $(grep -m1 -o 'needs up to [0-9]* tokens' "$tmp/b/summary.md")"

echo "test_openai_context: $fail failed"
[ "$fail" -eq 0 ]
