#!/usr/bin/env bash
# The openai: back end in real sweeps (one process, the shipped mini corpus) through the
# standalone stand-in tests/standin_server.c, a TEST DOUBLE (not a model: it scrambles the prompt):
#   1 a run's identity excludes transport: --resume against another server (port), with a longer
#     timeout and another window, extends the run, and its attempts equal an uninterrupted run's
#   2 changing a sampling parameter is another model: --resume refuses, naming 'models'
#   3 the schema probe: a stand-in that reads only llama.cpp's dialect stops a sweep with the
#     default dialect at open, naming schema=llamacpp; with it the sweep runs, and the provenance
#     records the dialect and the probe's outcome
#   4 n=2: 3 requests for 4 attempts, the same attempts on a rerun against another server, n in
#     the run's config
#   5 a server that refuses every attempt (HTTP 400, a bad request) stops the sweep early with the
#     reason and what to change; context refusals are the instances' and stop nothing; summary.md
#     and `report` group infra by reason
#   6 --feedback carries every diagnostic the verifier kept, not only the first
#   7 a run directory in use by a live sweep is locked: a --resume meanwhile is refused with the
#     holder's host and PID; once that sweep is killed, its stale lock is taken over
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
  "$standin" --port-file "$tmp/$1.port" --count-file "$tmp/$1.count" "${@:2}" > "$tmp/$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$tmp/$1.port" ] && break; sleep 0.05; done
  cat "$tmp/$1.port"
}
pa=$(start a)
pb=$(start b)
pl=$(start l --schema llamacpp)
args=(--corpus "$PWD/data/corpus-mini.h5" --filter 'family=sgemm|reduce|fa,target=sm_90,form=ptx' --split test --block 2 --progress-every 5)
spec() { echo "openai:http://127.0.0.1:$1/v1?model=standin&temperature=0.8${2:-}"; }
same_as() { "$bin" attempts "$2" > "$2.tsv" 2>&1; cmp -s "$1" "$2.tsv" || { diff "$1" "$2.tsv" | head -3; return 1; }; }

# 1: the reference on server b; then 2 samples on server a, resumed to 4 on server b with other
# transport settings
"$bin" sweep "${args[@]}" --samples 4 --model "$(spec "$pb" "&timeout=600&inflight=2")" --out "$tmp/ref" > "$tmp/ref.log" 2>&1
check '[ $? -eq 0 ]' "reference run: $(tail -1 "$tmp/ref.log" | cut -c1-100)"
"$bin" attempts "$tmp/ref" > "$tmp/ref.tsv"
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pa" "&timeout=30")" --out "$tmp/r" > "$tmp/r1.log" 2>&1
check '[ $? -eq 0 ]' "2 samples through server a"
"$bin" sweep "${args[@]}" --samples 4 --model "$(spec "$pb" "&timeout=600&inflight=2&retries=7")" --out "$tmp/r" --resume > "$tmp/r2.log" 2>&1
check '[ $? -eq 0 ] && grep -q reused "$tmp/r2.log"' "resume on server b with timeout=600, inflight=2, retries=7: $(grep -m1 reused "$tmp/r2.log")"
check 'same_as "$tmp/ref.tsv" "$tmp/r"' "resumed across servers = uninterrupted run"

# 2: a different temperature is a different model
"$bin" sweep "${args[@]}" --samples 6 --model "openai:http://127.0.0.1:$pb/v1?model=standin&temperature=0.9" --out "$tmp/r" --resume > "$tmp/r3.log" 2>&1
st=$?
check '[ $st -eq 2 ] && grep -q "cannot resume.*'"'"'models'"'"' differs" "$tmp/r3.log"' "temperature changed: resume refused ($(tail -1 "$tmp/r3.log" | cut -c1-120))"

# 3: the probe
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pl")" --out "$tmp/p1" > "$tmp/p1.log" 2>&1
st=$?
check '[ $st -eq 2 ] && grep -q "schema=openai: the server does not apply" "$tmp/p1.log" && grep -q "schema=llamacpp does: use it" "$tmp/p1.log"' \
  "probe: ignored dialect stops the sweep (status $st): $(grep -m1 -o 'schema=openai: the server.\{0,40\}' "$tmp/p1.log")"
