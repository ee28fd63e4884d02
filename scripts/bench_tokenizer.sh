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

# Best of 3 runs, in seconds: "wall cpu" (cpu = user + system, what one thread really used;
# on a busy machine the wall time also counts waiting for a core).
best_time() {
  local best_wall= best_cpu= TIMEFORMAT="%R %U %S" t
  for _ in 1 2 3; do
    t=$( { time "$@" >/dev/null; } 2>&1 )
    read -r wall user sys <<<"$t"
    best_wall=$(awk -v b="$best_wall" -v x="$wall" 'BEGIN { print (b == "" || x < b) ? x : b }')
    best_cpu=$(awk -v b="$best_cpu" -v x="$(echo "$user + $sys" | bc -l)" 'BEGIN { print (b == "" || x < b) ? x : b }')
  done
  echo "$best_wall $best_cpu"
}

echo "x" >"$work/tiny.txt"
read -r startup_wall startup_cpu <<<"$(best_time "$bin" tokenize -f "$work/tiny.txt")"
read -r total_wall total_cpu <<<"$(best_time "$bin" tokenize -f "$text")"
tokens=$("$bin" tokenize -f "$text" | wc -w)
awk -v b="$bytes" -v n="$tokens" -v tw="$total_wall" -v tc="$total_cpu" -v sw="$startup_wall" -v sc="$startup_cpu" 'BEGIN {
  printf "text: %.2f MB, %d tokens; load average %s\n", b / 1e6, n, "'"$(cut -d' ' -f1 /proc/loadavg)"'"
  printf "wall: %.3f s = %.1f MB/s   (start-up %.3f s; without it %.1f MB/s)\n", tw, b / 1e6 / tw, sw, b / 1e6 / (tw - sw)
  printf "cpu:  %.3f s = %.1f MB/s   (start-up %.3f s; without it %.1f MB/s)\n", tc, b / 1e6 / tc, sc, b / 1e6 / (tc - sc)
}'
