#!/usr/bin/env bash
# bench_reward.sh - the reward service against `regsweep verify` per process, side by side in one
# run, over the mini corpus's candidates (every ground truth, three mutants of each, and garbage):
#   - rewards per second per core: `reward serve --threads 1` (one verification thread), batches
#     of 64, 256 and 1,024 items posted by curl one after another: median and p99 latency per
#     batch, items/s; the same with --threads 2 (the machine's cores);
#   - `regsweep verify` per process over the first items: verifies/s (one process at a time);
#   - the ratio; then the three attempt exports of a small sweep (--keep all): time and size.
# usage: bash bench/bench_reward.sh path/to/regsweep [--quick]
set -euo pipefail
bin=$(realpath "$1")
quick=0
[ "${2:-}" = --quick ] && quick=1
corpus=data/corpus-mini.h5
tmp=$(mktemp -d)
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
command -v jq >/dev/null && command -v curl >/dev/null || { echo "bench_reward: needs jq and curl (scripts/install-deps.sh)"; exit 2; }

# candidates: truths (normalized names), mutants (a value on another's register, a dropped key, a
# register past the file), garbage
"$bin" corpus export $corpus --split train --out "$tmp/a.jsonl" 2>/dev/null
"$bin" corpus export $corpus --split test --out "$tmp/b.jsonl" 2>/dev/null
cat "$tmp/a.jsonl" "$tmp/b.jsonl" | jq -c '
  (.completion | fromjson) as $m | ($m | keys_unsorted) as $k |
  {instance: .id, completion: .completion},
  (if ($k|length) > 1 then {instance: .id, completion: ($m | .[$k[0]] = $m[$k[1]] | tojson)} else empty end),
  (if ($k|length) > 1 then {instance: .id, completion: ($m | del(.[$k[0]]) | tojson)} else empty end),
  {instance: .id, completion: ($m | .[$k[0]] = (if (.[$k[0]]|startswith("R") or startswith("P")) then "R9000" else "v9000" end) | tojson)},
  {instance: .id, completion: "I cannot allocate this function."}' > "$tmp/items.jsonl"
nitems=$(wc -l < "$tmp/items.jsonl")
echo "bench_reward: $nitems candidates over $(wc -l < "$tmp/a.jsonl") + $(wc -l < "$tmp/b.jsonl") instances with a truth (truths, 3 mutants each, garbage)"

# one batch file per (size, index), items taken round the candidate list
declare -A rounds=([64]=40 [256]=16 [1024]=6)
sfilter=()
[ $quick = 1 ] && rounds=([64]=2 [256]=1 [1024]=1) && sfilter=(--filter sample=16) # smoke run: a part of the corpus loaded
for b in 64 256 1024; do
  for ((i = 0; i < ${rounds[$b]}; i++)); do
    awk -v s=$((i * b)) -v n=$b -v t="$nitems" 'BEGIN{ORS=""} {l[NR-1]=$0} END{print "{\"items\":["; for(k=0;k<n;k++){if(k)print ","; print l[(s+k)%t]} print "]}"}' \
      "$tmp/items.jsonl" > "$tmp/batch_${b}_$i.json"
  done
done

pct() { sort -g | awk '{v[NR]=$1} END{m=v[int((NR+1)/2)]; p=v[int(NR*0.99+0.999)]; if(p=="")p=v[NR]; printf "%.1f %.1f\n", m*1000, p*1000}'; }

