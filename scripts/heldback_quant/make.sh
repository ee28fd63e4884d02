#!/usr/bin/env bash
# The held-back quantization set (issue 37: "a held-back set of the same kind agrees too"): made
# after the code, never read by the tests. The quant/ stand-in's kind (TinyLlama-shaped llama, 2
# layers, vocab 512, its tokenizer) with another seed (4242) and width (512, ffn 1024, 8 heads of
# 64, 2 kv heads); llama-imatrix on the fixture's text; llama-quantize of every type (the 18 made
# without an importance matrix, the 10 made with one); an F32 copy of each file's dequantized
# weights (gguf-py: f32_of_dequantized); then llama.cpp (native L, and F on the copy) and journey
# (J) on 19 prompts (the fixture's 12-token case, 17 more of 12 tokens, one of 64), distances over
# F's top-20 as tests/model/test_quant_models.cpp measures them.
#   scripts/heldback_quant/make.sh OUT_DIR LLAMA_BIN [JOURNEY=build/journey]
# LLAMA_BIN: the pinned llama.cpp's build/bin (llama-imatrix, llama-quantize, libllama.so); its
# gguf-py is found beside it (LLAMA_BIN/../../gguf-py). Needs /usr/bin/python3 with numpy.
set -euo pipefail
out=${1:?usage: make.sh OUT_DIR LLAMA_BIN [JOURNEY]}
bin=$(realpath "${2:?usage: make.sh OUT_DIR LLAMA_BIN [JOURNEY]}")
journey=$(realpath "${3:-build/journey}")
here=$(dirname "$(realpath "$0")")
root=$(realpath "$here/../..")
shared=$(realpath "$root/../shared/fixtures/quant")
src=$(realpath "$bin/../..")
mkdir -p "$out/dq" && cd "$out"
g++ -O2 -std=c++17 "$root/scripts/moe_standins/llama_ref.cpp" -I"$src/include" -I"$src/ggml/include" \
    -L"$bin" -lllama -Wl,-rpath,"$bin" -o llama_ref
export PYTHONPATH="$src/gguf-py"
/usr/bin/python3 "$here/make_base.py" base-F32.gguf "$shared/base-F32.gguf"
"$bin/llama-imatrix" -m base-F32.gguf -f "$shared/imatrix/imatrix-text.txt" -o imatrix.gguf -t 2 -c 512 > imatrix.log 2>&1
for t in Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS TQ1_0 TQ2_0; do
    "$bin/llama-quantize" base-F32.gguf "hb-$t.gguf" "$t" 2 >> quantize.log 2>&1
done
for t in IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S IQ3_M Q2_K_S Q4_K_M; do
    "$bin/llama-quantize" --imatrix imatrix.gguf base-F32.gguf "hb-im-$t.gguf" "$t" 2 >> quantize.log 2>&1
done
for f in hb-*.gguf; do /usr/bin/python3 "$here/dequant.py" "$f" "dq/$f"; done
LLAMA_REF=./llama_ref /usr/bin/python3 "$here/run.py" "$journey" | tee results.txt
