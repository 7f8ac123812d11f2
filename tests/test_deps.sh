#!/bin/bash
# test_deps.sh - no include cycle between source folders (scripts/deps-check.sh), and the check
# itself catches one: a two-folder cycle and a three-folder one built in a temporary tree fail it.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
fail=0
if ! out=$("$here/scripts/deps-check.sh" "$here" 2>&1); then
  echo "FAIL: the source tree has a folder include cycle:"; echo "$out"; fail=1
fi
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/a" "$t/b" "$t/c" "$t/d"
echo '#include "b/b.h"' > "$t/a/a.c"; echo '#include "c/c.h"' > "$t/b/b.h"; echo '#include "d/d.h"' > "$t/c/c.c"
if ! "$here/scripts/deps-check.sh" "$t" > /dev/null; then echo "FAIL: a chain a->b->c->d was called a cycle"; fail=1; fi
echo '#include "a/a.h"' > "$t/c/c.h"
out=$("$here/scripts/deps-check.sh" "$t" 2>&1) && { echo "FAIL: a->b->c->a not caught"; fail=1; }
case "$out" in *"c -> a"*) ;; *) echo "FAIL: the cycle's arrows are not named: $out"; fail=1 ;; esac
case "$out" in *" d"*) echo "FAIL: d is not on the cycle: $out"; fail=1 ;; esac
[ $fail = 0 ] && echo "test_deps: ok (no folder cycle; a planted three-folder cycle is caught and named)"
exit $fail
