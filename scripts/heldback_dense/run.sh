#!/usr/bin/env bash
# Held-back variants of the dense/hybrid fixtures (issues 35, 36: "held-back variants agree too"):
# made after the code, never read by the tests. Each fixture's HF directory with every tensor
# redrawn from its own mean and std under another seed (reseed.py), converted by llama.cpp's
# converter (scripts/moe_standins/convert.py, the pre-tokenizer the fixture's GGUF names;
# STUB_SPECIAL_ADDED=1 so that the stub transformers lists tokenizer.json's special added tokens as
# special, which gives Gemma 4's fixture GGUF's metadata byte for byte), llama.cpp's top-20 and
# 32 greedy tokens for a 12- and a 200-token case (scripts/moe_standins/expect.py with llama_ref
# built as /tmp/heldback/README.md says, 32 greedy steps), then journey from the directory and the
# GGUF (compare.py of the MoE held-back set, at -t 1).
#   scripts/heldback_dense/run.sh OUT_DIR SHARED_FIXTURES LLAMA_REF COMPARE_PY EXPECT_PY
set -euo pipefail
out=${1:?}; fx=${2:?}; ref=${3:?}; compare=${4:?}; expect=${5:?}
here=$(dirname "$(realpath "$0")")
mkdir -p "$out/out" && ln -sf "$ref" "$out/out/llama_ref"
i=0
for fam in smollm3 phi4-mini gemma4 qwen35; do
  i=$((i + 1)); v=$fam-B; seed=$((7700 + i))
  pre=$(PYTHONPATH=/work/ref/llama.cpp/gguf-py /usr/bin/python3 -c "
from gguf import GGUFReader; import glob; r = GGUFReader(glob.glob('$fx/models/$fam/*-F32.gguf')[0])
f = r.fields.get('tokenizer.ggml.pre'); print(f.parts[-1].tobytes().decode() if f else '')")
  /usr/bin/python3 "$here/reseed.py" "$fx/models/$fam/hf" "$out/out/$v/hf" $seed
  args=(); [ -n "$pre" ] && args=(--pre "$pre")
  STUB_SPECIAL_ADDED=1 /usr/bin/python3 -B "$here/../moe_standins/convert.py" "$out/out/$v/hf" --outtype f32 --outfile "$out/out/$v/$v-F32.gguf" "${args[@]}" > "$out/out/$v/convert.log" 2>&1
  OUT="$out/out" /usr/bin/python3 -B "$expect" $v $seed > "$out/out/$v/expect.json"
  (cd "$out" && /usr/bin/python3 -B "$compare" $v) >> "$out/results.jsonl"
done
