#!/usr/bin/env bash
# The worker's request window (worker/engine.c) changes how fast a sweep runs, never what it
# records. Against two TEST DOUBLES (not models): the inference stand-in tests/standin_server.c and
# the simulated batching server bench/serve_sim.c, which also logs a hash of every prompt
# by seed (so the feedback each attempt was sent is compared too), and builtin:sampled:
#  - until-pass with feedback and samples mode: the attempt table (texts and diagnostics
#    included) and every attempt's prompt under --window-mode instance (one instance at a time,
#    the old way) equal those of windows of 3 and 16 requests, at -np 1 and 3;
#  - the window really is used: the progress line shows several requests in flight;
#  - kill -9 of a worker mid-window, then --resume (a slower simulated server): the same table, no
#    attempt lost or duplicated;
#  - SIGTERM of mpirun mid-window: no half-written shard file is left, the log says so, --resume
#    gives the same table; the provenance keeps the first start and records the window;
#  - builtin:sampled: window, instance mode and verification on the main thread agree;
#  - a server answering 429 backs the window off (AIMD) without losing or changing attempts.
# RS_TEST_QUICK=1 (sanitizer build): 15 instances, one window configuration, fewer cross-checks.
set -uo pipefail
bin=$(realpath "$1")
standin=$(dirname "$bin")/tests/standin_server
sim=$(dirname "$bin")/bench/serve_sim
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins: see test_sweep.sh
tmp=$(mktemp -d)
sd_pid=""
sim_pid=""
sim2_pid=""
slow_pid=""
cleanup() {
  [ -n "$slow_pid" ] && kill "$slow_pid" 2>/dev/null
  [ -n "$sim2_pid" ] && kill "$sim2_pid" 2>/dev/null
  [ -n "$sd_pid" ] && kill "$sd_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
filter='family=wmma|sgemm|reduce,target=sm_90,form=ptx'
[ "${RS_TEST_QUICK:-0}" = 1 ] && filter='family=sgemm|reduce|scan,target=sm_90,form=ptx' # sanitizer build: 10 instances
# table DIR: DIR.tsv (one line per attempt) and DIR.txt (with texts and diagnostics)
table() { "$bin" attempts "$1" > "$1.tsv" 2>&1; "$bin" attempts "$1" --texts > "$1.txt" 2>&1; }
same() { cmp -s "$1" "$2" || { diff "$1" "$2" | head -3 | cut -c1-200; return 1; }; }
ntmp() { find "$1/shards" -name '*.tmp.*' 2>/dev/null | wc -l; }

"$standin" --port-file "$tmp/sd.port" --delay-file "$tmp/sd.delay" > "$tmp/sd.log" 2>&1 &
sd_pid=$!
# the simulated batching server (bench/serve_sim.c, also a TEST DOUBLE) logs a hash of
# every prompt it is sent, by seed: the feedback each attempt was given
"$sim" --port-file "$tmp/sim.port" --capacity 64 --step-ms 1 --step-seq-ms 0 --tokens-per-step 500 --log "$tmp/sim.log" > "$tmp/sim.out" 2>&1 &
sim_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/sd.port" ] && [ -s "$tmp/sim.port" ] && break; sleep 0.05; done
port=$(cat "$tmp/sd.port")
echo 20 > "$tmp/sd.delay"
url="openai:http://127.0.0.1:$port/v1?model=standin&timeout=20&retries=2&backoff=0.05&inflight=16"
# schema=0: the simulated server applies no structured output (the probe would say so and stop)
simurl="openai:http://127.0.0.1:$(cat "$tmp/sim.port")/v1?model=sim&schema=0&timeout=20&retries=2&backoff=0.05&inflight=16"
up=(--corpus "$PWD/data/corpus-mini.h5" --filter "$filter" --samples 5 --until-pass --progress-every 0.3)
# prompts DIR: the (seed, prompt hash) pairs the server got during the last run, sorted
prompts() { sort "$tmp/sim.log" > "$1.prompts"; : > "$tmp/sim.log"; }

# until-pass with feedback: the old one-instance-at-a-time loop is the reference
"$bin" sweep "${up[@]}" --feedback --model "$simurl" --window-mode instance --out "$tmp/ref" > "$tmp/ref.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "reference (instance mode): $(tail -1 "$tmp/ref.log")"
table "$tmp/ref"
prompts "$tmp/ref"
check '[ "$(wc -l < "$tmp/ref.tsv")" -ge 40 ] && [ "$(cut -f3 "$tmp/ref.tsv" | sort -u | wc -l)" -ge 3 ]' \
  "the reference loops: $(wc -l < "$tmp/ref.tsv") rows, attempts $(cut -f3 "$tmp/ref.tsv" | sort -un | tr '\n' ' ')"
# no progress line of the run ever shows more than one request in flight (the count is live: a
# line may show 0 or 1; on a fast machine few lines come before the end)
check '! grep -qE " ([2-9]|[1-9][0-9]+) in flight" "$tmp/ref.log"' \
  "instance mode keeps one request in flight"
check '[ "$(wc -l < "$tmp/ref.prompts")" -eq "$(wc -l < "$tmp/ref.tsv")" ]' "one prompt per attempt"
if [ "${RS_TEST_QUICK:-0}" != 1 ]; then # (sanitizer build: fewer runs)
  "$bin" sweep "${up[@]}" --model "$simurl" --out "$tmp/nofb" > "$tmp/nofb.log" 2>&1
  prompts "$tmp/nofb"
  check '! cmp -s "$tmp/ref.prompts" "$tmp/nofb.prompts"' "the feedback is in the prompts (without --feedback they differ)"
fi

cfgs=("1 3" "1 16" "3 3" "3 16")
[ "${RS_TEST_QUICK:-0}" = 1 ] && cfgs=("3 16")
for cfg in "${cfgs[@]}"; do
  set -- $cfg
  np=$1 win=$2
  d="$tmp/up_np${np}_w$win"
  mpirun -np "$np" "$bin" sweep "${up[@]}" --feedback --model "$simurl" --inflight "$win" --out "$d" > "$d.log" 2>&1
  st=$?
  check '[ $st -eq 0 ]' "until-pass, -np $np, window $win: $(tail -1 "$d.log")"
  table "$d"
  prompts "$d"
  check 'same "$tmp/ref.tsv" "$d.tsv" && same "$tmp/ref.txt" "$d.txt"' "until-pass, -np $np, window $win: the same attempts, texts and verdicts"
  check 'same "$tmp/ref.prompts" "$d.prompts"' "until-pass, -np $np, window $win: every attempt got the same prompt and feedback"
done
# samples mode: blocks of several instances go out together
sm=(--corpus "$PWD/data/corpus-mini.h5" --filter "$filter" --samples 6 --block 3 --progress-every 0.3)
"$bin" sweep "${sm[@]}" --model "$url" --window-mode instance --out "$tmp/sref" > "$tmp/sref.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "samples reference: $(tail -1 "$tmp/sref.log")"
table "$tmp/sref"
mpirun -np 3 "$bin" sweep "${sm[@]}" --model "$url" --inflight 32 --out "$tmp/sw" > "$tmp/sw.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "samples, -np 3, window 32: $(tail -1 "$tmp/sw.log")"
table "$tmp/sw"
check 'same "$tmp/sref.tsv" "$tmp/sw.tsv" && same "$tmp/sref.txt" "$tmp/sw.txt"' "samples mode: window 32 at -np 3 = instance mode"

# kill -9 a worker mid-window, then --resume, against a slower simulated server (~0.3 s a request):
# the seeds come from the model's identity (name, sampling), not its URL, so the reference holds
"$sim" --port-file "$tmp/slow.port" --capacity 64 --step-ms 10 --step-seq-ms 0 --tokens-per-step 50 > "$tmp/slow.out" 2>&1 &
slow_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/slow.port" ] && break; sleep 0.05; done
slowurl="openai:http://127.0.0.1:$(cat "$tmp/slow.port")/v1?model=sim&schema=0&timeout=20&retries=2&backoff=0.05&inflight=16"
up=("${up[@]}" --feedback)
d="$tmp/kill"
mpirun -np 3 "$bin" sweep "${up[@]}" --model "$slowurl" --out "$d" > "$d.log" 2>&1 &
mp=$!
for _ in $(seq 1 1500); do [ "$(ls "$d/shards" 2>/dev/null | grep -c '\.h5$')" -ge 2 ] && break; sleep 0.02; done
victim=$(pgrep -f "^$bin sweep.*$d\$" | sort -n | tail -1)
[ -n "$victim" ] && kill -9 "$victim"
wait $mp
check '[ -n "$victim" ]' "killed worker $victim mid-window"
mpirun -np 3 "$bin" sweep "${up[@]}" --model "$slowurl" --out "$d" --resume > "$d.resume.log" 2>&1
st=$?
# several until-pass loops in flight at once: sampled by the progress lines (every 0.3 s) of the
# two runs against the slow server, whose ~0.3 s per request outlasts a worker's own work on a
# prompt (against the fast one a loaded sanitizer build's worker was the bottleneck: 1 in flight)
maxin=$(cat "$d.log" "$d.resume.log" | grep -o '[0-9]* in flight' | cut -d' ' -f1 | sort -n | tail -1)
seen=$(cat "$d.log" "$d.resume.log" | grep -cE ' [1-9][0-9]* in flight')
check '[ "$seen" -lt 2 ] || [ "${maxin:-0}" -ge 4 ]' \
  "window 16 keeps several until-pass loops in flight at once (max seen ${maxin:-0} over $seen sampled lines)"
check '[ $st -eq 0 ]' "resume after kill -9: $(grep -m1 reused "$d.resume.log")"
table "$d"
check 'same "$tmp/ref.tsv" "$d.tsv" && same "$tmp/ref.txt" "$d.txt"' "kill -9 mid-window + resume = uninterrupted run"
check '[ "$(cut -f1-3 "$d.tsv" | sort | uniq -d | wc -l)" -eq 0 ]' "no attempt duplicated"

# SIGTERM of mpirun mid-window: unfinished shard files removed, said so; resume completes it
d="$tmp/term"
mpirun -np 3 "$bin" sweep "${up[@]}" --model "$slowurl" --out "$d" > "$d.log" 2>&1 &
mp=$!
for _ in $(seq 1 1500); do [ "$(ls "$d/shards" 2>/dev/null | grep -c '\.h5')" -ge 3 ] && break; sleep 0.02; done
kill -TERM $mp
wait $mp
st=$?
check '[ $st -ne 0 ] && grep -q "terminated (SIGTERM): removed" "$d.log"' "SIGTERM: the job ends (status $st) and says so: $(grep -m1 SIGTERM "$d.log")"
check '[ "$(ntmp "$d")" -eq 0 ]' "SIGTERM: no unfinished shard file left ($(ntmp "$d"))"
mpirun -np 3 "$bin" sweep "${up[@]}" --model "$slowurl" --out "$d" --resume > "$d.resume.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "resume after SIGTERM: $(grep -m1 reused "$d.resume.log")"
table "$d"
check 'same "$tmp/ref.tsv" "$d.tsv"' "SIGTERM + resume = uninterrupted run"
"$bin" attempts "$d" --provenance > "$d.prov"
first=$(grep '^start: ' "$d.prov" | cut -d' ' -f2); this=$(grep '^this_start: ' "$d.prov" | cut -d' ' -f2)
check '[ -n "$first" ] && [ -n "$this" ] && [ "$(cat "$d/started")" = "$first" ] && grep -q "^window: rank 1: window" "$d.prov"' \
  "provenance keeps the first start ($first; this one $this) and the window"

# builtin:sampled: the window, one instance at a time and verification on the main thread agree
bs=(--corpus "$PWD/data/corpus-mini.h5" --filter "$filter" --model 'builtin:sampled?temp=0.9' --samples 6 --block 3)
"$bin" sweep "${bs[@]}" --window-mode instance --out "$tmp/b1" > "$tmp/b1.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "builtin:sampled, instance mode"
"$bin" sweep "${bs[@]}" --verify-threads 0 --out "$tmp/b2" > "$tmp/b2.log" 2>&1
table "$tmp/b1"; table "$tmp/b2"
if [ "${RS_TEST_QUICK:-0}" = 1 ]; then cp "$tmp/b2.txt" "$tmp/b3.txt"; else
  mpirun -np 2 "$bin" sweep "${bs[@]}" --verify-threads 3 --out "$tmp/b3" > "$tmp/b3.log" 2>&1
  table "$tmp/b3"
fi
check 'same "$tmp/b1.txt" "$tmp/b2.txt" && same "$tmp/b1.txt" "$tmp/b3.txt"' "builtin:sampled: the same table in all three"

# AIMD: a server that sheds load (HTTP 429 once 4 sequences run and 2 wait) against a window of 16
# (slow steps, so that requests pile up there even when a loaded machine slows the client):
# the window backs off, retries absorb the refusals, no attempt is lost to infra
"$sim" --port-file "$tmp/sim2.port" --capacity 4 --step-ms 20 --step-seq-ms 0 --tokens-per-step 200 --max-queue 2 \
  > "$tmp/sim2.out" 2>&1 &
sim2_pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/sim2.port" ] && break; sleep 0.05; done
aurl="openai:http://127.0.0.1:$(cat "$tmp/sim2.port")/v1?model=sim&schema=0&timeout=20&retries=10&backoff=0.05&backoff_cap=0.5&inflight=16"
"$bin" sweep "${up[@]}" --model "$aurl" --out "$tmp/aimd" > "$tmp/aimd.log" 2>&1
st=$?
check '[ $st -eq 0 ]' "AIMD run: $(tail -1 "$tmp/aimd.log")"
table "$tmp/aimd"
"$bin" attempts "$tmp/aimd" --provenance > "$tmp/aimd.prov"
w=$(grep -o 'window [0-9]* of 16 (lowest [0-9]*, [0-9]* backoffs)' "$tmp/aimd.prov")
low=$(echo "$w" | sed 's/.*lowest \([0-9]*\).*/\1/'); nb=$(echo "$w" | sed 's/.*, \([0-9]*\) backoffs.*/\1/')
check '[ -n "$w" ] && [ "${nb:-0}" -ge 1 ] && [ "${low:-16}" -le 8 ] && same "$tmp/ref.tsv" "$tmp/aimd.tsv"' \
  "429s back the window off ($w); every attempt answered, the same table as the reference"

echo "test_window: $fail failed"
[ "$fail" -eq 0 ]
