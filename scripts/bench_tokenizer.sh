#!/usr/bin/env bash
# Tokenizer throughput on >= 5 MB of real English text, one thread:
#   scripts/bench_tokenizer.sh [path/to/journey]
# The text: the King James Bible (Debian's bible-kjv-text, via `bible`) if installed, the licences
# in /usr/share/common-licenses, then Debian copyright files until there are 5 MB.
# Prints the best of 3 runs of `journey tokenize -f TEXT`, with and without the start-up
# (loading the 50k-token vocabulary), in MB/s (10^6 bytes per second).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/journey}
[ -x "$bin" ] || { echo "no executable $bin; build first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
text=$work/english.txt
min_bytes=$((5 * 1000 * 1000))
if command -v bible >/dev/null; then bible "Gen1:1-Rev22:21" >"$text" 2>/dev/null || true; fi
cat /usr/share/common-licenses/* >>"$text" 2>/dev/null || true
for f in /usr/share/doc/*/copyright; do
  [ "$(stat -c %s "$text")" -ge $min_bytes ] && break
  cat "$f" >>"$text"
done
bytes=$(stat -c %s "$text")
[ "$bytes" -ge $min_bytes ] || { echo "only $bytes bytes of text found" >&2; exit 1; }

# Best wall time of 3 runs, in seconds.
best_time() {
  local best=
  for _ in 1 2 3; do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    best=$(echo "$t1 - $t0" | bc -l | awk -v b="$best" '{ print (b == "" || $1 < b) ? $1 : b }')
  done
  echo "$best"
}

echo "x" >"$work/tiny.txt"
startup=$(best_time "$bin" tokenize -f "$work/tiny.txt")
total=$(best_time "$bin" tokenize -f "$text")
tokens=$("$bin" tokenize -f "$text" | wc -w)
awk -v b="$bytes" -v t="$total" -v s="$startup" -v n="$tokens" 'BEGIN {
  printf "text: %.2f MB, %d tokens\n", b / 1e6, n
  printf "journey tokenize -f: %.3f s = %.1f MB/s (start-up %.3f s; without it %.1f MB/s)\n",
         t, b / 1e6 / t, s, b / 1e6 / (t - s)
}'
