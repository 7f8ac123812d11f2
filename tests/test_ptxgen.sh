#!/usr/bin/env bash
# test_ptxgen.sh -- issue 42, the table grown by construction: scripts/ptxgen.py's quick subset
# (every 17th variant of the PTX-ISA grammar, ~240 kernels of our own per architecture) compiled by
# ptxas 13 and listed by nvdisasm 11.8, cached in $RS_TEST_CACHE/ptxgen-quick/ (shared by the
# builds; a rerun only reads it)
# Asserts on that real compiler output:
#  1. the variants ptxas rejects for an architecture are recorded with ptxas's reason, not an error
#     (sm_86: the sm_90-only ones);
#  2. every SASS form of the listings is a row of sass/optable.c, except the forms ptxgen.py's
#     LEFT_OUT names (refused by name);
#  3. `regsweep regalloc --pinned` reproduces ptxas on every function, and `inspect --live` equals
#     nvdisasm -lrm count on every row of every function (the widths of each row measured);
#  4. the live check can fail: one count of nvdisasm's table changed makes it fail, naming the row.
# sm_75, sm_86, sm_90 (RS_TEST_QUICK=1: sm_86 and sm_90, from the cache). Skipped (77) without
# ptxas 13, nvdisasm 11.8 or Debian's python3.
set -u
CLI="${1:?usage: test_ptxgen.sh path/to/regsweep}"
PY=/usr/bin/python3
export PTXAS="${PTXAS:-/usr/local/cuda/bin/ptxas}" NVDISASM="${NVDISASM:-/opt/nvidia-cuda-11.8/usr/bin/nvdisasm}"
for t in "$PY" "$PTXAS" "$NVDISASM"; do
  [[ -x "$t" ]] || { echo "test_ptxgen: SKIPPED: $t not found"; exit 77; }
done
# one architecture per encoding generation (sm_80 and sm_89 encode as sm_86 does; ptxgen.py build
# --arch sm_75,...,sm_90 checks all five, docs/ptxgen.md); the sanitizer build reads two of them
# from the shared cache
ARCHS=sm_75,sm_86,sm_90
[[ -n "${RS_TEST_QUICK:-}" ]] && ARCHS=sm_86,sm_90
# RS_TEST_CACHE (tests/CMakeLists.txt: build-cache/ at the source root) is shared by the plain and
# the sanitizer build: the compilers' output does not depend on ours, so CI compiles it once
OUT="${RS_TEST_CACHE:-$(cd "$(dirname "$CLI")" && pwd)}/ptxgen-quick"
G=(scripts/ptxgen.py --quick --arch "$ARCHS" --out "$OUT" --regsweep "$CLI")
fail=0
check() { if eval "$2"; then :; else echo "FAIL: $1" >&2; fail=1; fi; }
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT

t0=$(date +%s)
"$PY" "${G[@]:0:1}" build "${G[@]:1}" >"$T/build" 2>&1; rb=$?
check "ptxgen build (rc $rb): $(tail -3 "$T/build")" "[[ $rb == 0 ]]"
cat "$T/build"
for a in ${ARCHS//,/ }; do
  check "$a: some variants accepted" "grep -Eq 'ptxgen $a: [1-9][0-9]+ variants accepted' '$T/build'"
done
if [[ ",$ARCHS," == *,sm_86,* ]]; then
  check "sm_86: the sm_90-only variants are recorded as rejected with ptxas's reason" \
    "cat '$OUT'/sm_86/quick.*.rejected | grep -q 'requires .target sm_90'"
fi

"$PY" "${G[@]:0:1}" report "${G[@]:1}" --unknown --fixtures /nonexistent >"$T/report" 2>&1
cat "$T/report"
for a in ${ARCHS//,/ }; do
  check "$a: forms seen" "grep -Eq 'ptxgen $a: .*SASS forms [1-9][0-9]+ seen' '$T/report'"
done
# every unknown form is one LEFT_OUT names
left=$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); import ptxgen; print(" ".join(ptxgen.LEFT_OUT))')
while read -r _ a f; do
  base=${f%/*}
  ok=0
  for l in $left; do [[ "$base" == "$l" || "$base" == "$l".* ]] && ok=1; done
  check "$a: form $f is not in sass/optable.c (and not left out on purpose)" "[[ $ok == 1 ]]"
done < <(grep '^unknown ' "$T/report")

"$PY" "${G[@]:0:1}" check "${G[@]:1}" >"$T/check" 2>&1; rc=$?
cat "$T/check"
check "ptxgen check: pinned identical and live = nvdisasm on every function (rc $rc)" "[[ $rc == 0 ]]"
for a in ${ARCHS//,/ }; do
  check "$a: check compared functions" \
    "grep -Eq 'ptxgen check $a: ([1-9][0-9]+) functions .*pinned identical \\1/\\1; live counts = nvdisasm -lrm count on ([1-9][0-9]+)/\\2 functions' '$T/check'"
done

# 4. the live comparison is no formality: change one count of nvdisasm's table, it must fail
a=${ARCHS##*,}
mkdir -p "$T/neg/$a"
cp "$OUT/$a/quick.00."{sass,lrm,rejected} "$T/neg/$a/"
sed -i -E '0,/^(\s+\/\*0010\*\/.*\/\/ \|\s*)([0-9]+)/s//\1999/' "$T/neg/$a/quick.00.lrm"
check "negative control: one nvdisasm count changed" "grep -q '// | *999' '$T/neg/$a/quick.00.lrm'"
"$PY" scripts/ptxgen.py check --quick --no-build --arch "$a" --out "$T/neg" --regsweep "$CLI" >"$T/negc" 2>&1; rn=$?
check "negative control: check fails and names the row (rc $rn): $(tail -2 "$T/negc")" \
  "[[ $rn == 1 ]] && grep -q 'live differs: .*/\\*0010\\*/' '$T/negc'"

echo "test_ptxgen: $(($(date +%s) - t0)) s"
[[ $fail == 0 ]] && echo "test_ptxgen: ok"
exit $fail
