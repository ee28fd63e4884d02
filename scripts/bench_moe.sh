#!/usr/bin/env bash
# Mixtures of experts, journey beside llama.cpp: llama-bench and journey bench take turns on the
# same GGUF files, round after round (the host's bandwidth and core speed drift by ±25% from
# minute to minute, so only figures of the same round compare; the table gives medians over
# rounds and the per-round ratios).
#   scripts/bench_moe.sh LLAMA_BENCH [MODELS_DIR=/tmp/bench-moe] [ROUNDS=3] [THREADS=2] [JOURNEY=build/journey]
# The models come from scripts/make_bench_model.py (the real layer shapes, fewer layers):
#   make_bench_model.py /tmp/bench-moe --shape qwen3-30b-a3b --quantize Q4_K_M,Q8_0 --llama-quantize LLAMA_BIN/llama-quantize --drop-f16
#   make_bench_model.py /tmp/bench-moe --shape gpt-oss-20b --quantize Q8_0,MXFP4_MOE --llama-quantize LLAMA_BIN/llama-quantize --drop-f16
# Every one of qwen3-30b-a3b-{q4_k_m,q8_0}.gguf and gpt-oss-20b-{mxfp4_moe,q8_0}.gguf found in
# MODELS_DIR is run (a file journey refuses gets a line saying so); PP=512 and TG=64 in the
# environment set the tests (2 repetitions each).
# Prints one line per run (tool, file, pp tok/s, tg tok/s; for journey also the bytes of weights a
# token reads: its k experts, the router, attention, the output matrix; the read bandwidth over
# those bytes timed just before each tg repetition, tg's share of it, and the peak resident
# size), then per file: medians, per-round ratios journey / llama.cpp and both tools' share of
# the read bandwidth (llama.cpp's: its tg times the same bytes, over journey's read of the round).
set -euo pipefail
llama_bench=${1:?usage: bench_moe.sh LLAMA_BENCH [MODELS_DIR] [ROUNDS] [THREADS] [JOURNEY]}
models=${2:-/tmp/bench-moe}
rounds=${3:-3}
threads=${4:-2}
journey=${5:-build/journey}
pp=${PP:-512}
tg=${TG:-64}
reps=2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

files=()
for f in qwen3-30b-a3b-q4_k_m.gguf qwen3-30b-a3b-q8_0.gguf gpt-oss-20b-mxfp4_moe.gguf gpt-oss-20b-q8_0.gguf; do
  if [ -f "$models/$f" ]; then
    if "$journey" info -m "$models/$f" >/dev/null 2>"$out.err"; then files+=("$f")
    else echo "# journey does not load $f: $(tail -1 "$out.err")" >&2; fi
  fi
done
rm -f "$out.err"
[ ${#files[@]} -gt 0 ] || { echo "bench_moe.sh: no model in $models that journey loads" >&2; exit 2; }

llama_row() {  # file
  "$llama_bench" -m "$models/$1" -p "$pp" -n "$tg" -t "$threads" -r "$reps" -o json 2>/dev/null | python3 -c '
import json, sys
runs = json.load(sys.stdin)
pp = [r["avg_ts"] for r in runs if r["n_prompt"] > 0][0]
tg = [r["avg_ts"] for r in runs if r["n_gen"] > 0][0]
print("llama.cpp %s %.2f %.2f - - - -" % (sys.argv[1], pp, tg))' "$1"
}
journey_row() {  # file
  "$journey" bench -m "$models/$1" -p "$pp" -n "$tg" -r "$reps" -t "$threads" --json --bandwidth 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("journey %s %.2f %.2f %.0f %.2f %.3f %.0f" % (sys.argv[1], d["pp_tok_s"], d["tg_tok_s"], d["token_bytes"],
      d["read_gb_s"], d["tg_read_share"], d["peak_rss_mb"]))' "$1"
}

for r in $(seq "$rounds"); do
  echo "# round $r of $rounds, $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" >&2
  for f in "${files[@]}"; do
    if [ $((r % 2)) = 1 ]; then llama_row "$f"; journey_row "$f"; else journey_row "$f"; llama_row "$f"; fi
  done
done | tee "$out"

python3 - "$out" "$pp" "$tg" "$models" <<'PY'
import os, statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    tool, f, pp, tg, nbytes, read, share, rss = line.split()
    runs.setdefault((f, tool), []).append((float(pp), float(tg), nbytes, read, share, rss))
pp_name, tg_name = "pp" + sys.argv[2], "tg" + sys.argv[3]
med = lambda v: f"{st.median(v):.1f} [{min(v):.1f}–{max(v):.1f}]"
rat = lambda v: f"{st.median(v):.2f} [{min(v):.2f}–{max(v):.2f}]"
print(f"\n| file | {pp_name} journey | {pp_name} llama.cpp | ratio | {tg_name} journey | {tg_name} llama.cpp | ratio |"
      "\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for f in dict.fromkeys(k[0] for k in runs):
    j, l = runs.get((f, "journey"), []), runs.get((f, "llama.cpp"), [])
    n = min(len(j), len(l))
    if not n: continue
    print(f"| {f} | {med([x[0] for x in j])} | {med([x[0] for x in l])} | {rat([j[i][0] / l[i][0] for i in range(n)])} "
          f"| {med([x[1] for x in j])} | {med([x[1] for x in l])} | {rat([j[i][1] / l[i][1] for i in range(n)])} |")
print(f"\n| file | file MB | bytes a token, MB | read GB/s | {tg_name} share: journey | llama.cpp | journey peak RSS MiB |"
      "\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for f in dict.fromkeys(k[0] for k in runs):
    j, l = runs.get((f, "journey"), []), runs.get((f, "llama.cpp"), [])
    n = min(len(j), len(l))
    if not n: continue
    nbytes = float(j[0][2])
    reads = [float(x[3]) for x in j]
    js = [float(x[4]) for x in j]
    ls = [l[i][1] * nbytes / 1e9 / reads[i] for i in range(n)]
    size = os.path.getsize(os.path.join(sys.argv[4], f)) / 1e6
    print(f"| {f} | {size:.0f} | {nbytes / 1e6:.1f} | {med(reads)} | {rat(js)} | {rat(ls)} | {st.median(float(x[5]) for x in j):.0f} |")
PY
