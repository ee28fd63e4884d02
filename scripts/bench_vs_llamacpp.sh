#!/usr/bin/env bash
# journey beside llama.cpp on the same machine at the same time: llama-bench and journey bench
# take turns on the same GGUF files (and journey on the Hugging Face directories too), round after
# round, so both see the same memory bandwidth and core speed. On a shared host these move by
# ±25% from minute to minute, so figures taken at different times do not compare; the ratio
# within a round does.
#   scripts/bench_vs_llamacpp.sh LLAMA_BENCH [MODELS_DIR=$XDG_CACHE_HOME/journey/bench-models] [ROUNDS=6] [THREADS=2] [JOURNEY=build/journey] [SHAPE=gpt2]
# SHAPE gpt2: GPT-2 small from scripts/make_bench_model.py MODELS_DIR --gguf f32,f16,q8_0 (F32/F16/BF16
# directories and GGUF files), pp128 and tg64, 3 repetitions.
# SHAPE llama: Llama 3.2 1B from make_bench_model.py MODELS_DIR --shape llama-3.2-1b --dtypes bf16
# --gguf f16,q8_0, plus llama-quantize's Q4_K_M and Q6_K of the F16 file (llama-3.2-1b-q4_k_m.gguf,
# llama-3.2-1b-q6_k.gguf), pp512 and tg32, 2 repetitions (a round takes minutes).
# Prints one line per run (tool dtype format pp tg, and for journey the bytes of weights a token
# reads, the read bandwidth over them just before each tg repetition, and tg's share of it:
# journey bench --bandwidth), then medians, ranges and the per-round ratios journey / llama.cpp,
# and the share of the read bandwidth each run's tg reaches (llama.cpp's: its tg times the same
# file's bytes, over the read journey measured next to it in the same round). Each round's
# header gives the time and the load average.
# TYPES="iq2_xxs iq3_s iq4_xs tq2_0" in the environment replaces the llama shape's list of files
# (llama-3.2-1b-<type>.gguf; the i-quants made with `journey quantize --imatrix`, issue 37); the
# BF16 directory row is run only when MODELS_DIR has it.
# DEPTH=N in the environment runs every test after N positions in the KV cache (-d N for both
# tools, as llama-bench's depth): the one-token attention then reads N positions per layer.
set -euo pipefail
llama_bench=${1:?usage: bench_vs_llamacpp.sh LLAMA_BENCH [MODELS_DIR] [ROUNDS] [THREADS] [JOURNEY] [SHAPE]}
models=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/journey/bench-models}
rounds=${3:-6}
threads=${4:-2}
journey=${5:-build/journey}
shape=${6:-gpt2}
case "$shape" in
  gpt2) prefix=gpt2-small pp=128 tg=64 reps=3 ;;
  llama) prefix=llama-3.2-1b pp=512 tg=32 reps=2 ;;
  *) echo "bench_vs_llamacpp.sh: SHAPE must be gpt2 or llama, not '$shape'" >&2; exit 2 ;;
esac
depth=${DEPTH:-0}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

llama_row() {  # dtype gguf
  "$llama_bench" -m "$models/$2" -p "$pp" -n "$tg" -d "$depth" -t "$threads" -r "$reps" -o json 2>/dev/null | python3 -c '
import json, sys
runs = json.load(sys.stdin)
pp = [r["avg_ts"] for r in runs if r["n_prompt"] > 0][0]
tg = [r["avg_ts"] for r in runs if r["n_gen"] > 0][0]
print("llama.cpp %s gguf %.1f %.1f - - -" % (sys.argv[1], pp, tg))' "$1"
}
journey_row() {  # dtype format model
  "$journey" bench -m "$models/$3" -p "$pp" -n "$tg" -d "$depth" -r "$reps" -t "$threads" --json --bandwidth 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("journey %s %s %.1f %.1f %.0f %.1f %.3f" % (sys.argv[1], sys.argv[2], d["pp_tok_s"], d["tg_tok_s"],
      d["token_bytes"], d["read_gb_s"], d["tg_read_share"]))' "$1" "$2"
}

