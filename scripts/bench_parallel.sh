#!/usr/bin/env bash
# Sequences generating together (issue 39): journey bench --parallel N beside llama.cpp's
# llama-batched-bench on the same GGUF, taking turns round after round (the host's speed drifts
# ±25% minute to minute; only figures from the same rounds compare). Aggregate generation tok/s
# (llama-batched-bench's S_TG: N sequences x TG tokens over the time of the TG steps; journey
# bench's tg with --parallel N: the same, from a 1-token start), medians over the rounds.
#   scripts/bench_parallel.sh LLAMA_BATCHED_BENCH MODEL.gguf [ROUNDS=3] [THREADS=2] [JOURNEY=build/journey] [NPL="1 2 4 8 16"] [TG=32]
set -euo pipefail
llama=${1:?usage: bench_parallel.sh LLAMA_BATCHED_BENCH MODEL.gguf [ROUNDS] [THREADS] [JOURNEY] [NPL] [TG]}
model=${2:?usage: bench_parallel.sh LLAMA_BATCHED_BENCH MODEL.gguf [ROUNDS] [THREADS] [JOURNEY] [NPL] [TG]}
rounds=${3:-3}
threads=${4:-2}
journey=${5:-build/journey}
npl=${6:-1 2 4 8 16}
tg=${7:-32}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  echo "round $r ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
  for n in $npl; do
    j=$("$journey" bench -m "$model" -p 0 -n "$tg" -r 1 -t "$threads" --parallel "$n" --json 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["tg_tok_s"])')
    # -npp 1: a one-token prompt per sequence, as journey bench's start; S_TG is the 8th column.
    l=$("$llama" -m "$model" -c $(((tg + 2) * n)) -b 2048 -ub 512 -npp 1 -ntg "$tg" -npl "$n" -t "$threads" 2>/dev/null |
        awk -F'|' '/^\|[ ]+[0-9]/ {gsub(/ /, "", $9); print $9}')
    echo "$n journey $j" | tee -a "$out" >&2
    echo "$n llama.cpp $l" | tee -a "$out" >&2
  done
done
python3 - "$out" <<'PY'
import sys, statistics, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    n, tool, v = line.split()
    runs[(int(n), tool)].append(float(v))
print("| N | journey tok/s | llama.cpp tok/s | journey / llama.cpp | journey / journey N=1 |")
print("| ---: | ---: | ---: | ---: | ---: |")
base = statistics.median(runs[(min(n for n, _ in runs), "journey")])
for n in sorted({n for n, _ in runs}):
    j, l = statistics.median(runs[(n, "journey")]), statistics.median(runs[(n, "llama.cpp")])
    print(f"| {n} | {j:.1f} | {l:.1f} | {j / l:.2f} | {j / base:.2f} |")
PY
