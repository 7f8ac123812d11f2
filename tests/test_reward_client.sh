#!/usr/bin/env bash
# clients/regsweep_reward.py against a live `regsweep reward serve` (a part of the mini corpus):
# TRL's reward-function form (plain and conversational completions, by instance column and by
# prompt text), verl's compute_score and compute_score_batch: truths get 1.0 and "pass", garbage
# 0.0 and "syntax", an unknown instance an error verdict. Skipped (77) without python3.
set -uo pipefail
bin=$(realpath "$1")
command -v python3 >/dev/null || { echo "SKIPPED: no python3"; exit 77; }
command -v jq >/dev/null || { echo "SKIPPED: no jq"; exit 77; }
tmp=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$tmp"' EXIT
filter='family=sgemm,target=gfx90a'
"$bin" reward serve --corpus data/corpus-mini.h5 --filter "$filter" --port 0 --allow-shutdown > "$tmp/out" 2> "$tmp/err" &
srv=$!
port=
for _ in $(seq $((3000 * ${RS_TEST_TIME_SCALE:-1}))); do # up to 300 s: the ASan build on a busy machine
  port=$(sed -n 's|^reward: serving http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/out")
  [ -n "$port" ] && break
  kill -0 "$srv" 2>/dev/null || break # the server exited: no need to wait
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: server did not start: $(cat "$tmp/err")"; exit 1; }
"$bin" corpus export data/corpus-mini.h5 --split train --out "$tmp/all.jsonl" 2>/dev/null
jq -c 'select(.target == "gfx90a" and (.id | startswith("sgemm/")))' "$tmp/all.jsonl" | head -n 4 > "$tmp/pairs.jsonl"
[ "$(wc -l < "$tmp/pairs.jsonl")" = 4 ] || { echo "FAIL: no sgemm gfx90a training pairs"; exit 1; }
REGSWEEP_REWARD_URL=http://127.0.0.1:$port PYTHONPATH=clients python3 - "$tmp/pairs.jsonl" <<'PY'
import json, sys
import regsweep_reward as rr
pairs = [json.loads(l) for l in open(sys.argv[1])]
fail = 0
def check(cond, what):
    global fail
    if not cond:
        print("FAIL:", what); fail += 1
ids = [p["id"] for p in pairs]
truths = [p["completion"] for p in pairs]
# TRL: plain completions with an instance column; garbage beside them
r = rr.trl_reward(prompts=[p["prompt"] for p in pairs] * 2, completions=truths + ["no idea"] * 4, instance=ids * 2)
check(r == [1.0] * 4 + [0.0] * 4, "trl_reward by instance: %r" % r)
# TRL conversational: prompts as messages (looked up by the user message's text), completions as messages
conv_p = [[{"role": "system", "content": "x"}, {"role": "user", "content": p["prompt"]}] for p in pairs]
conv_c = [[{"role": "assistant", "content": t}] for t in truths]
r = rr.trl_reward(prompts=conv_p, completions=conv_c)
check(r == [1.0] * 4, "trl_reward conversational by prompt: %r" % r)
# verl
s = rr.compute_score("regsweep", truths[0], ids[0], None)
check(s["score"] == 1.0 and s["verdict"] == "pass", "compute_score truth: %r" % s)
s = rr.compute_score("regsweep", "{}", ids[0], None)
check(s["score"] == 0.0 and s["verdict"] == "syntax", "compute_score empty answer: %r" % s)
s = rr.compute_score("regsweep", truths[0], "no/such/instance", None)
check(s["score"] == 0.0 and s["verdict"] == "error", "compute_score unknown instance: %r" % s)
b = rr.compute_score_batch(["regsweep"] * 4, truths, ["x"] * 4, [{"instance": i} for i in ids])
check([x["verdict"] for x in b] == ["pass"] * 4, "compute_score_batch: %r" % b)
full = rr.score([{"instance": ids[0], "completion": truths[0]}])
check(full["meta"]["shaping"]["version"] == 1 and "registers" in full["results"][0], "score() answer: %r" % full["meta"])
sys.exit(1 if fail else 0)
PY
rc=$?
curl -s -X POST -d '{}' "http://127.0.0.1:$port/shutdown" > /dev/null
wait $srv
src=$?
srv=
[ $src = 0 ] || { echo "FAIL: server exit status $src"; rc=1; }
[ $rc = 0 ] && echo "test_reward_client: passed"
exit $rc
