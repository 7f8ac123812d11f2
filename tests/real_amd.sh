# real_amd.sh - sourced by tests/test_real_simt.sh and tests/test_real_carry.sh (not a test itself:
# CTest runs tests/test_*.sh). The part both share: the tools they need, a temp directory, check(),
# importing our own OpenCL fixtures of one family into a corpus, and emitting its postsplit
# truths through their llc.
#
#   real_setup BIN [TOOL...]     $bin, $tmp (removed at exit), $fail = 0; exits 77 (skipped) when
#                                a tool or rocm-device-libs is missing
#   check EXPR WHAT              evaluates EXPR; on failure prints "FAIL: WHAT", counts it in $fail
#   real_import TSV FAMILY       corpus import into $C ($tmp/C.h5), log in $tmp/import.log (exit 1
#                                with the log if the import fails)
#   real_emit_postsplit LIST N   emits every postsplit row of LIST (`corpus list` output) with the
#                                truth: MachineVerifier ok and counts equal on each, N of them

real_setup() {
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" # Open MPI's plugins leak at exit: see test_sweep.sh
  bin=$(realpath "$1")
  shift
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "SKIP: $t missing"; exit 77; }
  done
  ls /usr/lib/*/amdgcn/bitcode/opencl.bc >/dev/null 2>&1 || { echo "SKIP: rocm-device-libs missing"; exit 77; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  fail=0
  C="$tmp/C.h5"
}

check() { if eval "$1"; then :; else echo "FAIL: $2"; fail=$((fail + 1)); fi; }

real_import() {
  "$bin" corpus import --out "$C" "$1" --family "$2" -j2 > "$tmp/import.log" 2>&1 ||
    { cat "$tmp/import.log"; exit 1; }
  tail -2 "$tmp/import.log"
}

real_emit_postsplit() {
  local id n=0
  while IFS= read -r id; do
    if "$bin" emit --corpus "$C" --instance "$id" truth -o "$tmp/e.s" > "$tmp/e.log" 2>&1 &&
      grep -q "MachineVerifier ok" "$tmp/e.log" && grep -q "counts vs verifier: equal" "$tmp/e.log"; then
      n=$((n + 1))
    else
      echo "FAIL: emit $id: $(tail -2 "$tmp/e.log")"; fail=$((fail + 1))
    fi
  done < <(awk -F'\t' '$1 ~ /\/postsplit$/ {print $1}' "$1")
  check "[ $n -eq $2 ]" "$2 postsplit truths emitted, counts equal ($n)"
}
