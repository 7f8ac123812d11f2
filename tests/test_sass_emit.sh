#!/usr/bin/env bash
# SASS results into cubins through the CLI, read back by nvdisasm (skipped, exit 77, without one):
#  1. regalloc FILE.cubin --pinned -o OUT.cubin: byte-identical to the input, crosscheck ok;
#  2. regalloc FILE.cubin --free -o OUT.cubin (sm_89 and sm_90): crosscheck ok, the register count
#     written is the one --free printed (EIATTR_REGCOUNT, and sh_info on sm_89, 0 on sm_90);
#  3. emit FILE.sass truth -o OUT.cubin --cubin: identical; a builtin:chaitin?free=1 answer: ok;
#  4. bad input: a truncated cubin, another kernel's listing, an old corpus without its cubin
#     column (exit 2, named), an answer the verifier rejects (exit 1, no cubin written).
set -uo pipefail
cli="$1"
nd="${NVDISASM:-$(command -v nvdisasm || echo /opt/nvidia-cuda-11.8/usr/bin/nvdisasm)}"
[ -x "$nd" ] || { echo "test_sass_emit: SKIPPED: no nvdisasm"; exit 77; }
F=tests/fixtures/sass
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; cat "$t/log" 2>/dev/null; exit 1; }
for a in 89 90; do
  c=$F/sgemm_t4x4.sm_$a.cubin
  "$cli" regalloc "$c" --pinned -q -o "$t/p.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "pinned sm_$a"
  cmp -s "$c" "$t/p.cubin" || fail "pinned sm_$a not byte-identical"
  grep -q "crosscheck (nvdisasm): 1 functions, [0-9]* instructions, 0 mismatches.*: ok" "$t/log" || fail "pinned crosscheck sm_$a"
  "$cli" regalloc "$c" --free -o "$t/f.cubin" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "free sm_$a"
  after=$(sed -n 's/.*R: [0-9]* -> \([0-9]*\) registers.*/\1/p' "$t/log")
  grep -q "crosscheck (nvdisasm): 1 functions, [0-9]* instructions, 0 mismatches; other lines [0-9]*, 0 differ.*: ok" "$t/log" || fail "free crosscheck sm_$a"
  "$cli" lower regcounts "$t/f.cubin" >"$t/rc" || fail "regcounts"
  sh=$after; [ $a = 90 ] && sh=0
  grep -q "EIATTR_REGCOUNT $after	sh_info registers $sh\$" "$t/rc" || { cat "$t/rc"; fail "free sm_$a count $after"; }
  cmp -s "$c" "$t/f.cubin" && fail "free sm_$a wrote the input unchanged"
done
c=$F/sgemm_t4x4.sm_89.cubin; s=$F/sgemm_t4x4.sm_89.sass
"$cli" emit "$s" truth -o "$t/e.cubin" --cubin "$c" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "emit truth"
cmp -s "$c" "$t/e.cubin" || fail "emit truth not identical"
"$cli" alloc "$s" --model 'builtin:chaitin?free=1' -n 1 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["answer"])' >"$t/a.json"
[ -s "$t/a.json" ] || fail "no chaitin answer"
"$cli" emit "$s" "$t/a.json" -o "$t/e2.cubin" --cubin "$c" --nvdisasm "$nd" >"$t/log" 2>&1 || fail "emit chaitin answer"
grep -q "crosscheck (nvdisasm): [0-9]* instructions, 0 mismatches.*: ok" "$t/log" || fail "emit crosscheck"
# bad input
head -c 3000 "$c" >"$t/trunc.cubin"
"$cli" regalloc "$t/trunc.cubin" --listing "$s" --pinned -o "$t/x.cubin" >"$t/log" 2>&1; [ $? = 2 ] || fail "truncated cubin: exit 2"
grep -q "trunc.cubin: truncated" "$t/log" || fail "truncated cubin named"
"$cli" lower "$c" $F/sgemm_t4x4.sm_90.sass $F/sgemm_t4x4.sm_90.sass -o "$t/x.cubin" >"$t/log" 2>&1; [ $? = 2 ] || fail "another listing: exit 2"
[ -e "$t/x.cubin" ] && fail "a cubin was written from another kernel's listing"
id=$("$cli" corpus list data/corpus-mini.h5 | awk '$1 ~ /sm_89\/sass$/ {print $1; exit}')
"$cli" emit --corpus data/corpus-mini.h5 --instance "$id" truth -o "$t/x.cubin" >"$t/log" 2>&1; [ $? = 2 ] || fail "old corpus: exit 2"
grep -q "predates its /text/cubin column" "$t/log" || fail "old corpus: reason"
echo '{"%r0": "R0"}' >"$t/bad.json"
"$cli" emit "$s" "$t/bad.json" -o "$t/x.cubin" --cubin "$c" --nvdisasm "$nd" >"$t/log" 2>&1; [ $? = 1 ] || fail "rejected answer: exit 1"
[ -e "$t/x.cubin" ] && fail "a cubin was written from a rejected answer"
echo "test_sass_emit: ok"
