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
[ "$graph" = 1 ] && printf '%s\n' "$edges" | awk '{printf "%s -> %s (%s)\n", $1, $2, $3}'
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
