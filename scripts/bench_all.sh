#!/usr/bin/env bash
# The Speed table of the README: journey bench on GPT-2 small at every dtype and thread count,
# one markdown row each, with the 1-minute load average when the row started (so a busy
# machine shows). Models from scripts/make_bench_model.py (F32/F16/BF16 directories, Q8_0 GGUF).
#   scripts/bench_all.sh [MODELS_DIR=$XDG_CACHE_HOME/journey/bench-models] [JOURNEY=build/journey]
set -euo pipefail
models=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/journey/bench-models}
journey=${2:-build/journey}
echo "| dtype | threads | pp128 tok/s | tg64 tok/s | load ms | peak RSS MiB | load avg |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for m in gpt2-small-f32 gpt2-small-f16 gpt2-small-bf16 gpt2-small-q8_0.gguf; do
  for t in 2 1; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    "$journey" bench -m "$models/$m" -p 128 -n 64 -r 3 -t "$t" --json 2>/dev/null |
      python3 -c 'import json, sys
d = json.load(sys.stdin)
print("| %s | %d | %.1f | %.1f | %.0f | %.0f | %s |" % (d["dtype"], d["threads"], d["pp_tok_s"], d["tg_tok_s"], d["load_ms"], d["peak_rss_mb"], sys.argv[1]))' "$load"
  done
done
