#!/usr/bin/env bash
# An API key given by environment never appears in run.h5, shard files, config.json, summary.md
# or the sweep's logs, even when every request fails (the errors name the URL and the cause).
# The "server" is a closed loopback port: every attempt becomes `infra`, never a model failure.
set -uo pipefail
bin=$1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RS_TEST_KEY="sk-test-$(date +%s%N)-do-not-log"
fail=0
"$bin" sweep --corpus data/corpus-mini.h5 \
  --model 'openai:http://127.0.0.1:9/v1?model=m&key_env=RS_TEST_KEY&retries=1&backoff=0.01&timeout=2' \
  --filter 'family=wmma|sgemm|reduce,target=sm_90,form=ptx' --samples 2 --max-infra 0 --out "$tmp/run" > "$tmp/log" 2>&1
st=$?
[ $st -eq 0 ] || { echo "FAIL: sweep status $st"; tail -5 "$tmp/log"; fail=$((fail + 1)); }
# by default the sweep stops after 20 unanswered attempts in a row: that message is checked too
"$bin" sweep --corpus data/corpus-mini.h5 \
  --model 'openai:http://127.0.0.1:9/v1?model=m&key_env=RS_TEST_KEY&retries=1&backoff=0.01&timeout=2' \
  --filter 'family=wmma|sgemm|reduce,target=sm_90,form=ptx' --samples 2 --out "$tmp/run2" > "$tmp/log2" 2>&1
st=$?
[ $st -eq 1 ] && grep -q "127.0.0.1:9.*got no answer" "$tmp/log2" || { echo "FAIL: stop after 20: status $st"; tail -3 "$tmp/log2"; fail=$((fail + 1)); }
"$bin" attempts "$tmp/run" --texts > "$tmp/attempts.tsv"
"$bin" attempts "$tmp/run" --provenance > "$tmp/provenance.txt"
[ "$(cut -f5 "$tmp/attempts.tsv" | sort -u)" = "infra" ] || { echo "FAIL: attempts are not all infra"; fail=$((fail + 1)); }
if grep -rqa "$RS_TEST_KEY" "$tmp"; then
  echo "FAIL: the API key appears in: $(grep -rla "$RS_TEST_KEY" "$tmp")"; fail=$((fail + 1))
fi
# the texts are compressed inside run.h5: the decompressed dumps above are what grep checked;
# the infra diagnostics say what failed (the URL), without the key
grep -q "127.0.0.1:9" "$tmp/attempts.tsv" || { echo "FAIL: infra diagnostics do not name the server"; fail=$((fail + 1)); }
"$bin" report "$tmp/run" > "$tmp/report.md" 2>&1
grep -q "infra" "$tmp/report.md" || { echo "FAIL: report does not show infra"; fail=$((fail + 1)); }
echo "test_secrets: $fail failed"
[ $fail -eq 0 ]
