#!/usr/bin/env bash
# bench_serve.sh - does one worker keep a continuous-batching GPU server busy? Side by side in one
# run, against bench/serve_sim (a TEST DOUBLE that simulates the scheduling of such a
# server: C sequences decode at once, a step takes a + b*batch ms, prefill by prompt tokens,
# answers as long as the instance's real answer, a FIFO queue beyond C):
#   C = 64 and 256, samples mode and until-pass mode (with feedback), one worker (-np 1),
#   --window-mode instance (main's loop before the window: one instance at a time) against the
#   window (the default), both with --inflight C.
# Each run is measured in steady state (after a warm-up) for a fixed time by the server itself:
# achieved completion tokens/s / the simulated capacity C/(a + b*C) tokens/s, requests at the
# server per decode step (max, median), and the worker's CPU per answered attempt.
# Last row: the window's AIMD against a server that sheds load (429 beyond a queue of 16) with
# --inflight 4x its capacity.
#   bench/bench_serve.sh [build/regsweep] [--quick]     (WARMUP=s MEASURE=s CORPUS=file to change;
#   --quick: C = 64, samples mode, both window modes, a 5x faster simulated server, 1 s warm-up,
#   then measured until the server answered ANSWERS (default 16) requests, however long that takes on a busy machine (up to
#   5 minutes): CI's smoke run, no speed asserted)
# Exits 1 when a run got no token at all, or (--quick) fewer answers than asked within the
# 5 minutes: a broken client or simulator, not a slow one.
set -uo pipefail
# Open MPI leaks under LeakSanitizer (sanitizer build): off for the sweep's ranks, as in tests/test_sweep.sh
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
bin=build/regsweep quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    *) bin=$a ;;
  esac
done
bin=$(realpath "$bin")
sim=$(dirname "$bin")/bench/serve_sim
corpus=$(realpath "${CORPUS:-data/corpus-mini.h5}")
warm=${WARMUP:-4}
meas=${MEASURE:-12}
# --quick measures a count of answers, not a wall-clock window: under load a 2 s window saw no step
answers=0 wait_s=$((meas + 30))
[ $quick = 1 ] && warm=${WARMUP:-1} answers=${ANSWERS:-16} wait_s=300
failed=0
A=2 B=0.02 P=0.05 # step = 2 ms + 0.02 ms per sequence; prefill 0.05 ms per 1000 prompt tokens
# --quick: a server 5x faster (the answers come in a fifth of the time; CI's smoke run took 45 s)
[ $quick = 1 ] && A=0.4 B=0.004 P=0.01
tmp=$(mktemp -d)
srv=""
run=""
cleanup() {
  [ -n "$run" ] && kill "$run" 2>/dev/null
  [ -n "$srv" ] && kill "$srv" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
tick=$(getconf CLK_TCK)
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
val() { awk -v k="$1" '$1 == k {print $2}' "$2"; }

# one C MODE WINDOWMODE [INFLIGHT MAXQUEUE]
one() {
  local C=$1 mode=$2 wm=$3 infl=${4:-$1} mq=${5:--1} d="$tmp/r$RANDOM"
  rm -f "$tmp/port" "$tmp/st" "$tmp/st.start"
  "$sim" --port-file "$tmp/port" --capacity "$C" --step-ms $A --step-seq-ms $B --prefill-ms-per-ktok $P \
    --max-queue "$mq" --stats "$tmp/st" --warmup "$warm" --measure "$meas" --measure-answers "$answers" \
    > "$tmp/srv.log" 2>&1 &
  srv=$!
  for _ in $(seq 1 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
  local url="openai:http://127.0.0.1:$(cat "$tmp/port")/v1?model=sim&schema=0&timeout=600&retries=8&backoff=0.2&backoff_cap=2"
  local margs=(--samples 20 --block 10)
  [ "$mode" = until-pass ] && margs=(--samples 100 --until-pass --feedback)
  "$bin" sweep --corpus "$corpus" --model "$url" "${margs[@]}" --inflight "$infl" --window-mode "$wm" \
    --keep none --bind none --progress-every 2 --out "$d" > "$d.log" 2>&1 &
  run=$!
  for _ in $(seq 1 $(( (warm + 30) * 20 ))); do [ -e "$tmp/st.start" ] && break; sleep 0.05; done
  local c0 t0 c1 t1
  c0=$(cpu_of $run); t0=$(date +%s.%N)
  for _ in $(seq 1 $(( wait_s * 20 ))); do [ -e "$tmp/st" ] && break; sleep 0.05; done
  c1=$(cpu_of $run); t1=$(date +%s.%N)
  local win
  win=$(grep -o 'window [0-9]* of [0-9]*' "$d.log" | tail -1)
  kill "$run" 2>/dev/null; wait "$run" 2>/dev/null; run=""
  kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=""
  local n ratio
  n=$(val answers "$tmp/st")
  # the server writes its stats when stopped too: what it saw by then
  if [ "$answers" -gt 0 ]; then
    [ "${n:-0}" -ge "$answers" ] 2>/dev/null ||
      { echo "only ${n:-0} of $answers answers in $wait_s s (C=$C $mode $wm): server log and sweep log follow"
        tail -n 3 "$tmp/srv.log" "$d.log"; failed=1; }
  else
    [ "$(val tokens_per_s "$tmp/st" | cut -d. -f1)" -gt 0 ] 2>/dev/null ||
      { echo "no tokens served (C=$C $mode $wm): server log and sweep log follow"; tail -n 3 "$tmp/srv.log" "$d.log"; failed=1; }
  fi
  ratio=$(val ratio "$tmp/st")
  local cpa=-
  [ "${n:-0}" -gt 0 ] && cpa=$(printf '%.2f' "$(echo "($c1 - $c0) / $tick * 1000 / $n" | bc -l)")
  printf '%-4s %-10s %-8s %5s | %9.0f %9.0f %6.1f%% | %5s %6s | %7s %6s | %10s | %s\n' \
    "$C" "$mode" "$wm" "$infl" "$(val tokens_per_s "$tmp/st")" "$(val capacity "$tmp/st")" \
    "$(echo "${ratio:-0} * 100" | bc -l)" "$(val inflight_max "$tmp/st")" "$(val inflight_median "$tmp/st")" \
    "$n" "$(val refused_429 "$tmp/st")" "$cpa" "$win"
  rm -rf "$d" "$d.log"
}

what="measured $meas s"
[ "$answers" -gt 0 ] && what="measured until $answers answers"
echo "bench_serve: simulated server step $A ms + $B ms/sequence, prefill $P ms/ktok; warm-up $warm s, $what"
echo "C    mode       window   infl. |  tok/s  capacity  ratio | at server   | answers  429s | CPU ms/att | window at the end"
echo "                                |                         |  max median |               |            |"
if [ $quick = 1 ]; then
  for wm in instance window; do one 64 samples $wm; done
  exit $failed
fi
for C in 64 256; do
  for mode in samples until-pass; do
    for wm in instance window; do one $C $mode $wm; done
  done
done
one 64 until-pass window 256 16
exit $failed
