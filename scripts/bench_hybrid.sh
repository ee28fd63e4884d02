#!/usr/bin/env bash
# The hybrid (issue 35: Qwen3.5's Gated DeltaNet + gated attention), journey beside llama.cpp:
# llama-bench and journey bench take turns on the same GGUF files, round after round, as
# bench_moe.sh does (only figures of the same round compare; medians over rounds and the
# per-round ratios are printed).
#   scripts/bench_hybrid.sh LLAMA_BENCH [MODELS_DIR=/tmp/bench-hyb] [ROUNDS=3] [THREADS=2] [JOURNEY=build/journey]
# The models come from scripts/make_bench_model.py (Qwen3.5-0.8B's layer shapes, 12 of 24 layers):
#   make_bench_model.py /tmp/bench-hyb --shape qwen3.5-0.8b --quantize Q8_0,Q4_K_M --llama-quantize LLAMA_BIN/llama-quantize
# Every one of qwen3.5-0.8b-{f16,q8_0,q4_k_m}.gguf found in MODELS_DIR is run (TYPES="q8_0" in the
# environment narrows the list). Tests: pp512 (PP), and tg32 (TG) after 0, 128 and 4096 positions
# of context (DEPTHS="0 128 4096"; -d for both tools: the attention layers read the cache, the
# Gated DeltaNet layers a fixed state, so tg should fall only by the attention's share), 2
# repetitions each. Then the memory at 32k context (CTX): journey's KV bytes per token (f32 and
# f16 cache) and fixed recurrent state from `journey info`, llama.cpp's KV and recurrent buffers
# as llama-batched-bench prints them on load (LLAMA_BENCH's directory must hold it).
set -euo pipefail
llama_bench=${1:?usage: bench_hybrid.sh LLAMA_BENCH [MODELS_DIR] [ROUNDS] [THREADS] [JOURNEY]}
models=${2:-/tmp/bench-hyb}
rounds=${3:-3}
threads=${4:-2}
journey=${5:-build/journey}
pp=${PP:-512}
tg=${TG:-32}
depths=${DEPTHS:-0 128 4096}
types=${TYPES:-f16 q8_0 q4_k_m}
ctx=${CTX:-32768}
reps=2
out=$(mktemp)
trap 'rm -f "$out" "$out.err"' EXIT

files=()
for t in $types; do
  f=qwen3.5-0.8b-$t.gguf
  [ -f "$models/$f" ] || continue
  if "$journey" info -m "$models/$f" >/dev/null 2>"$out.err"; then files+=("$f")
  else echo "# journey does not load $f: $(tail -1 "$out.err")" >&2; fi
done
[ ${#files[@]} -gt 0 ] || { echo "bench_hybrid.sh: no qwen3.5-0.8b-*.gguf in $models that journey loads" >&2; exit 2; }
max_depth=0
for d in $depths; do [ "$d" -gt "$max_depth" ] && max_depth=$d; done
jctx=$((max_depth + pp + tg))

# one line per test: tool file test tok/s
llama_rows() {  # file
  { "$llama_bench" -m "$models/$1" -p "$pp" -n 0 -t "$threads" -r "$reps" -o jsonl 2>/dev/null
    for d in $depths; do
      "$llama_bench" -m "$models/$1" -p 0 -n "$tg" -d "$d" -t "$threads" -r "$reps" -o jsonl 2>/dev/null
    done; } | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    test = "pp%d" % r["n_prompt"] if r["n_prompt"] else "tg%d@d%d" % (r["n_gen"], r.get("n_depth", 0))
    print("llama.cpp %s %s %.2f" % (sys.argv[1], test, r["avg_ts"]))' "$1"
}
journey_rows() {  # file
  { "$journey" bench -m "$models/$1" -p "$pp" -n 0 -r "$reps" -t "$threads" -c "$jctx" --json 2>/dev/null; echo
    for d in $depths; do
      "$journey" bench -m "$models/$1" -p 0 -n "$tg" -d "$d" -r "$reps" -t "$threads" -c "$jctx" --json 2>/dev/null; echo
    done; } | python3 -c '
import json, sys
for line, test in zip((l for l in sys.stdin if l.strip()), ["pp%s" % sys.argv[2]] + ["tg%s@d%s" % (sys.argv[3], d) for d in sys.argv[4].split()]):
    d = json.loads(line)
    print("journey %s %s %.2f" % (sys.argv[1], test, d["pp_tok_s"] if test.startswith("pp") else d["tg_tok_s"]))' "$1" "$pp" "$tg" "$depths"
}

for r in $(seq "$rounds"); do
  echo "# round $r of $rounds, $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" >&2
  for f in "${files[@]}"; do
    if [ $((r % 2)) = 1 ]; then llama_rows "$f"; journey_rows "$f"; else journey_rows "$f"; llama_rows "$f"; fi
  done
done | tee "$out"

python3 - "$out" <<'PY'
import statistics as st, sys
runs = {}
for line in open(sys.argv[1]):
    tool, f, test, v = line.split()
    runs.setdefault((f, test), {}).setdefault(tool, []).append(float(v))
med = lambda v: f"{st.median(v):.1f} [{min(v):.1f}–{max(v):.1f}]" if v else "-"
print("\n| file | test | journey tok/s | llama.cpp tok/s | ratio journey / llama.cpp |\n| --- | --- | ---: | ---: | ---: |")
for (f, test), by in runs.items():
    j, l = by.get("journey", []), by.get("llama.cpp", [])
    n = min(len(j), len(l))
    ratios = [j[i] / l[i] for i in range(n)]
    rat = f"{st.median(ratios):.2f} [{min(ratios):.2f}–{max(ratios):.2f}]" if n else "-"
    print(f"| {f} | {test} | {med(j)} | {med(l)} | {rat} |")
PY

# memory at CTX positions: journey's from `journey info`, llama.cpp's buffers from its load log
batched=$(dirname "$llama_bench")/llama-batched-bench
echo
echo "| file | context | journey KV f32 / f16 MiB | journey state MiB | llama.cpp KV MiB | llama.cpp recurrent state MiB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for f in "${files[@]}"; do
  jinfo=$("$journey" info -m "$models/$f" 2>&1 | grep '^memory' || true)
  lmem=""
  if [ -x "$batched" ]; then
    lmem=$("$batched" -m "$models/$f" -c "$ctx" -npp 1 -ntg 1 -npl 1 -t "$threads" -v 2>&1 | grep -E 'llama_(kv_cache|memory_recurrent): +size' || true)
  fi
  python3 - "$f" "$ctx" "$jinfo" "$lmem" <<'PY'
import re, sys
f, ctx, jinfo, lmem = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
m = re.search(r"(\d+) bytes per token.*?(\d+) bytes of recurrent state", jinfo)
mib = lambda b: b / 2**20
jkv = f"{mib(int(m[1]) * ctx):.1f} / {mib(int(m[1]) * ctx / 2):.1f}" if m else "?"
jst = f"{mib(int(m[2])):.2f}" if m else "?"
kv = re.search(r"llama_kv_cache: +size = +([\d.]+) MiB", lmem)
rs = re.search(r"llama_memory_recurrent: +size = +([\d.]+) MiB", lmem)
print(f"| {f} | {ctx} | {jkv} | {jst} | {kv[1] if kv else '?'} | {rs[1] if rs else '?'} |")
PY
done
