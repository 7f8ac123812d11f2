#!/usr/bin/env bash
# The fault-injection matrix over a real sweep (mpirun -np 3 on the shipped mini corpus). Each fault
# is followed by its documented recovery (docs/faults.md); the attempt table must then equal the
# one of an uninterrupted run (nothing recorded lost, nothing duplicated) and the failure message
# must name what failed:
#   1-3  the worker dies by SIGKILL at three points of its loop: before a model call, halfway
#        through writing a shard, after renaming a finished shard but before reporting it
#        (RS_FAULT failpoints: worker/failpoint.h)                       -> --resume
#   4    the run directory's disk fills up (a 128 KiB tmpfs; 64 KiB quick) -> grow it, --resume
#   5    a shard file is made unreadable (chmod 000; the sweep runs as `nobody` when we are root,
#        since root reads anything)                                      -> chmod, --resume
#   6    the inference stand-in is killed mid-sweep                      -> restart it, --resume
#   7    the inference stand-in hangs (SIGSTOP): accepted, never answered -> SIGCONT, --resume
#   8    the inference stand-in becomes slower than the client timeout   -> speed it up, --resume
#   9    the stand-in dies under --max-infra 0: the sweep finishes with infra rows -> restart, --resume
# Faults strike at a number of finished shards, never at a time (tests/sweep_wait.sh).
# A killed coordinator, a worker killed from outside, corrupt and truncated shards: test_sweep.sh.
# The stand-in (tests/standin_server.c) is a TEST DOUBLE, not a model.
set -uo pipefail
bin=$(realpath "$1")
standin=$(dirname "$bin")/tests/standin_server
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins: see test_sweep.sh
tmp=$(mktemp -d)
chmod 755 "$tmp"
sd_pid=""
cleanup() {
  [ -n "$sd_pid" ] && kill "$sd_pid" 2>/dev/null
  mountpoint -q "$tmp/disk" 2>/dev/null && umount "$tmp/disk"
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
source "$(dirname "$0")/sweep_wait.sh"
# the train split of the small GEMMs and reductions of gfx90a and sm_90 (about 20 instances, 40 shards)
filter='family=sgemm|reduce,target=gfx90a|sm_90,form=postsplit|ptx' split=train disk=128k
if [ "${RS_TEST_QUICK:-0}" = 1 ]; then # sanitizer build: faults 1-9 less 1, 3, 7, 8 on 8 small GEMMs (16 shards)
  filter='family=sgemm,target=gfx90a|gfx942,form=postsplit' split=all disk=64k
fi
args=(--corpus "$PWD/data/corpus-mini.h5" --filter "$filter" --split "$split" --samples 4 --block 2 --progress-every 5)
sampled=(--model 'builtin:sampled?temp=0.8')
ntmp() { find "$1/shards" -name '*.tmp.*' 2>/dev/null | wc -l; }

# the reference: one uninterrupted run
"$bin" sweep "${args[@]}" "${sampled[@]}" --out "$tmp/ref" > "$tmp/ref.log" 2>&1
check '[ $? -eq 0 ]' "reference run: $(tail -1 "$tmp/ref.log")"
"$bin" attempts "$tmp/ref" > "$tmp/ref.tsv"
check '[ "$(wc -l < "$tmp/ref.tsv")" -ge 28 ]' "reference table has $(wc -l < "$tmp/ref.tsv") rows"

# same_as REF DIR: the run's attempt table equals REF's
same_as() {
  "$bin" attempts "$2" > "$2.tsv" 2>&1
  cmp -s "$1" "$2.tsv" || { diff "$1" "$2.tsv" | head -3; return 1; }
}

# 1-3: a worker kills itself at three points. -np 2 (coordinator + one worker, rank 1): the worker
# does every shard, so it reaches its point whatever the machine's speed (with two workers the
# faster one may take nearly all shards of a small run, and holding one stopped would deadlock the
# coordinator). A shard here: one instance, one block of 2 attempts = one model call and 2 rows;
# generate:3 strikes before its third shard, append:5 halfway through it, renamed:2 after its second.
# (sanitizer build, RS_TEST_QUICK=1: append:5 alone; the plain build runs all three)
fps="generate:3 append:5 renamed:2"
[ "${RS_TEST_QUICK:-0}" = 1 ] && fps="append:5"
for fp in $fps; do
  d="$tmp/fp_${fp%%:*}"
  RS_FAULT="1:$fp" mpirun -np 2 "$bin" sweep "${args[@]}" "${sampled[@]}" --out "$d" > "$d.log" 2>&1 &
  mp=$!
  wait $mp
  st=$?
  check '[ $st -ne 0 ] && grep -q "RS_FAULT: rank 1 kills itself at ${fp%%:*}" "$d.log"' \
    "kill -9 at ${fp%%:*}: the job ends (status $st) and the log says which rank died: $(grep -m1 -iE 'signal|killed' "$d.log")"
  before=$(ls "$d/shards" | grep -c '\.h5$')
  mpirun -np 3 "$bin" sweep "${args[@]}" "${sampled[@]}" --out "$d" --resume > "$d.resume.log" 2>&1
  check '[ $? -eq 0 ]' "resume after kill at ${fp%%:*}: $(grep -m1 reused "$d.resume.log")"
  check 'grep -q "($before reused)" "$d.resume.log"' "the $before shards finished before the kill are reused"
  check 'same_as "$tmp/ref.tsv" "$d"' "kill at ${fp%%:*} + resume = uninterrupted run"
  check '[ "$(ntmp "$d")" -eq 0 ]' "no unfinished shard file left behind"
done
# the "renamed" kill left a finished shard nobody was told about: the resume must not redo it
check 'grep -q "unfinished shard" "$tmp/fp_append.resume.log"' "the append kill's half-written shard is cleaned up: $(grep -m1 unfinished "$tmp/fp_append.resume.log")"

# 4: the run directory's disk fills up. The steps run in one script, either here (root may mount)
# or in a user+mount namespace (unshare -rm) where an unprivileged user may mount a tmpfs too.
cat > "$tmp/disk.sh" <<EOS
set -u
mkdir -p "$tmp/disk"
mount -t tmpfs -o size=$disk tmpfs "$tmp/disk" || exit 90
mpirun -np 3 "$bin" sweep ${args[*]@Q} ${sampled[*]@Q} --out "$tmp/disk/run" > "$tmp/disk.log" 2>&1
echo \$? > "$tmp/disk.status"
find "$tmp/disk/run/shards" -name '*.tmp.*' | wc -l > "$tmp/disk.ntmp"
mount -o remount,size=64m "$tmp/disk"
mpirun -np 3 "$bin" sweep ${args[*]@Q} ${sampled[*]@Q} --out "$tmp/disk/run" --resume > "$tmp/disk.resume.log" 2>&1
echo \$? > "$tmp/disk.rstatus"
"$bin" attempts "$tmp/disk/run" > "$tmp/disk.tsv"
umount "$tmp/disk"
EOS
bash "$tmp/disk.sh" 2>/dev/null
mst=$?
if [ $mst -eq 90 ]; then # no CAP_SYS_ADMIN here: try a namespace of our own
  unshare -rm bash "$tmp/disk.sh"
  mst=$?
fi
check '[ $mst -ne 90 ]' "a $disk tmpfs could be mounted for the run directory (status $mst)"
st=$(cat "$tmp/disk.status" 2>/dev/null)
check '[ "$st" != 0 ] && grep -q "No space left on device" "$tmp/disk.log" && grep -q "shards/" "$tmp/disk.log"' \
  "disk full: the sweep fails (status $st) naming the file and the cause: $(grep -m1 -i 'space' "$tmp/disk.log")"
check '[ "$(cat "$tmp/disk.ntmp" 2>/dev/null)" = 0 ]' "disk full: no unfinished shard file left"
check '[ "$(cat "$tmp/disk.rstatus" 2>/dev/null)" = 0 ]' "resume after the disk was grown: $(grep -m1 reused "$tmp/disk.resume.log")"
check 'cmp -s "$tmp/ref.tsv" "$tmp/disk.tsv"' "disk full + resume = uninterrupted run"

# 5: an unreadable shard file stops a resume and is left untouched
as_user=()
if [ "$(id -u)" -eq 0 ]; then as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
mkdir -p "$tmp/nb" && chown nobody:nogroup "$tmp/nb" 2>/dev/null
d="$tmp/nb/unread"
"${as_user[@]}" mpirun -np 3 "$bin" sweep "${args[@]}" "${sampled[@]}" --out "$d" > "$tmp/unread.log" 2>&1
check '[ $? -eq 0 ]' "run as ${as_user[*]:-$(id -un)}: $(tail -1 "$tmp/unread.log")"
victim=$(ls "$d"/shards/*.h5 | sed -n 2p)
sum=$(md5sum < "$victim")
chmod 000 "$victim"
"${as_user[@]}" mpirun -np 3 "$bin" sweep "${args[@]}" "${sampled[@]}" --out "$d" --resume > "$tmp/unread.r1.log" 2>&1
st=$?
check '[ $st -eq 2 ] && grep -q "$(basename "$victim"): shard file is not readable: Permission denied" "$tmp/unread.r1.log"' \
  "unreadable shard: resume refused (status $st): $(grep -m1 'not readable' "$tmp/unread.r1.log")"
chmod 644 "$victim"
check '[ "$(md5sum < "$victim")" = "$sum" ]' "the unreadable shard was left as it was"
"${as_user[@]}" mpirun -np 3 "$bin" sweep "${args[@]}" "${sampled[@]}" --out "$d" --resume > "$tmp/unread.r2.log" 2>&1
check '[ $? -eq 0 ]' "resume after chmod: $(grep -m1 reused "$tmp/unread.r2.log")"
check 'same_as "$tmp/ref.tsv" "$d"' "unreadable shard + chmod + resume = uninterrupted run"

# 6-8: the inference stand-in dies, hangs, then becomes too slow
start_standin() { # [PORT]
  rm -f "$tmp/sd.port"
  "$standin" --port-file "$tmp/sd.port" --port "${1:-0}" --delay-file "$tmp/sd.delay" > "$tmp/sd.log" 2>&1 &
  sd_pid=$!
  while [ ! -s "$tmp/sd.port" ] && kill -0 "$sd_pid" 2> /dev/null; do sleep 0.05; done # up, or dead
  port=$(cat "$tmp/sd.port")
}
start_standin
# the client timeout scales with the build (a loaded sanitizer build answers slower); "slow"
# makes the stand-in three times slower than it
to=$(time_scale 2)
model=(--model "openai:http://127.0.0.1:$port/v1?model=standin&timeout=$to&retries=1&backoff=0.05&inflight=4")
oargs=("${args[@]}" "${model[@]}" --max-infra 4)
"$bin" sweep "${oargs[@]}" --out "$tmp/oref" > "$tmp/oref.log" 2>&1
check '[ $? -eq 0 ]' "reference run through the stand-in: $(tail -1 "$tmp/oref.log")"
"$bin" attempts "$tmp/oref" > "$tmp/oref.tsv"
check '[ "$(cut -f5 "$tmp/oref.tsv" | sort -u | wc -l)" -ge 2 ] && ! grep -q infra "$tmp/oref.tsv"' \
  "the stand-in's answers get several verdicts and no infra: $(cut -f5 "$tmp/oref.tsv" | sort | uniq -c | tr '\n' ' ')"

# each fault strikes at 4 finished shards, with the sweep's ranks stopped there (sweep_wait.sh)
faults="kill hang slow"
[ "${RS_TEST_QUICK:-0}" = 1 ] && faults="kill" # sanitizer build: one server fault (all three here)
for fault in $faults; do
  d="$tmp/o_$fault"
  echo 150 > "$tmp/sd.delay" # answers in flight while the fault strikes
  mpirun -np 3 "$bin" sweep "${oargs[@]}" --out "$d" > "$d.log" 2>&1 &
  mp=$!
  freeze_at "$d" 4 $mp
  check '[ $? -eq 0 ]' "stand-in $fault: the sweep was stopped at $(shards_done "$d") shards, mid-run"
  case $fault in
    kill) kill -9 "$sd_pid"; wait "$sd_pid" 2>/dev/null; sd_pid="" ;;
    hang) kill -STOP "$sd_pid" ;; # connections are accepted by the kernel, never answered
    slow) echo $((to * 3000)) > "$tmp/sd.delay" ;;
  esac
  thaw "$d"
  wait $mp
  st=$?
  if [ $fault = kill ]; then why="Couldn't connect|Connection refused|Failed to connect"; else why="[Tt]imeout|timed out"; fi
  check '[ $st -ne 0 ] && grep -q "attempts in a row got no answer" "$d.log" && grep -q "127.0.0.1:$port" "$d.log" && grep -qE "$why" "$d.log"' \
    "stand-in $fault: the sweep stops (status $st) naming the server and the cause: $(grep -m1 'no answer' "$d.log" | cut -c1-300)"
  rm -f "$tmp/sd.delay"
  [ $fault = kill ] && start_standin "$port"
  [ $fault = hang ] && kill -CONT "$sd_pid"
  mpirun -np 3 "$bin" sweep "${oargs[@]}" --out "$d" --resume > "$d.resume.log" 2>&1
  check '[ $? -eq 0 ]' "resume with the stand-in back: $(grep -m1 reused "$d.resume.log")"
  check 'same_as "$tmp/oref.tsv" "$d"' "stand-in $fault + resume = uninterrupted run"
done

# 9: with --max-infra 0 the sweep runs on through a dead server, recording infra; --resume then
# redoes exactly the finished shards holding unanswered attempts
d="$tmp/o_norun"
echo 150 > "$tmp/sd.delay"
mpirun -np 3 "$bin" sweep "${args[@]}" "${model[@]}" --max-infra 0 --out "$d" > "$d.log" 2>&1 &
mp=$!
freeze_at "$d" 4 $mp
check '[ $? -eq 0 ]' "dead server: the sweep was stopped at $(shards_done "$d") shards, mid-run"
kill -9 "$sd_pid"; wait "$sd_pid" 2>/dev/null; sd_pid=""
thaw "$d"
wait $mp
st=$?
n=$(grep -o '[0-9]* attempts got no answer from the model server' "$d.log" | cut -d' ' -f1)
check '[ $st -eq 0 ] && [ "${n:-0}" -gt 0 ]' "--max-infra 0: the sweep finishes (status $st) and says $n attempts got no answer"
rm -f "$tmp/sd.delay"
start_standin "$port"
mpirun -np 3 "$bin" sweep "${args[@]}" "${model[@]}" --max-infra 0 --out "$d" --resume > "$d.resume.log" 2>&1
check '[ $? -eq 0 ] && grep -q "got no answer from the model server: redoing the shard" "$d.resume.log"' \
  "resume redoes the shards with unanswered attempts: $(grep -c 'redoing the shard' "$d.resume.log") shards"
check 'same_as "$tmp/oref.tsv" "$d"' "dead server with --max-infra 0 + resume = uninterrupted run"

echo "test_faults: $fail failed"
[ "$fail" -eq 0 ]