check '[ "$(wc -l < "$tmp/l.count")" -le 3 ]' "... before any attempt ($(wc -l < "$tmp/l.count") probe requests)"
"$bin" sweep "${args[@]}" --samples 1 --model "$(spec "$pl" "&schema=llamacpp")" --out "$tmp/p2" > "$tmp/p2.log" 2>&1
check '[ $? -eq 0 ]' "schema=llamacpp: the sweep runs"
"$bin" attempts "$tmp/p2" --provenance > "$tmp/p2.prov"
check 'grep -q "^model_servers: rank 0, model 0: schema=llamacpp (probe: the server applied it); sampling sent: temperature=0.8 top_p=1 top_k=-1" "$tmp/p2.prov"' \
  "provenance: $(grep -m1 '^model_servers' "$tmp/p2.prov" | cut -c1-150)"

# 4: n=2 (choices per request): groups by attempt / 2, attempt 0 alone: [0] [1] [2 3]
: > "$tmp/a.count"
"$bin" sweep "${args[@]}" --samples 4 --block 4 --model "$(spec "$pa" "&n=2")" --out "$tmp/n1" > "$tmp/n1.log" 2>&1
check '[ $? -eq 0 ]' "n=2 sweep"
ninst=$(cut -f1 <("$bin" attempts "$tmp/n1") | sort -u | wc -l)
reqs=$(wc -l < "$tmp/a.count")
check '[ "$reqs" -eq $((ninst * 3 + 1)) ]' "n=2: $reqs requests for $ninst instances x 4 attempts (3 each, and the probe)"
"$bin" sweep "${args[@]}" --samples 4 --block 4 --model "$(spec "$pb" "&n=2&inflight=1")" --out "$tmp/n2" > "$tmp/n2.log" 2>&1
"$bin" attempts "$tmp/n1" > "$tmp/n1.tsv"
check 'same_as "$tmp/n1.tsv" "$tmp/n2"' "n=2 rerun on another server: the same attempts"
check 'grep -q "openai?model=standin&temperature=0.8&n=2" "$tmp/n1/config.json"' "n=2 is part of the model identity in config.json"
check '[ "$(cut -f5 "$tmp/n1.tsv" | sort -u | wc -l)" -ge 2 ] && ! grep -q infra "$tmp/n1.tsv"' \
  "n=2 candidates get several verdicts, no infra: $(cut -f5 "$tmp/n1.tsv" | sort | uniq -c | tr '\n' ' ')"

# 5: refusals every request meets ("MIN_PROMPT_TOKENS MESSAGE": prompts from that size on)
pr=$(start r --refuse-file "$tmp/refuse")
echo "0 unsupported value: 'response_format' is not a known field" > "$tmp/refuse"
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pr")" --out "$tmp/x1" > "$tmp/x1.log" 2>&1
st=$?
check '[ $st -ne 0 ] && grep -q "the server refused 3 attempts in a row, of [0-9]* instances" "$tmp/x1.log" && grep -q "the server rejects the request itself" "$tmp/x1.log"' \
  "refusals of every instance stop the sweep (status $st): $(grep -m1 -o 'the server refused.\{0,60\}' "$tmp/x1.log")"
check '[ "$(wc -l < "$tmp/r.count")" -le 1 ]' "... after a few requests (answered: $(wc -l < "$tmp/r.count"), the probe)"
# a prompt too long for the server's context is the instance's, never the server's: with every
# instance refused so (a server that does not state its context), the sweep still ends, each
# instance's attempts recorded with the reason (tests/test_openai_context.sh: the full picture)
echo "0 request (5994 tokens) exceeds the available context size (4096 tokens), try increasing it" > "$tmp/refuse"
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pr")" --out "$tmp/x3" > "$tmp/x3.log" 2>&1
st=$?
check '[ $st -eq 0 ] && grep -q "Too large for the server.s context: [0-9]* instances" "$tmp/x3.log"' \
  "context refusals of every instance: the sweep ends (status $st): $(grep -m1 -o 'Too large for.\{0,60\}' "$tmp/x3.log")"
