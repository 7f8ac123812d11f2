#!/usr/bin/env bash
# Offline batch inference (issue 41): `sweep --model batch:DIR` writes OpenAI Batch request files,
# a batch runner answers them, `sweep --ingest DIR --out RUN` records the answers. The runner is
# tests/standin_server.c --batch, A STAND-IN BATCH RUNNER (what `vllm run-batch` does; not a
# model: it answers every body with the same seeded scramble of the prompt the stand-in server
# gives online):
#   1 --until-pass --feedback in rounds: each ingest asks the next round for what still fails; at
#     the end the attempts (every row) and the table equal the online sweep's through the stand-in
#     server, and no attempt is pending
#   2 a partial result file (the runner stopped mid-line) is accepted: what it holds is ingested,
#     the rest asked again, and the run still ends equal to the online one
#   3 an ingest killed with SIGKILL (RS_FAULT, as kill -9) and ingested again: identical rows
#   4 --samples 4 with n=2 (choices per request, as online): 3 request lines per instance, the same
#     rows as online with n=2
#   5 --ingest on a run swept online is refused with the reason
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
"$standin" --port-file "$tmp/port" > "$tmp/srv.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(cat "$tmp/port")
filter='family=reduce|gemv,target=sm_90|gfx90a'
# sanitizer build (RS_TEST_QUICK=1): the same five checks on the reductions alone (CI's budget)
[ "${RS_TEST_QUICK:-0}" = 1 ] && filter='family=reduce,target=sm_90|gfx90a'
args=(--corpus "$PWD/data/corpus-mini.h5" --filter "$filter" --bind none --progress-every 30)
online() { "$bin" sweep "${args[@]}" "$@" > /dev/null 2>&1; }
# the table without the model column's spec (the same model, named by its transport)
table() { sed -n '/^| family/,/^$/p' "$1/summary.md" | sed 's#/openai:[^ |]*##; s#/batch:[^ |]*##'; }
# run every request file of the newest round through the stand-in runner; false when none
run_round() { # DIR
  local r
  r=$(ls -d "$1"/round-* 2>/dev/null | sed 's/.*round-//' | sort -n | tail -1)
  [ -n "$r" ] || return 1
  ls "$1/round-$r"/*.requests.jsonl > /dev/null 2>&1 || return 1
  for f in "$1/round-$r"/*.requests.jsonl; do
    [ -e "${f%.requests.jsonl}.results.jsonl" ] && continue
    "$standin" --batch "$f" --batch-out "${f%.requests.jsonl}.results.jsonl" || return 1
  done
}

# 1: until-pass in rounds
up=(--samples 3 --until-pass --feedback)
online "${up[@]}" --model "openai:http://127.0.0.1:$port/v1?model=tiny&timeout=20" --out "$tmp/on"
"$bin" attempts "$tmp/on" > "$tmp/on.tsv"
"$bin" sweep "${args[@]}" "${up[@]}" --model "batch:$tmp/bd?model=tiny" --out "$tmp/off" > "$tmp/off0.log" 2>&1
st=$?
nreq=$(cat "$tmp"/bd/round-1/*.requests.jsonl | wc -l)
ninst=$(cut -f1 "$tmp/on.tsv" | sort -u | wc -l)
check '[ $st -eq 0 ] && [ "$nreq" -eq "$ninst" ] && grep -q "Pending in batch request files: $ninst attempts (round 1" "$tmp/off0.log"' \
  "batch sweep: round 1 asks attempt 0 of each of the $ninst instances ($nreq request lines), the summary says what to run"
rf=("$tmp"/bd/round-1/*.requests.jsonl)
check 'grep -m1 -q "^{\"custom_id\":\"[^\"]*\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":{\"model\":\"tiny\",\"messages\":" "${rf[0]}"' \
  "request lines in the OpenAI Batch format (custom_id, method, url, body)"
rounds=0
t0=$(date +%s.%N)
for round in 1 2 3 4 5; do
  run_round "$tmp/bd" || break
  "$bin" sweep --ingest "$tmp/bd" --out "$tmp/off" --bind none > "$tmp/ing$round.log" 2>&1 || { echo "ingest $round failed"; tail -3 "$tmp/ing$round.log"; break; }
  rounds=$round
  grep -q "Pending in batch request files" "$tmp/ing$round.log" || break
done
"$bin" attempts "$tmp/off" > "$tmp/off.tsv"
check 'cmp -s "$tmp/on.tsv" "$tmp/off.tsv"' "after $rounds ingests: the same $(wc -l < "$tmp/off.tsv") attempts as online, row for row"
check '[ "$(table "$tmp/on")" = "$(table "$tmp/off")" ] && [ -n "$(table "$tmp/off")" ]' "the same table"
check '! grep -q "Pending in batch" "$tmp/off/summary.md"' "nothing pending at the end"

# 2: a partial result file: the runner stopped in the middle of a line (samples mode: several
# request lines per shard file)
online --samples 3 --model "openai:http://127.0.0.1:$port/v1?model=tiny&timeout=20" --out "$tmp/s_on"
"$bin" sweep "${args[@]}" --samples 3 --model "batch:$tmp/bp?model=tiny" --out "$tmp/par" > /dev/null 2>&1
run_round "$tmp/bp"
res=$(wc -l "$tmp"/bp/round-1/*.results.jsonl | grep -v ' total$' | sort -n | tail -1 | awk '{print $2}')
nl=$(wc -l < "$res")
head -c $(( $(stat -c %s "$res") * 2 / 3 )) "$res" > "$res.cut" && mv "$res.cut" "$res"
"$bin" sweep --ingest "$tmp/bp" --out "$tmp/par" --bind none > "$tmp/par1.log" 2>&1
st=$?
whole=$(wc -l < "$res")
again=$(cat "$tmp"/bp/round-2/*.requests.jsonl 2>/dev/null | grep -c "")
check '[ $st -eq 0 ] && [ "$whole" -ge 1 ] && [ "$whole" -lt "$nl" ] && [ "$again" -eq $((nl - whole)) ]' \
  "a result file cut at 2/3 ($whole of $nl lines whole) is ingested; round 2 asks again for the $again others"
run_round "$tmp/bp"
"$bin" sweep --ingest "$tmp/bp" --out "$tmp/par" --bind none > "$tmp/par2.log" 2>&1
check '"$bin" attempts "$tmp/par" | cmp -s - <("$bin" attempts "$tmp/s_on")' "with the partial file: the online attempts after one more round"

# 3: kill -9 during an ingest (RS_FAULT: SIGKILL after the 20th row appended), then again
"$bin" sweep "${args[@]}" --samples 2 --model "batch:$tmp/bk?model=tiny" --out "$tmp/k" > /dev/null 2>&1
"$bin" sweep "${args[@]}" --samples 2 --model "batch:$tmp/bk2?model=tiny" --out "$tmp/k2" > /dev/null 2>&1
run_round "$tmp/bk"
mkdir -p "$tmp/bk2/round-1" && cp "$tmp"/bk/round-1/*.results.jsonl "$tmp/bk2/round-1/"
"$bin" sweep --ingest "$tmp/bk2" --out "$tmp/k2" --bind none > /dev/null 2>&1 # uninterrupted
RS_FAULT=0:append:20 "$bin" sweep --ingest "$tmp/bk" --out "$tmp/k" --bind none > "$tmp/k1.log" 2>&1
st=$?
"$bin" sweep --ingest "$tmp/bk" --out "$tmp/k" --bind none > "$tmp/k2.log" 2>&1
st2=$?
check '[ $st -ne 0 ] && [ $st2 -eq 0 ] && "$bin" attempts "$tmp/k" > "$tmp/k.tsv" && "$bin" attempts "$tmp/k2" | cmp -s "$tmp/k.tsv" - && ! grep -q infra "$tmp/k.tsv"' \
  "ingest killed (status $st) and run again (status $st2): the rows of an uninterrupted ingest, no infra"

# 4: n=2, samples mode: one request for attempt 0, one per 2 attempts after, the same rows as online
online --samples 4 --block 4 --model "openai:http://127.0.0.1:$port/v1?model=tiny&timeout=20&n=2" --out "$tmp/n_on"
"$bin" sweep "${args[@]}" --samples 4 --block 4 --model "batch:$tmp/bn?model=tiny&n=2" --out "$tmp/n_off" > /dev/null 2>&1
nl=$(cat "$tmp"/bn/round-1/*.requests.jsonl | wc -l)
ni=$(cut -f1 <("$bin" attempts "$tmp/n_on") | sort -u | wc -l)
run_round "$tmp/bn"
"$bin" sweep --ingest "$tmp/bn" --out "$tmp/n_off" --bind none > /dev/null 2>&1
check '[ "$nl" -eq $((ni * 3)) ] && grep -q "\"n\":2" "$tmp"/bn/round-1/*.requests.jsonl && "$bin" attempts "$tmp/n_on" | cmp -s - <("$bin" attempts "$tmp/n_off")' \
  "n=2: $nl request lines for $ni instances x 4 attempts, the online rows"

# 5: nothing to ingest into a run swept online
"$bin" sweep --ingest "$tmp/bd" --out "$tmp/on" > "$tmp/x.log" 2>&1
st=$?
check '[ $st -eq 2 ] && grep -q "has no batch: model to ingest answers for" "$tmp/x.log"' "--ingest into an online run: $(head -c 120 "$tmp/x.log")"

echo "test_batch_sweep: $fail failed"
[ "$fail" -eq 0 ]
