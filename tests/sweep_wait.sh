# sweep_wait.sh - sourced by tests/test_sweep.sh and tests/test_faults.sh (not a test itself:
# CTest runs tests/test_*.sh). Acts on a running sweep at a point its progress defines (finished
# shards), never at a point of the clock, so a busy machine changes the wall time, not what is
# tested or whether it passes. Needs $bin (the regsweep binary).
#
#   rank_pids DIR        the processes of the sweep writing DIR, every MPI rank (not mpirun)
#   rank_pid DIR R       the process of MPI rank R
#   shards_done DIR      finished shard files in DIR/shards
#   freeze_at DIR N JOB  runs the sweep in short steps (SIGCONT its ranks, 20 ms, SIGSTOP them)
#                        until DIR holds N finished shards: returns 0 with every rank stopped, 1 if
#                        the job JOB (a pid, or slurm:JOBID) ended first. Between two looks the sweep advances one step at
#                        most, so it can run past N unseen only by what one step allows.
#   thaw DIR [PID]       SIGCONT every rank of the sweep except PID
#   time_scale N         N times RS_TEST_TIME_SCALE (tests/CMakeLists.txt: 4 under the
#                        sanitizers), for the caps on waits that only catch a hang

rank_pids() { pgrep -f "^$bin sweep.*$1( |\$)"; }

rank_pid() {
  local pid
  for pid in $(rank_pids "$1"); do
    tr '\0' '\n' < "/proc/$pid/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && echo "$pid"
  done
}

shards_done() {
  local f=("$1"/shards/*.h5)
  [ -e "${f[0]}" ] && echo "${#f[@]}" || echo 0
}

job_alive() {
  case $1 in
    slurm:*) [ -n "$(squeue -h -j "${1#slurm:}" 2> /dev/null)" ] ;;
    *) kill -0 "$1" 2> /dev/null ;;
  esac
}

freeze_at() {
  local dir=$1 n=$2 job=$3 pids
  while job_alive "$job"; do
    pids=$(rank_pids "$dir")
    if [ -n "$pids" ]; then
      kill -STOP $pids 2> /dev/null
      [ "$(shards_done "$dir")" -ge "$n" ] && return 0
      kill -CONT $pids 2> /dev/null
    fi
    sleep 0.02 # a step: a few shards at most, even on a fast idle machine
  done
  return 1
}

thaw() {
  local pid
  for pid in $(rank_pids "$1"); do [ "$pid" != "${2:-}" ] && kill -CONT "$pid" 2> /dev/null; done
  return 0
}

time_scale() { echo $(($1 * ${RS_TEST_TIME_SCALE:-1})); }