for r in $(seq "$rounds"); do
  echo "# round $r of $rounds, depth $depth, $(date -u +%H:%M:%S), load average $(cut -d' ' -f1 /proc/loadavg)" >&2
  if [ "$shape" = gpt2 ]; then
    for d in f32 f16 q8_0; do
      llama_row "$d" "$prefix-$d.gguf"
      journey_row "$d" gguf "$prefix-$d.gguf"
      [ "$d" != q8_0 ] && journey_row "$d" hf "$prefix-$d"
    done
  else
    for d in ${TYPES:-f16 q8_0 q4_k_m q6_k}; do
      llama_row "$d" "$prefix-$d.gguf"
      journey_row "$d" gguf "$prefix-$d.gguf"
    done
  fi
  if [ -d "$models/$prefix-bf16" ]; then journey_row bf16 hf "$prefix-bf16"; fi
done | tee "$out"

python3 - "$out" "$pp" "$tg" "$depth" <<'PY'
import statistics as st, sys
at = f" @ d{sys.argv[4]}" if sys.argv[4] != "0" else ""
pp_name, tg_name = "pp" + sys.argv[2] + at, "tg" + sys.argv[3] + at
runs, gauge = {}, {}
for line in open(sys.argv[1]):
    tool, dtype, fmt, pp, tg, nbytes, read, share = line.split()
    runs.setdefault(f"{tool} {dtype} {fmt}", []).append((float(pp), float(tg)))
    if tool == "journey": gauge.setdefault(f"{dtype} {fmt}", []).append((float(nbytes), float(read), float(share)))
print(f"\n| run | {pp_name} median [range] | {tg_name} median [range] |\n| --- | ---: | ---: |")
for key, v in runs.items():
    pp, tg = [a for a, _ in v], [b for _, b in v]
    print(f"| {key} | {st.median(pp):.0f} [{min(pp):.0f}–{max(pp):.0f}] | {st.median(tg):.1f} [{min(tg):.1f}–{max(tg):.1f}] |")

def ratios(num, den, i):
    a, b = runs.get(num), runs.get(den)
    if not a or not b: return None
    r = [x[i] / y[i] for x, y in zip(a, b)]
    return f"{st.median(r):.2f} [{min(r):.2f}–{max(r):.2f}]"
print(f"\n| journey / llama.cpp, same round | {pp_name} | {tg_name} |\n| --- | ---: | ---: |")
for num, den in [("journey f32 gguf", "llama.cpp f32 gguf"), ("journey f32 hf", "llama.cpp f32 gguf"),
                 ("journey f16 gguf", "llama.cpp f16 gguf"), ("journey f16 hf", "llama.cpp f16 gguf"),
                 ("journey bf16 hf", "llama.cpp f16 gguf"), ("journey bf16 hf", "llama.cpp f32 gguf"),
                 *[(k, "llama.cpp " + k.split()[1] + " gguf") for k in runs
                   if k.startswith("journey ") and k.endswith(" gguf") and k.split()[1] not in ("f32", "f16")]]:
    pp, tg = ratios(num, den, 0), ratios(num, den, 1)
    if pp: print(f"| {num} / {den} | {pp} | {tg} |")

print(f"\n| run | bytes a token | read GB/s, median [range] | {tg_name} share of it, median [range] |\n| --- | ---: | ---: | ---: |")
for key, v in gauge.items():
    reads, shares = [r for _, r, _ in v], [x for _, _, x in v]
    print(f"| journey {key} | {v[0][0] / 1e6:.1f} MB | {st.median(reads):.1f} [{min(reads):.1f}–{max(reads):.1f}] | "
          f"{st.median(shares):.2f} [{min(shares):.2f}–{max(shares):.2f}] |")
    dtype, fmt = key.split()
    llama = runs.get(f"llama.cpp {dtype} gguf")
    if fmt == "gguf" and llama:  # the same file: the same bytes; the read journey measured in that round
        s = [tg * v[0][0] / 1e9 / r for (_, tg), (_, r, _) in zip(llama, v)]
        print(f"| llama.cpp {dtype} gguf | {v[0][0] / 1e6:.1f} MB | (journey's) | {st.median(s):.2f} [{min(s):.2f}–{max(s):.2f}] |")
PY
