#!/usr/bin/env bash
# The held-back 5-layer Qwen3.5 variant (qwen35_5layer.py), as run.sh does the others: the HF
# directory, llama.cpp's converter (scripts/moe_standins/convert.py --pre qwen35, as the qwen35
# fixture's GGUF), llama.cpp's top-20 and 32 greedy tokens for a 12- and a 200-token case
# (scripts/moe_standins/expect.py with llama_ref built as /tmp/heldback/README.md says), then journey
# from the directory and the GGUF (compare.py of the MoE held-back set, at -t 1).
#   scripts/heldback_dense/qwen35_5layer.sh OUT_DIR LLAMA_REF COMPARE_PY EXPECT_PY [SEED]
set -euo pipefail
out=${1:?}; ref=${2:?}; compare=${3:?}; expect=${4:?}; seed=${5:-7705}
here=$(dirname "$(realpath "$0")")
v=qwen35-5L
mkdir -p "$out/out/$v" && ln -sf "$ref" "$out/out/llama_ref"
/usr/bin/python3 -B "$here/qwen35_5layer.py" "$out/out/$v/hf" $seed
/usr/bin/python3 -B "$here/../moe_standins/convert.py" "$out/out/$v/hf" --outtype f32 --outfile "$out/out/$v/$v-F32.gguf" --pre qwen35 > "$out/out/$v/convert.log" 2>&1
OUT="$out/out" /usr/bin/python3 -B "$expect" $v $seed > "$out/out/$v/expect.json"
(cd "$out" && /usr/bin/python3 -B "$compare" $v) >> "$out/results.jsonl"