# one instance too long for the server (sgemm's ~10,000-token prompt) among fitting ones (reduce,
# gemv: under 2,000) does not stop a sweep; its reason is in the summaries
echo "5000 the model does not fit: request exceeds the available context size" > "$tmp/refuse"
"$bin" sweep --corpus "$PWD/data/corpus-mini.h5" --filter 'family=reduce|gemv|sgemm,target=sm_90,form=ptx' --split test \
  --samples 2 --model "$(spec "$pr")" --out "$tmp/x2" > "$tmp/x2.log" 2>&1
st=$?
check '[ $st -eq 0 ] && [ "$(grep -c infra <("$bin" attempts "$tmp/x2"))" -eq 2 ]' \
  "one refused instance among answered ones: the sweep ends normally (status $st), 2 infra attempts"
check 'grep -q "## Infra attempts by reason" "$tmp/x2/summary.md" && grep -q "| 2 | context: the prompt does not fit the server.s context (the server refused it" "$tmp/x2/summary.md"' \
  "summary.md: $(grep -m1 'context: ' "$tmp/x2/summary.md")"
check '"$bin" report "$tmp/x2" | grep -q "| 2 | context: the prompt does not fit"' "report groups infra by reason"
check 'grep -q "| 2 | context: the prompt does not fit" "$tmp/x2.log" && grep -q "Too large for the server.s context: 1 instances" "$tmp/x2.log"' "the sweep's end summary says it"

# 6: the feedback of a rejected answer lists its diagnostics (the stand-in's scrambles break
# many values), and says how many there were when the verifier kept fewer
mkdir -p "$tmp/prompts"
pf=$(start f --prompt-dir "$tmp/prompts")
"$bin" sweep --corpus "$PWD/data/corpus-mini.h5" --filter 'family=gemv,target=sm_90,form=ptx' --split train --samples 2 \
  --until-pass --feedback --model "$(spec "$pf")" --out "$tmp/fb" > "$tmp/fb.log" 2>&1
fbp=$(grep -l "rejected by the verifier" "$tmp/prompts"/*.txt | head -1)
nd=$([ -n "$fbp" ] && sed -n '/rejected by the verifier:/,/Correct these problems/p' "$fbp" | wc -l || echo 0)
check '[ -n "$fbp" ] && [ "$nd" -ge 4 ]' "the second prompt's feedback has $((nd - 2)) lines: $(sed -n '/rejected by the verifier:/{n;p;}' "$fbp" 2>/dev/null | cut -c1-80)"

# 7: the run directory's lock
pd=$(start d --delay-file "$tmp/delay")
echo 2500 > "$tmp/delay" # longer than the 5 s a live holder on this host is given to exit
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pd" "&inflight=1")" --out "$tmp/lk" > "$tmp/lk1.log" 2>&1 &
sw=$!
for _ in $(seq 1 200); do [ -s "$tmp/lk/lock" ] && break; sleep 0.05; done
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pd")" --out "$tmp/lk" --resume > "$tmp/lk2.log" 2>&1
st=$?
check '[ $st -eq 2 ] && grep -q "is in use by a live sweep (host $(hostname) pid $sw since" "$tmp/lk2.log"' \
  "a --resume during a live sweep is refused: $(cut -c1-160 "$tmp/lk2.log")"
kill -9 $sw 2>/dev/null
wait $sw 2>/dev/null
rm -f "$tmp/delay"
"$bin" sweep "${args[@]}" --samples 2 --model "$(spec "$pd")" --out "$tmp/lk" --resume > "$tmp/lk3.log" 2>&1
st=$?
check '[ $st -eq 0 ] && grep -q "took over the lock of a sweep that is gone (host $(hostname) pid $sw" "$tmp/lk3.log" && [ ! -e "$tmp/lk/lock" ]' \
  "after a kill -9 the stale lock is taken over (status $st): $(grep -m1 -o 'took over.\{0,60\}' "$tmp/lk3.log")"

echo "test_openai_sweep: $fail failed"
[ "$fail" -eq 0 ]
