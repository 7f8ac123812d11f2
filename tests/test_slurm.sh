#!/usr/bin/env bash
# `regsweep slurm submit` against a real Slurm: munged, slurmctld and slurmd started here on
# localhost with a generated slurm.conf in a temp dir (Debian packages slurm-wlm and munge).
#  - the built-in template is slurm/regsweep.sbatch.in; user strings (specs, paths with spaces and
#    quotes, server commands) round-trip through the script's shell quoting; no API key in it;
#  - an array over two builtin:sampled variants (a run directory each, a stand-in "inference
#    server" per node that is health-checked and stopped) completes, and `regsweep report` compares;
#  - a sweep cancelled mid-run (scancel at 3 finished shards, its ranks stopped there: not at a
#    time) and submitted again resumes and equals an uninterrupted run.
# Needs root (the daemons run as root and munged as munge); skips otherwise. CI runs as root.
set -uo pipefail
bin=$(realpath "$1")
if [ "$(id -u)" -ne 0 ]; then
  echo "test_slurm: SKIP (needs root to run munged, slurmctld and slurmd)"
  exit 77 # ctest: skipped (tests/CMakeLists.txt SKIP_RETURN_CODE)
fi
t_start=$(date +%s)
source "$(dirname "$0")/sweep_wait.sh"
fail=0
check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }
for p in sbatch squeue scancel scontrol slurmctld slurmd munged curl python3; do
  command -v "$p" > /dev/null || { echo "FAIL: $p not found (install slurm-wlm munge: scripts/install-deps.sh)"; exit 1; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
tmp=$(mktemp -d /tmp/rs-slurm.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user=root 2> /dev/null
  for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munge/munged.pid; do
    [ -s "$f" ] && kill "$(cat "$f")" 2> /dev/null
  done
  for _ in $(seq 1 50); do
    alive=0
    for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munge/munged.pid; do
      [ -s "$f" ] && kill -0 "$(cat "$f")" 2> /dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munge/munged.pid; do
    [ -s "$f" ] && kill -9 "$(cat "$f")" 2> /dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# The first of $1 consecutive free ports (an array job's servers use --port, --port + 1, ...).
free_ports() {
  python3 - "$1" << 'EOF'
import socket, sys
n = int(sys.argv[1])
for _ in range(200):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    socks = [socket.socket() for _ in range(n)]
    try:
        for i, t in enumerate(socks): t.bind(("127.0.0.1", p + i))
        print(p); sys.exit(0)
    except OSError:
        pass
    finally:
        for t in socks: t.close()
sys.exit(1)
EOF
}

# ---- munge ----
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/www"
chown munge: "$tmp/munge" && chmod 700 "$tmp/munge"
key=/etc/munge/munge.key
if [ ! -s "$key" ]; then
  mkdir -p /etc/munge
  mungekey -c -k "$key" 2> /dev/null || /usr/sbin/create-munge-key -f > /dev/null
  chown munge: "$key" && chmod 400 "$key"
fi
sock="$tmp/munge/munge.socket"
runuser -u munge -- munged --socket="$sock" --pid-file="$tmp/munge/munged.pid" \
  --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/seed" -f
check '[ $? -eq 0 ]' "munged started: $(tail -n 2 "$tmp/munge/munged.log" 2> /dev/null)"

# ---- slurmctld + slurmd ----
host=$(hostname -s)
cport=$(free_port)
dport=$(free_port)
cat > "$tmp/slurm.conf" << EOF
ClusterName=rstest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$cport
SlurmdPort=$dport
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
ReturnToService=2
$(slurmd -C | head -1) State=UNKNOWN
PartitionName=rstest Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF"
check '[ $? -eq 0 ]' "slurmctld/slurmd started"
for _ in $(seq 1 "$(time_scale 150)"); do
  [ "$(sinfo -h -o %t 2> /dev/null)" = idle ] && break
  sleep 0.2
done
check '[ "$(sinfo -h -o %t)" = idle ]' "node idle: $(sinfo 2>&1 | tail -2; tail -n 3 "$tmp/slurmctld.log")"
if [ $fail -ne 0 ]; then
  echo "test_slurm: $fail failed (no cluster)"
  exit 1
fi

# Wait (bounded) until job $1 has left the queue; then print its state(s).
# The caps only catch a hang: they scale with the build (time_scale).
wait_job() {
  local t0=$SECONDS cap
  cap=$(time_scale "${2:-120}")
  while [ -n "$(squeue -h -j "$1" 2> /dev/null)" ]; do
    if [ $((SECONDS - t0)) -gt "$cap" ]; then
      echo "FAIL: job $1 still queued after $cap s"
      scancel "$1"
      return 1
    fi
    sleep 0.2
  done
}
job_id() { sed -n 's/^submitted job \([0-9]*\).*/\1/p' "$1"; }

# ---- the template and the quoting ----
"$bin" slurm template > "$tmp/template.txt"
check 'cmp -s "$tmp/template.txt" slurm/regsweep.sbatch.in' "built-in template differs from slurm/regsweep.sbatch.in (run slurm/embed.sh)"
weird="$tmp/we ird \"dq\" it's \$HOME \`x\` %j"
spec="openai:http://gpu7:9001/v1?model=a'b \"c\"&key_env=MY_KEY&stop=\$(x)"
scmd="vllm serve 'M' --port {port} --api-key \"\$VLLM_KEY\""
export MY_KEY=sk-secret-do-not-write
"$bin" slurm submit --corpus data/corpus-mini.h5 --model "$spec" --model 'builtin:sampled?temp=0.3' \
  --out "$weird" --nodes 2 --gpus-per-node 4 --server-cmd "$scmd" --filter "family=a|b" --samples 3 \
  --partition gpu --time 01:00:00 --account proj-1 --array-over models --requeue --dry-run > "$tmp/dry.sh"
check '[ $? -eq 0 ] && bash -n "$tmp/dry.sh"' "dry run prints a valid script"
check '! grep -q sk-secret "$tmp/dry.sh"' "an API key is written into the script"
check 'grep -qx "#SBATCH --requeue" "$tmp/dry.sh" && grep -qx "#SBATCH --array=0-1" "$tmp/dry.sh" && grep -qx "#SBATCH --gpus-per-node=4" "$tmp/dry.sh"' "#SBATCH lines"
sed -n '/^# ---- written by/,/^# ---- end/p' "$tmp/dry.sh" > "$tmp/cfg.sh"
(
  source "$tmp/cfg.sh"
  [ "$JOB_DIR" = "$weird" ] && [ "${MODELS[0]}" = "$spec" ] && [ "$SERVER_CMD" = "$scmd" ] &&
    [ "${SWEEP_ARGS[3]}" = "family=a|b" ] && [ "${RUN_NAMES[1]}" = "1-builtin_sampled_temp_0.3" ]
)
check '[ $? -eq 0 ]' "quoted values round-trip: $(cat "$tmp/cfg.sh")"
"$bin" slurm submit --corpus data/corpus-mini.h5 --model x --out "$tmp/bad" --gpus-per-node 1 --partition 'a b' --dry-run > /dev/null 2>&1
check '[ $? -eq 2 ]' "a partition with a space is refused"

# ---- an array over two models, with a stand-in server per node ----
echo ok > "$tmp/www/health"
port=$(free_ports 2)
arr="$tmp/array it's"
sel=(--corpus data/corpus-mini.h5 --filter 'family=sgemm|reduce|fa,target=sm_90,form=ptx' --split test --samples 4 --gpus-per-node 0)
small=(--filter 'family=sgemm|wmma' --split test)
if [ "${RS_TEST_QUICK:-0}" = 1 ]; then # sanitizer build: 7 small GEMMs per run
  sel=(--corpus data/corpus-mini.h5 --filter 'family=sgemm,target=gfx90a,form=postsplit' --split all --samples 4
       --gpus-per-node 0)
  small=(--filter 'family=sgemm,target=gfx90a,form=postsplit' --split all)
fi
"$bin" slurm submit "${sel[@]}" --model 'builtin:sampled?temp=0.3' --model 'builtin:sampled?temp=0.9' \
  --out "$arr" --array-over models --port "$port" \
  --server-cmd "cd '$tmp/www' && exec python3 -m http.server {port} --bind 127.0.0.1" > "$tmp/sub1.log" 2>&1
check '[ $? -eq 0 ] && [ -x "$arr/job.sbatch" ]' "array submit: $(cat "$tmp/sub1.log")"
id=$(job_id "$tmp/sub1.log")
wait_job "$id" 400 || fail=$((fail + 1))
d0="$arr/0-builtin_sampled_temp_0.3"
d1="$arr/1-builtin_sampled_temp_0.9"
check '[ -s "$d0/run.h5" ] && [ -s "$d1/run.h5" ]' "array runs finished: $(ls "$arr"; tail -n 5 "$arr"/logs/slurm-*.out)"
check '[ "$(scontrol show job "$id" 2> /dev/null | grep -c "JobState=COMPLETED")" -eq 2 ]' "both array tasks COMPLETED: $(scontrol show job "$id" | grep JobState)"
"$bin" report "$d0" "$d1" > "$tmp/report.txt" 2>&1
check '[ $? -eq 0 ] && grep -q "temp=0.3" "$tmp/report.txt" && grep -q "temp=0.9" "$tmp/report.txt"' "report compares the two runs: $(head -20 "$tmp/report.txt")"
check 'ls "$arr"/logs/server-*-0.log > /dev/null 2>&1 && grep -q "GET /health" "$arr"/logs/server-*-0.log' "the stand-in server was health-checked: $(cat "$arr"/logs/server-* 2>&1 | tail -3)"
check '! pgrep -f "http.server $port" > /dev/null && ! pgrep -f "http.server $((port + 1))" > /dev/null' "the stand-in servers were stopped"
# array task i serves on --port + i (one server per node here): two tasks on one node never collide
check 'grep -q "port $port)" "$arr"/logs/slurm-*_0.out && grep -q "port $((port + 1)))" "$arr"/logs/slurm-*_1.out' "array tasks' ports: $(grep -h "server 0" "$arr"/logs/slurm-*.out)"

# ---- a port something else listens on is refused, not shared ----
busy=$(free_port)
python3 -m http.server "$busy" --bind 127.0.0.1 --directory "$tmp/www" > "$tmp/busy.log" 2>&1 &
busy_pid=$!
for _ in $(seq 1 50); do (exec 3<> "/dev/tcp/127.0.0.1/$busy") 2> /dev/null && break; sleep 0.1; done
"$bin" slurm submit "${sel[@]}" --model 'builtin:sampled?temp=0.3' --out "$tmp/busy run" --port "$busy" \
  --server-cmd "cd '$tmp/www' && exec python3 -m http.server {port} --bind 127.0.0.1" > "$tmp/sub4.log" 2>&1
id=$(job_id "$tmp/sub4.log")
check '[ -n "$id" ]' "busy-port submit: $(cat "$tmp/sub4.log")"
wait_job "$id" 200 || fail=$((fail + 1))
check 'grep -q "port $busy is already in use" "$tmp/busy run"/logs/slurm-*.out && [ ! -e "$tmp/busy run/run/run.h5" ]' "a busy port is refused: $(tail -n 5 "$tmp/busy run"/logs/slurm-*.out)"
check '! grep -q "GET /health" "$tmp/busy.log"' "a worker health-checked the other job's server: $(tail -3 "$tmp/busy.log")"
kill "$busy_pid" 2> /dev/null
check '[ "$(grep -c "ranks on 1 node" "$arr"/logs/slurm-*.out | awk -F: "{s+=\$NF} END {print s}")" -eq 2 ]' "the sweep ran through srun: $(cat "$arr"/logs/slurm-*.out | tail -5)"

# ---- cancel mid-run, submit again: resumes, and equals an uninterrupted run ----
slow=(--corpus data/corpus-mini.h5 "${small[@]}" --samples 6 --block 2 --gpus-per-node 0
      --model 'builtin:sampled?temp=0.7')
res="$tmp/resumed run"
"$bin" slurm submit "${slow[@]}" --out "$res" --requeue > "$tmp/sub2.log" 2>&1
id=$(job_id "$tmp/sub2.log")
check '[ -n "$id" ]' "slow submit: $(cat "$tmp/sub2.log")"
# cancel at 3 finished shards, with the sweep's ranks stopped there (sweep_wait.sh): mid-run
freeze_at "$res/run" 3 "slurm:$id"
check '[ $? -eq 0 ]' "the sweep was stopped at $(shards_done "$res/run") shards, mid-run"
scancel "$id"
thaw "$res/run"
wait_job "$id" 60 || fail=$((fail + 1))
nsh=$(ls "$res/run/shards" 2> /dev/null | grep -c '\.h5$')
check '[ ! -e "$res/run/run.h5" ] && [ "$nsh" -ge 3 ]' "cancelled mid-run ($nsh shards; run.h5 $( [ -e "$res/run/run.h5" ] && echo exists || echo absent))"
"$bin" slurm submit "${slow[@]}" --out "$res" --requeue > "$tmp/sub3.log" 2>&1
id=$(job_id "$tmp/sub3.log")
wait_job "$id" 400 || fail=$((fail + 1))
check '[ -s "$res/run/run.h5" ]' "resubmitted run finished: $(tail -n 5 "$res"/logs/slurm-*.out)"
check 'grep -q "resuming" "$res"/logs/slurm-"$id".out && grep -q "reused" "$res"/logs/slurm-"$id".out && ! grep -q "(0 reused)" "$res"/logs/slurm-"$id".out' "the second job resumed: $(grep -h "reused\|resuming" "$res"/logs/slurm-*.out)"
"$bin" sweep --corpus data/corpus-mini.h5 "${small[@]}" --samples 6 --block 2 \
  --model 'builtin:sampled?temp=0.7' --out "$tmp/ref" > "$tmp/ref.log" 2>&1
"$bin" attempts "$res/run" > "$tmp/res.tsv"
"$bin" attempts "$tmp/ref" > "$tmp/ref.tsv"
check '[ -s "$tmp/ref.tsv" ] && cmp -s "$tmp/ref.tsv" "$tmp/res.tsv"' "cancelled+resubmitted differs from uninterrupted: $(diff "$tmp/ref.tsv" "$tmp/res.tsv" | head -3)"

echo "test_slurm: $fail failed ($(($(date +%s) - t_start)) s)"
[ "$fail" -eq 0 ]
