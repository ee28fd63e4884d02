#!/usr/bin/env bash
# Tokenizer throughput on >= 5 MB of real English text, one thread, for GPT-2's vocabulary
# (models/gpt2-tokenizer) and the Llama 3 and Qwen2 tokenizer.json files of the test data (the
# build unpacks them into <build>/test-data/tokenizers/):
#   scripts/bench_tokenizer.sh [path/to/journey]
# The text: the King James Bible (Debian's bible-kjv-text, via `bible`) if installed, the licences
# in /usr/share/common-licenses, then Debian copyright files until there are 5 MB.
# Prints the best of 3 runs of `journey tokenize -f TEXT`, with and without the start-up
# (loading the vocabulary), in MB/s (10^6 bytes per second).
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
  local best_wall='' best_cpu='' TIMEFORMAT="%R %U %S" t
  for _ in 1 2 3; do
    t=$( { time "$@" >/dev/null; } 2>&1 )
    read -r wall user sys <<<"$t"
    best_wall=$(awk -v b="$best_wall" -v x="$wall" 'BEGIN { print (b == "" || x < b) ? x : b }')
    best_cpu=$(awk -v b="$best_cpu" -v x="$(echo "$user + $sys" | bc -l)" 'BEGIN { print (b == "" || x < b) ? x : b }')
  done
  echo "$best_wall $best_cpu"
}

echo "x" >"$work/tiny.txt"
echo "text: $(awk -v b="$bytes" 'BEGIN { printf "%.2f", b / 1e6 }') MB; load average $(cut -d' ' -f1 /proc/loadavg)"
# One vocabulary: its name, then the tokenizer flags of `journey tokenize`.
bench() {
  local name=$1
  shift
  local startup_wall startup_cpu total_wall total_cpu tokens
  read -r startup_wall startup_cpu <<<"$(best_time "$bin" tokenize "$@" -f "$work/tiny.txt")"
  read -r total_wall total_cpu <<<"$(best_time "$bin" tokenize "$@" -f "$text")"
  tokens=$("$bin" tokenize "$@" -f "$text" | wc -w)
  awk -v name="$name" -v b="$bytes" -v n="$tokens" -v tw="$total_wall" -v tc="$total_cpu" -v sw="$startup_wall" -v sc="$startup_cpu" 'BEGIN {
    printf "%-7s %8d tokens  wall %.3f s = %5.1f MB/s (start-up %.3f s; without it %5.1f MB/s)   cpu %.3f s = %5.1f MB/s (without start-up %5.1f MB/s)\n",
      name, n, tw, b / 1e6 / tw, sw, b / 1e6 / (tw - sw), tc, b / 1e6 / tc, b / 1e6 / (tc - sc)
  }'
}
data=$(dirname "$bin")/test-data/tokenizers
bench gpt2 -m models/gpt2-tokenizer
for family in llama3 qwen2; do
  if [ -f "$data/$family/tokenizer.json" ]; then bench "$family" --tokenizer-json "$data/$family/tokenizer.json"
  else echo "$family: no $data/$family/tokenizer.json (configure the build with tests on)" >&2; fi
done
