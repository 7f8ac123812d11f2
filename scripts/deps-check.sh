#!/bin/sh
# deps-check.sh - the folder include graph from `#include "dir/file.h"` lines; fails on a cycle.
# Usage: scripts/deps-check.sh [SRC_DIR] [--graph]. An arrow a -> b: a file in a/ includes b/...
# Folders must form a DAG (lower floors never include higher ones); a cycle is printed and
# the script exits 1. --graph prints the edges (with the number of include lines) as well.
set -eu
src=${1:-$(dirname "$0")/..}
[ "${1:-}" = --graph ] && src=$(dirname "$0")/..
graph=0
for a in "$@"; do [ "$a" = --graph ] && graph=1; done
cd "$src"
edges=$(grep -rHo --include='*.c' --include='*.h' '^#include "[A-Za-z0-9_]*/' \
          --exclude-dir=build --exclude-dir='build-*' --exclude-dir=.git --exclude-dir=third_party . |
        sed -e 's|^\./||' -e 's|/[^:]*:#include "| |' -e 's|/$||' |
        awk '$1 != $2 && index($1, "/") == 0' | sort | uniq -c | awk '{print $2, $3, $1}')
if [ "$graph" = 1 ]; then
  printf '%s\n' "$edges" | awk '{printf "%s -> %s (%s)\n", $1, $2, $3}'
  # floors: 0 includes no other folder, n includes some folder on floor n-1 (no cycle: ends)
  printf '%s\n' "$edges" | awk '
    NF >= 2 { e[$1, $2]; node[$1]; node[$2] }
    END {
      for (v in node) fl[v] = 0
      for (it = 0; it < 64; it++) { ch = 0
        for (k in e) { split(k, ab, SUBSEP); if (fl[ab[1]] < fl[ab[2]] + 1) { fl[ab[1]] = fl[ab[2]] + 1; ch = 1 } }
        if (!ch) break }
      for (v in node) printf "floor %d: %s\n", fl[v], v
    }' | sort -t: -k1,1V -k2 | awk -F': ' '$1 != last { if (last != "") print line; line = $0; last = $1; next } { line = line " " $2 } END { print line }'
fi
# Transitive closure (a few dozen folders): a and b on a cycle when each reaches the other.
printf '%s\n' "$edges" | awk '
  NF >= 2 { r[$1, $2] = 1; e[$1, $2] = 1; node[$1]; node[$2] }
  END {
    for (k in node) for (i in node) if ((i, k) in r) for (j in node) if ((k, j) in r) r[i, j] = 1
    bad = 0
    for (i in node) if ((i, i) in r) { cyc[i]; bad++ }
    if (!bad) exit 0
    printf "deps-check: folders on an include cycle:"
    for (v in cyc) printf " %s", v
    printf "\n"
    for (a in cyc) for (b in cyc) if ((a, b) in e && (b, a) in r) printf "  %s -> %s\n", a, b
    exit 1
  }'