serve() { # threads -> starts the server, sets $port
  "$bin" reward serve --corpus $corpus "${sfilter[@]}" --port 0 --threads "$1" --conns 2 > "$tmp/srv.out" 2> "$tmp/srv.err" &
  srv=$!
  for _ in $(seq 600); do
    port=$(sed -n 's|^reward: serving http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/srv.out")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "bench_reward: the server did not start: $(cat "$tmp/srv.err")"; exit 1; }
}

cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system clock ticks of a process
tck=$(getconf CLK_TCK)
echo "(rewards/s: wall clock on this machine, load $(cut -d' ' -f1 /proc/loadavg); per CPU-s: per second of the server's own CPU time, which other work on the machine does not inflate)"
printf '%-28s %8s %8s %10s %10s %11s %13s\n' "service" "batch" "batches" "median ms" "p99 ms" "rewards/s" "per CPU-s"
declare -A rate
ths="1 2"
[ $quick = 1 ] && ths=1 # smoke run: one server
for th in $ths; do
  serve $th
  grep -h 'instances loaded' "$tmp/srv.err" | sed 's/^/  startup: /'
  for b in 64 256 1024; do
    : > "$tmp/lat"
    c0=$(cpu $srv)
    t0=$(date +%s.%N)
    for ((i = 0; i < ${rounds[$b]}; i++)); do
      curl -s -o "$tmp/ans.json" -w '%{time_total}\n' -H 'Content-Type: application/json' \
        --data-binary @"$tmp/batch_${b}_$i.json" "http://127.0.0.1:$port/reward" >> "$tmp/lat"
      [ "$(jq '.rewards | length' "$tmp/ans.json")" = $b ] || { echo "bench_reward: batch $b: bad answer"; exit 1; }
    done
    t1=$(date +%s.%N)
    c1=$(cpu $srv)
    read -r med p99 < <(pct < "$tmp/lat")
    r=$(awk -v n=$((b * ${rounds[$b]})) -v a="$t0" -v z="$t1" 'BEGIN{printf "%.0f", n/(z-a)}')
    rc=$(awk -v n=$((b * ${rounds[$b]})) -v a="$c0" -v z="$c1" -v t="$tck" 'BEGIN{printf "%.0f", (z>a) ? n*t/(z-a) : 0}')
    rate[$th,$b]=$rc
    printf '%-28s %8d %8d %10s %10s %11s %13s\n' "reward serve --threads $th" $b ${rounds[$b]} "$med" "$p99" "$r" "$rc"
  done
  kill $srv; wait $srv 2>/dev/null || true; srv=
done

# regsweep verify, one process per answer (what a trainer without the service would run)
nv=60
[ $quick = 1 ] && nv=4
head -n $nv "$tmp/items.jsonl" > "$tmp/vitems.jsonl"
i=0
while IFS= read -r line; do # candidates and ids first, so the timed loop runs regsweep only
  jq -r .instance <<<"$line" > "$tmp/v$i.id"
  jq -r .completion <<<"$line" > "$tmp/v$i.json"
  i=$((i + 1))
done < "$tmp/vitems.jsonl"
cchild() { awk '{print $16 + $17}' /proc/$$/stat; } # user + system ticks of this shell's finished children
ct0=$(cchild)
t0=$(date +%s.%N)
for ((i = 0; i < nv; i++)); do
  read -r id < "$tmp/v$i.id" # no fork: only regsweep's time counts
  "$bin" verify --corpus $corpus --instance "$id" "$tmp/v$i.json" > /dev/null 2>&1 || true
done
t1=$(date +%s.%N)
ct1=$(cchild)
vrate=$(awk -v n=$nv -v a="$t0" -v z="$t1" 'BEGIN{printf "%.2f", n/(z-a)}')
vms=$(awk -v n=$nv -v a="$t0" -v z="$t1" 'BEGIN{printf "%.1f", (z-a)*1000/n}')
vcpu=$(awk -v n=$nv -v a="$ct0" -v z="$ct1" -v t="$tck" 'BEGIN{printf "%.2f", (z>a) ? n*t/(z-a) : 0}')
printf '%-28s %8s %8d %10s %10s %11s %13s\n' "regsweep verify per process" 1 $nv "$vms" "-" "$vrate" "$vcpu"
echo "ratio per core (reward serve --threads 1, batch 1024, per CPU-s / verify per process, per CPU-s): $(awk -v a="${rate[1,1024]}" -v b="$vcpu" 'BEGIN{printf "%.0fx", a/b}')"

# the exports of a small sweep
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
samples=10 sweep_filter='family=sgemm|reduce|scan'
[ $quick = 1 ] && samples=2 sweep_filter='family=sgemm,target=gfx90a'
# Open MPI's plugins leak at exit under LeakSanitizer (as in tests/test_sweep.sh): not ours
ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$bin" sweep --corpus $corpus --model 'builtin:sampled?temp=0.8' --filter "$sweep_filter" --samples $samples \
  --split all --keep all --out "$tmp/run" > "$tmp/sweep.log" 2>&1
echo "sweep for the exports: $(grep -o '^[0-9]* attempts in [0-9.]* s' "$tmp/sweep.log") (builtin:sampled, a synthetic baseline)"
printf '%-10s %10s %12s %10s\n' export lines bytes seconds
for k in sft dpo feedback; do
  t0=$(date +%s.%N)
  "$bin" attempts "$tmp/run" --export $k -o "$tmp/$k.jsonl" 2> "$tmp/$k.log"
  t1=$(date +%s.%N)
  printf '%-10s %10d %12d %10.2f\n' $k "$(wc -l < "$tmp/$k.jsonl")" "$(wc -c < "$tmp/$k.jsonl")" "$(awk -v a="$t0" -v z="$t1" 'BEGIN{print z-a}')"
done
