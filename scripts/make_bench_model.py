#!/usr/bin/env python3
"""Write a seeded random model in exactly GPT-2 small's shape, for benchmarks.

12 layers, 12 heads, width 768, context 1024, vocabulary 50257: 124M parameters.
Speed does not depend on the values, so these files are generated, never committed.

    scripts/make_bench_model.py OUT_DIR [--dtypes f32,f16,bf16] [--seed 0]

writes OUT_DIR/gpt2-small-<dtype>/ as Hugging Face directories (config.json,
model.safetensors, vocab.json and merges.txt copied from models/gpt2-tokenizer).
Needs only numpy (Debian: python3-numpy).
"""
import argparse
import json
import shutil
import struct
from pathlib import Path

import numpy as np

N_LAYER, N_HEAD, N_EMBD, N_CTX, N_VOCAB = 12, 12, 768, 1024, 50257


def tensors(rng):
    """GPT-2's tensors, Hugging Face names and Conv1D [in, out] layout."""
    def w(*shape, std=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * std).astype(np.float32)

    yield "wte.weight", w(N_VOCAB, N_EMBD)
    yield "wpe.weight", w(N_CTX, N_EMBD, std=0.01)
    for i in range(N_LAYER):
        p = f"h.{i}."
        yield p + "ln_1.weight", 1 + w(N_EMBD, std=0.05)
        yield p + "ln_1.bias", w(N_EMBD)
        yield p + "attn.c_attn.weight", w(N_EMBD, 3 * N_EMBD)
        yield p + "attn.c_attn.bias", w(3 * N_EMBD)
        yield p + "attn.c_proj.weight", w(N_EMBD, N_EMBD)
        yield p + "attn.c_proj.bias", w(N_EMBD)
        yield p + "ln_2.weight", 1 + w(N_EMBD, std=0.05)
        yield p + "ln_2.bias", w(N_EMBD)
        yield p + "mlp.c_fc.weight", w(N_EMBD, 4 * N_EMBD)
        yield p + "mlp.c_fc.bias", w(4 * N_EMBD)
        yield p + "mlp.c_proj.weight", w(4 * N_EMBD, N_EMBD)
        yield p + "mlp.c_proj.bias", w(N_EMBD)
    yield "ln_f.weight", 1 + w(N_EMBD, std=0.05)
    yield "ln_f.bias", w(N_EMBD)


def to_dtype(a, dtype):
    if dtype == "f32":
        return "F32", a.astype("<f4").tobytes()
    if dtype == "f16":
        return "F16", a.astype("<f2").tobytes()
    # bf16: round to nearest even from the float32 bits
    bits = a.astype("<f4").view("<u4").astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype("<u2")
    return "BF16", rounded.tobytes()


def write_safetensors(path, items, dtype):
    header, blobs, offset = {}, [], 0
    for name, a in items:
        st_dtype, raw = to_dtype(a, dtype)
        header[name] = {"dtype": st_dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--dtypes", default="f32,f16,bf16")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    items = list(tensors(np.random.default_rng(args.seed)))
    n_params = sum(a.size for _, a in items)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": N_EMBD, "n_head": N_HEAD,
              "n_layer": N_LAYER, "n_positions": N_CTX, "n_ctx": N_CTX, "n_inner": None,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "vocab_size": N_VOCAB,
              "bos_token_id": 50256, "eos_token_id": 50256}
    for dtype in args.dtypes.split(","):
        d = Path(args.out_dir) / f"gpt2-small-{dtype}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        for f in ("vocab.json", "merges.txt"):
            shutil.copy(root / "models" / "gpt2-tokenizer" / f, d / f)
        write_safetensors(d / "model.safetensors", items, dtype)
        print(f"{d}: {n_params} parameters, {dtype}", flush=True)


if __name__ == "__main__":
    main()
