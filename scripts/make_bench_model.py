#!/usr/bin/env python3
"""Write a seeded random model in exactly GPT-2 small's or Llama 3.2 1B's shape, for benchmarks.

GPT-2 small: 12 layers, 12 heads, width 768, context 1024, vocabulary 50257: 124M parameters.
Llama 3.2 1B (--shape llama-3.2-1b): 16 layers, width 2048, 32 heads of 64, 8 kv heads, ffn 8192,
vocabulary 128256, tied embeddings, rope theta 500000 with llama3 scaling (factor 32, low/high
frequency factors 1/4, original context 8192): 1.24G parameters.
Speed does not depend on the values, so these files are generated, never committed.

    scripts/make_bench_model.py OUT_DIR [--shape gpt2-small|llama-3.2-1b] [--dtypes f32,f16,bf16]
                                [--gguf f32,f16,q8_0] [--seed 0]

writes OUT_DIR/gpt2-small-<dtype>/ as Hugging Face directories (config.json,
model.safetensors, vocab.json and merges.txt copied from models/gpt2-tokenizer), and
OUT_DIR/gpt2-small-<type>.gguf as GGUF v3 files the way llama.cpp's converter writes GPT-2:
arch gpt2, tensors token_embd / position_embd / blk.N.{attn_norm, attn_qkv, attn_output,
ffn_norm, ffn_up, ffn_down} / output_norm, matrices in Linear [out, in] layout (GPT-2's
Conv1D weights transposed), 1-D tensors in F32, and the tokenizer as tokenizer.ggml.* (gpt2).
The same seed gives the same numbers in every file. Needs only numpy (Debian: python3-numpy).

The Llama shape writes OUT_DIR/llama-3.2-1b-<dtype>/ (config.json as Meta's, GPT-2's vocab.json
and merges.txt padded to 128256 entries) and OUT_DIR/llama-3.2-1b-<type>.gguf the way
llama.cpp's converter writes Llama 3 (q/k rows permuted for its rope pairing, rope_freqs.weight
for the llama3 scaling, no output.weight). Tensors are generated one at a time (1.24G
parameters do not fit in memory twice). K-quants come from llama.cpp's own quantizer:
    llama-quantize OUT_DIR/llama-3.2-1b-f16.gguf OUT_DIR/llama-3.2-1b-q4_k_m.gguf Q4_K_M

Mixtures of experts (GGUF only, the real layer shapes, fewer layers; --layers N to change):
--shape qwen3-30b-a3b: Qwen3-30B-A3B's layers (width 2048, 32 heads and 4 kv heads of 128, q/k
norms, 128 experts of 768, top-8, renormalised; vocabulary 151936, untied output), 6 of its 48.
--shape gpt-oss-20b: gpt-oss-20b's layers (width 2880, 64 heads and 8 kv heads of 64, q/k/v/o
biases, sinks, sliding window 128 on even layers, yarn factor 32 from 4096, 32 experts of 2880
with biases, top-4, router bias; vocabulary 201088, untied), 4 of its 24.
Both take GPT-2's vocabulary padded to their size (the tokenizer does not change the speed). The
file is written as OUT_DIR/<shape>-f16.gguf (arch qwen3moe / gpt-oss, experts stacked as
ffn_{gate,up,down}_exps [n_expert, out, in], as llama.cpp's converter writes them); --quantize
TYPES (e.g. Q4_K_M,Q8_0 or MXFP4_MOE) then runs --llama-quantize on it into
OUT_DIR/<shape>-<type>.gguf (lower case) and, with --drop-f16, removes the F16 file:
    scripts/make_bench_model.py /tmp/bench-moe --shape qwen3-30b-a3b --quantize Q4_K_M,Q8_0 \
        --llama-quantize LLAMA_BIN/llama-quantize --drop-f16

A hybrid the same way (GGUF only): --shape qwen3.5-0.8b, Qwen3.5-0.8B's layers (width 1024,
Gated DeltaNet 16 key and 16 value heads of 128 with conv 4, full attention 8 heads and 2 kv heads
of 256 with the output gate in attn_q and q/k norms, rope on 64 dims with M-RoPE sections
11/11/10, ffn 3584, vocabulary 248320, tied embeddings; no MTP head), 12 of its 24 layers (every
4th full attention, as the real 3 linear : 1 full), arch qwen35 as llama.cpp's converter writes it
(conv taps and 1-D tensors F32):
    scripts/make_bench_model.py /tmp/bench-hyb --shape qwen3.5-0.8b --quantize Q8_0,Q4_K_M \
        --llama-quantize LLAMA_BIN/llama-quantize
"""
import argparse
import os
import json
import shutil
import struct
import subprocess
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
    write_safetensors_lazy(path, [(name, a.shape, None) for name, a in items], lambda i, shape, std: items[i][1], dtype)


# ---- GGUF v3 ---------------------------------------------------------------------------------
GGUF_ALIGN = 32
T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
FILE_TYPE = {"f32": 0, "f16": 1, "q8_0": 7}  # general.file_type (llama_ftype)


def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, value):
    out = gguf_str(key) + struct.pack("<I", vtype)
    if vtype == T_STR:
        return out + gguf_str(value)
    if vtype == T_ARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        if etype == T_STR:
            return out + b"".join(gguf_str(x) for x in items)
        return out + np.asarray(items, dtype={T_I32: "<i4", T_U32: "<u4", T_F32: "<f4", T_BOOL: "?"}[etype]).tobytes()
    return out + struct.pack({T_U32: "<I", T_I32: "<i", T_F32: "<f", T_BOOL: "<?"}[vtype], value)


def quantize_q8_0(a):
    """llama.cpp's Q8_0: blocks of 32 along rows, d = amax / 127 (f16), q = round(x / d)."""
    blocks = a.reshape(-1, 32).astype(np.float32)
    d = np.abs(blocks).max(axis=1) / 127.0
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)
    v = blocks * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int8)  # roundf: halves away from 0
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    out["d"], out["qs"] = d.astype("<f2"), q
    return out.tobytes()


def gguf_tensors(items):
    """HF GPT-2 tensors -> llama.cpp names, Linear [out, in] layout."""
    rename = {"wte.weight": "token_embd.weight", "wpe.weight": "position_embd.weight",
              "ln_f.weight": "output_norm.weight", "ln_f.bias": "output_norm.bias"}
    block = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
             "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
    for name, a in items:
        if name in rename:
            yield rename[name], a
            continue
        _, layer, rest = name.split(".", 2)
        part, kind = rest.rsplit(".", 1)
        if a.ndim == 2:
            a = np.ascontiguousarray(a.T)  # Conv1D [in, out] -> Linear [out, in]
        yield f"blk.{layer}.{block[part]}.{kind}", a


def gpt2_tokenizer_kvs(root, n_vocab):
    """GPT-2's vocabulary (padded to n_vocab with [PADi]) and merges as tokenizer.ggml.* keys."""
    tokens = padded_gpt2_vocab(root, n_vocab)
    merges = [l for l in (root / "models" / "gpt2-tokenizer" / "merges.txt").read_text(encoding="utf-8").split("\n")
              if l and not l.startswith("#version")]
    token_type = [3 if t == "<|endoftext|>" else 1 for t in tokens]  # 1 normal, 3 control
    return [
        gguf_kv("tokenizer.ggml.model", T_STR, "gpt2"),
        gguf_kv("tokenizer.ggml.pre", T_STR, "gpt-2"),
        gguf_kv("tokenizer.ggml.tokens", T_ARR, (T_STR, tokens)),
        gguf_kv("tokenizer.ggml.token_type", T_ARR, (T_I32, token_type)),
        gguf_kv("tokenizer.ggml.merges", T_ARR, (T_STR, merges)),
        gguf_kv("tokenizer.ggml.bos_token_id", T_U32, 50256),
        gguf_kv("tokenizer.ggml.eos_token_id", T_U32, 50256),
    ]


def gguf_type(shape, qtype):
    """1-D tensors stay F32, as the converter writes them; matrices take the file's type."""
    if len(shape) == 1 or qtype == "f32":
        return GGML_F32
    return GGML_F16 if qtype == "f16" else GGML_Q8_0


def write_gguf_file(path, kvs, entries):
    """kvs: packed key/values; entries: (gguf name, shape [out, in], ggml type, maker), each
    tensor made only when its data is written (a 1B model does not fit in memory twice)."""
    infos, offset = [], 0
    for name, shape, gtype, _ in entries:
        n = int(np.prod(shape))
        size = n * 4 if gtype == GGML_F32 else n * 2 if gtype == GGML_F16 else n // 32 * 34
        ne = list(reversed(shape))  # innermost first
        infos.append(gguf_str(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne)
                     + struct.pack("<IQ", gtype, offset))
        offset += size + (-size % GGUF_ALIGN)
    with open(path, "wb") as f:
        f.write(b"GGUF" + struct.pack("<IQQ", 3, len(infos), len(kvs)))
        for kv in kvs:
            f.write(kv)
        for info in infos:
            f.write(info)
        f.write(b"\0" * (-f.tell() % GGUF_ALIGN))
        for name, shape, gtype, maker in entries:
            a = maker()
            if gtype == GGML_F32:
                raw = a.astype("<f4").tobytes()
            elif gtype == GGML_F16:
                raw = a.astype("<f2").tobytes()
            else:
                raw = b"".join(quantize_q8_0(a[r:r + 4096]) for r in range(0, a.shape[0], 4096))
            f.write(raw + b"\0" * (-len(raw) % GGUF_ALIGN))


def write_gguf(path, items, qtype, root):
    kvs = [
        gguf_kv("general.architecture", T_STR, "gpt2"),
        gguf_kv("general.name", T_STR, f"gpt2-small-bench-{qtype}"),
        gguf_kv("general.file_type", T_U32, FILE_TYPE[qtype]),
        gguf_kv("general.alignment", T_U32, GGUF_ALIGN),
        gguf_kv("gpt2.context_length", T_U32, N_CTX),
        gguf_kv("gpt2.embedding_length", T_U32, N_EMBD),
        gguf_kv("gpt2.feed_forward_length", T_U32, 4 * N_EMBD),
        gguf_kv("gpt2.block_count", T_U32, N_LAYER),
        gguf_kv("gpt2.attention.head_count", T_U32, N_HEAD),
        gguf_kv("gpt2.attention.layer_norm_epsilon", T_F32, 1e-5),
    ] + gpt2_tokenizer_kvs(root, N_VOCAB)
    entries = [(name, a.shape, gguf_type(a.shape, qtype), lambda a=a: a) for name, a in gguf_tensors(items)]
    write_gguf_file(path, kvs, entries)


def padded_gpt2_vocab(root, n):
    vocab = json.loads((root / "models" / "gpt2-tokenizer" / "vocab.json").read_text(encoding="utf-8"))
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    return tokens + [f"[PAD{i}]" for i in range(n - len(tokens))]


# ---- Llama 3.2 1B ----------------------------------------------------------------------------
L_LAYER, L_HEAD, L_KV, L_HEAD_DIM, L_EMBD, L_FFN, L_VOCAB, L_CTX = 16, 32, 8, 64, 2048, 8192, 128256, 131072
L_THETA, L_EPS = 500000.0, 1e-5
L_SCALING = {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
             "original_max_position_embeddings": 8192, "rope_type": "llama3"}


def llama_specs():
    """(Hugging Face name, shape [out, in], std): Llama 3.2 1B's tensors, in the checkpoint's order."""
    yield "model.embed_tokens.weight", (L_VOCAB, L_EMBD), 0.02
    for i in range(L_LAYER):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (L_EMBD,), None
        yield p + "self_attn.q_proj.weight", (L_HEAD * L_HEAD_DIM, L_EMBD), 0.02
        yield p + "self_attn.k_proj.weight", (L_KV * L_HEAD_DIM, L_EMBD), 0.02
        yield p + "self_attn.v_proj.weight", (L_KV * L_HEAD_DIM, L_EMBD), 0.02
        yield p + "self_attn.o_proj.weight", (L_EMBD, L_HEAD * L_HEAD_DIM), 0.02
        yield p + "post_attention_layernorm.weight", (L_EMBD,), None
        yield p + "mlp.gate_proj.weight", (L_FFN, L_EMBD), 0.02
        yield p + "mlp.up_proj.weight", (L_FFN, L_EMBD), 0.02
        yield p + "mlp.down_proj.weight", (L_EMBD, L_FFN), 0.02
    yield "model.norm.weight", (L_EMBD,), None


def llama_tensor(seed, index, shape, std):
    """Tensor `index`: its own generator, so each can be made alone and again in every file."""
    rng = np.random.default_rng([seed, index])
    if std is None:  # a norm gain
        return (1 + rng.standard_normal(shape, dtype=np.float32) * 0.05).astype(np.float32)
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(std)


def write_safetensors_lazy(path, specs, make, dtype):
    """specs: (name, shape, std); make(i, shape, std) gives tensor i when its data is written."""
    header, offset = {}, 0
    width = {"f32": 4, "f16": 2, "bf16": 2}[dtype]
    for name, shape, _ in specs:
        n = int(np.prod(shape)) * width
        header[name] = {"dtype": dtype.upper(), "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for i, (name, shape, std) in enumerate(specs):
            f.write(to_dtype(make(i, shape, std), dtype)[1])


def llama3_rope_freqs():
    """llama.cpp's converter's rope_freqs for llama3 scaling: the factor each frequency is divided by."""
    base, dim = L_THETA, L_HEAD_DIM
    freqs = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    factor, low, high, old = (L_SCALING["factor"], L_SCALING["low_freq_factor"], L_SCALING["high_freq_factor"],
                              L_SCALING["original_max_position_embeddings"])
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for f in freqs:
        wavelen = 2 * np.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def permute_qk(a, n_head):
    """llama.cpp's converter: HF's rotate-half rows -> interleaved pairs."""
    return np.ascontiguousarray(a.reshape(n_head, 2, a.shape[0] // n_head // 2, *a.shape[1:])
                                .swapaxes(1, 2).reshape(a.shape))


def llama_gguf_name(name):
    if name == "model.embed_tokens.weight": return "token_embd.weight"
    if name == "model.norm.weight": return "output_norm.weight"
    _, _, layer, rest = name.split(".", 3)
    part = {"input_layernorm.weight": "attn_norm", "self_attn.q_proj.weight": "attn_q",
            "self_attn.k_proj.weight": "attn_k", "self_attn.v_proj.weight": "attn_v",
            "self_attn.o_proj.weight": "attn_output", "post_attention_layernorm.weight": "ffn_norm",
            "mlp.gate_proj.weight": "ffn_gate", "mlp.up_proj.weight": "ffn_up", "mlp.down_proj.weight": "ffn_down"}[rest]
    return f"blk.{layer}.{part}.weight"


def write_gguf_llama(path, specs, make, qtype, root):
    kvs = [
        gguf_kv("general.architecture", T_STR, "llama"),
        gguf_kv("general.name", T_STR, f"llama-3.2-1b-bench-{qtype}"),
        gguf_kv("general.file_type", T_U32, FILE_TYPE[qtype]),
        gguf_kv("general.alignment", T_U32, GGUF_ALIGN),
        gguf_kv("llama.block_count", T_U32, L_LAYER),
        gguf_kv("llama.context_length", T_U32, L_CTX),
        gguf_kv("llama.embedding_length", T_U32, L_EMBD),
        gguf_kv("llama.feed_forward_length", T_U32, L_FFN),
        gguf_kv("llama.attention.head_count", T_U32, L_HEAD),
        gguf_kv("llama.attention.head_count_kv", T_U32, L_KV),
        gguf_kv("llama.rope.freq_base", T_F32, L_THETA),
        gguf_kv("llama.attention.layer_norm_rms_epsilon", T_F32, L_EPS),
        gguf_kv("llama.attention.key_length", T_U32, L_HEAD_DIM),
        gguf_kv("llama.attention.value_length", T_U32, L_HEAD_DIM),
        gguf_kv("llama.vocab_size", T_U32, L_VOCAB),
        gguf_kv("llama.rope.dimension_count", T_U32, L_HEAD_DIM),
    ] + gpt2_tokenizer_kvs(root, L_VOCAB)
    # rope_freqs first, as the converter writes it
    entries = [("rope_freqs.weight", (L_HEAD_DIM // 2,), GGML_F32, lambda: llama3_rope_freqs())]
    for i, (name, shape, std) in enumerate(specs):
        def maker(i=i, name=name, shape=shape, std=std):
            a = make(i, shape, std)
            if name.endswith("q_proj.weight"): a = permute_qk(a, L_HEAD)
            if name.endswith("k_proj.weight"): a = permute_qk(a, L_KV)
            return a
        entries.append((llama_gguf_name(name), shape, gguf_type(shape, qtype), maker))
    write_gguf_file(path, kvs, entries)


def make_llama(args, root):
    specs = list(llama_specs())
    make = lambda i, shape, std: llama_tensor(args.seed, i, shape, std)
    n_params = sum(int(np.prod(s)) for _, s, _ in specs)
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
              "attention_dropout": 0.0, "bos_token_id": 50256, "eos_token_id": 50256, "head_dim": L_HEAD_DIM,
              "hidden_act": "silu", "hidden_size": L_EMBD, "initializer_range": 0.02,
              "intermediate_size": L_FFN, "max_position_embeddings": L_CTX, "mlp_bias": False,
              "num_attention_heads": L_HEAD, "num_hidden_layers": L_LAYER, "num_key_value_heads": L_KV,
              "pretraining_tp": 1, "rms_norm_eps": L_EPS, "rope_scaling": L_SCALING, "rope_theta": L_THETA,
              "tie_word_embeddings": True, "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": L_VOCAB}
    for dtype in filter(None, args.dtypes.split(",")):
        d = Path(args.out_dir) / f"llama-3.2-1b-{dtype}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        tokens = padded_gpt2_vocab(root, L_VOCAB)
        (d / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False))
        shutil.copy(root / "models" / "gpt2-tokenizer" / "merges.txt", d / "merges.txt")
        write_safetensors_lazy(d / "model.safetensors", specs, make, dtype)
        print(f"{d}: {n_params} parameters, {dtype}", flush=True)
    for qtype in filter(None, args.gguf.split(",")):
        path = Path(args.out_dir) / f"llama-3.2-1b-{qtype}.gguf"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_gguf_llama(path, specs, make, qtype, root)
        print(f"{path}: {n_params} parameters, {qtype}", flush=True)


# ---- Mixtures of experts: Qwen3-30B-A3B and gpt-oss-20b layer shapes -------------------------
MOE_SHAPES = {
    "qwen3-30b-a3b": dict(arch="qwen3moe", layers=6, real_layers=48, embd=2048, heads=32, kv=4, head_dim=128,
                          experts=128, used=8, ff_exp=768, ff=6144, vocab=151936, ctx=40960, theta=1e6, eps=1e-6),
    "gpt-oss-20b": dict(arch="gpt-oss", layers=4, real_layers=24, embd=2880, heads=64, kv=8, head_dim=64,
                        experts=32, used=4, ff_exp=2880, ff=2880, vocab=201088, ctx=131072, theta=150000.0, eps=1e-5),
}


def moe_specs(s):
    """(GGUF name, numpy shape [.., out, in], std or None for a norm gain or 'bias'), in the converter's order."""
    C, H, KV, D, E, F, V = s["embd"], s["heads"], s["kv"], s["head_dim"], s["experts"], s["ff_exp"], s["vocab"]
    oss = s["arch"] == "gpt-oss"
    yield "output.weight", (V, C), 0.02
    yield "token_embd.weight", (V, C), 0.02
    for i in range(s["layers"]):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", (C,), None
        yield p + "ffn_down_exps.weight", (E, C, F), 0.02
        if oss: yield p + "ffn_down_exps.bias", (E, C), "bias"
        yield p + "ffn_gate_exps.weight", (E, F, C), 0.02
        yield p + "ffn_up_exps.weight", (E, F, C), 0.02
        if oss:
            yield p + "ffn_gate_exps.bias", (E, F), "bias"
            yield p + "ffn_up_exps.bias", (E, F), "bias"
            yield p + "ffn_gate_inp.bias", (E,), "bias"
        yield p + "ffn_gate_inp.weight", (E, C), 0.02
        yield p + ("post_attention_norm.weight" if oss else "ffn_norm.weight"), (C,), None
        if not oss: yield p + "attn_k_norm.weight", (D,), None
        if oss: yield p + "attn_k.bias", (KV * D,), "bias"
        yield p + "attn_k.weight", (KV * D, C), 0.02
        if oss: yield p + "attn_output.bias", (C,), "bias"
        yield p + "attn_output.weight", (C, H * D), 0.02
        if not oss: yield p + "attn_q_norm.weight", (D,), None
        if oss: yield p + "attn_q.bias", (H * D,), "bias"
        yield p + "attn_q.weight", (H * D, C), 0.02
        if oss: yield p + "attn_sinks.weight", (H,), "bias"
        if oss: yield p + "attn_v.bias", (KV * D,), "bias"
        yield p + "attn_v.weight", (KV * D, C), 0.02
    yield "output_norm.weight", (C,), None


# ---- Hybrids: Qwen3.5-0.8B's layers (Gated DeltaNet + gated full attention) -------------------
HYBRID_SHAPES = {
    "qwen3.5-0.8b": dict(arch="qwen35", layers=12, real_layers=24, embd=1024, heads=8, kv=2, head_dim=256,
                         ff=3584, k_heads=16, v_heads=16, state=128, conv=4, interval=4, rot=64,
                         sections=[11, 11, 10, 0], vocab=248320, ctx=262144, theta=1e7, eps=1e-6),
}


def hybrid_specs(s):
    """(GGUF name, numpy shape, std / None for a norm gain / 'a', 'dt', 'conv'), in llama.cpp's
    converter's order for qwen35 (tied embeddings, no MTP head): every interval-th layer full."""
    C, H, KV, D, F, V = s["embd"], s["heads"], s["kv"], s["head_dim"], s["ff"], s["vocab"]
    Hk, Hv, S, K = s["k_heads"], s["v_heads"], s["state"], s["conv"]
    yield "token_embd.weight", (V, C), 0.02
    for i in range(s["layers"]):
        p = f"blk.{i}."
        yield p + "attn_norm.weight", (C,), None
        if (i + 1) % s["interval"]:  # Gated DeltaNet
            yield p + "ssm_a", (Hv,), "a"
            yield p + "ssm_conv1d.weight", (2 * Hk * S + Hv * S, K), "conv"
            yield p + "ssm_dt.bias", (Hv,), "dt"
            yield p + "ssm_alpha.weight", (Hv, C), 0.02
            yield p + "ssm_beta.weight", (Hv, C), 0.02
            yield p + "attn_qkv.weight", (2 * Hk * S + Hv * S, C), 0.02
            yield p + "attn_gate.weight", (Hv * S, C), 0.02
            yield p + "ssm_norm.weight", (S,), None
            yield p + "ssm_out.weight", (C, Hv * S), 0.02
        yield p + "ffn_down.weight", (C, F), 0.02
        yield p + "ffn_gate.weight", (F, C), 0.02
        yield p + "ffn_up.weight", (F, C), 0.02
        yield p + "post_attention_norm.weight", (C,), None
        if not (i + 1) % s["interval"]:  # full attention, q_proj holding [q | gate] per head
            yield p + "attn_k_norm.weight", (D,), None
            yield p + "attn_k.weight", (KV * D, C), 0.02
            yield p + "attn_output.weight", (C, H * D), 0.02
            yield p + "attn_q_norm.weight", (D,), None
            yield p + "attn_q.weight", (2 * H * D, C), 0.02
            yield p + "attn_v.weight", (KV * D, C), 0.02
    yield "output_norm.weight", (C,), None


def base_kvs(a, name, s):
    """The keys a MoE or hybrid bench shape's F16 GGUF opens with, in the converter's order."""
    return [
        gguf_kv("general.architecture", T_STR, a),
        gguf_kv("general.name", T_STR, f"{name}-bench-f16"),
        gguf_kv("general.file_type", T_U32, FILE_TYPE["f16"]),
        gguf_kv("general.alignment", T_U32, GGUF_ALIGN),
        gguf_kv(f"{a}.block_count", T_U32, s["layers"]),
        gguf_kv(f"{a}.context_length", T_U32, s["ctx"]),
        gguf_kv(f"{a}.embedding_length", T_U32, s["embd"]),
        gguf_kv(f"{a}.feed_forward_length", T_U32, s["ff"]),
        gguf_kv(f"{a}.attention.head_count", T_U32, s["heads"]),
        gguf_kv(f"{a}.attention.head_count_kv", T_U32, s["kv"]),
    ]


def hybrid_tensor(seed, index, shape, std):
    rng = np.random.default_rng([seed, index])
    if std == "a":  # -exp(A_log), A_log = log(U(1, 16)) as the checkpoint's initialisation
        return -rng.uniform(1, 16, shape).astype(np.float32)
    if std == "dt":
        return (1 + rng.standard_normal(shape, dtype=np.float32) * 0.5).astype(np.float32)
    if std == "conv":
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.3)
    return moe_tensor(seed, index, shape, std)


def write_gguf_hybrid(path, name, s, seed, root):
    a = s["arch"]
    kvs = base_kvs(a, name, s) + [
        gguf_kv(f"{a}.rope.dimension_sections", T_ARR, (T_I32, s["sections"])),
        gguf_kv(f"{a}.rope.freq_base", T_F32, s["theta"]),
        gguf_kv(f"{a}.attention.layer_norm_rms_epsilon", T_F32, s["eps"]),
        gguf_kv(f"{a}.attention.key_length", T_U32, s["head_dim"]),
        gguf_kv(f"{a}.attention.value_length", T_U32, s["head_dim"]),
        gguf_kv(f"{a}.ssm.conv_kernel", T_U32, s["conv"]),
        gguf_kv(f"{a}.ssm.state_size", T_U32, s["state"]),
        gguf_kv(f"{a}.ssm.group_count", T_U32, s["k_heads"]),
        gguf_kv(f"{a}.ssm.time_step_rank", T_U32, s["v_heads"]),
        gguf_kv(f"{a}.ssm.inner_size", T_U32, s["v_heads"] * s["state"]),
        gguf_kv(f"{a}.attention.recurrent_layers", T_ARR,
                (T_BOOL, [bool((i + 1) % s["interval"]) for i in range(s["layers"])])),
        gguf_kv(f"{a}.full_attention_interval", T_U32, s["interval"]),
        gguf_kv(f"{a}.rope.dimension_count", T_U32, s["rot"]),
        gguf_kv("general.quantization_version", T_U32, 2),
    ]
    kvs += gpt2_tokenizer_kvs(root, s["vocab"])
    # 1-D tensors and the conv taps in F32, as the converter writes them
    entries = [(n, shape, GGML_F32 if std == "conv" else gguf_type(shape, "f16"),
                lambda i=i, shape=shape, std=std: hybrid_tensor(seed, i, shape, std))
               for i, (n, shape, std) in enumerate(hybrid_specs(s))]
    write_gguf_file(path, kvs, entries)


def moe_tensor(seed, index, shape, std):
    rng = np.random.default_rng([seed, index])
    if std is None:  # a norm gain
        return (1 + rng.standard_normal(shape, dtype=np.float32) * 0.05).astype(np.float32)
    if std == "bias":
        return rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
    out = np.empty(shape, dtype=np.float32)
    for e in range(shape[0]):  # a stacked tensor one expert at a time (a gpt-oss one is 1 GB of float32)
        out[e] = rng.standard_normal(shape[1:], dtype=np.float32) * np.float32(std)
    return out


def write_gguf_moe(path, name, s, seed, root):
    a = s["arch"]
    kvs = base_kvs(a, name, s)
    if a == "gpt-oss":
        kvs += [gguf_kv(f"{a}.rope.scaling.type", T_STR, "yarn"),
                gguf_kv(f"{a}.rope.scaling.factor", T_F32, 32.0),
                gguf_kv(f"{a}.rope.scaling.original_context_length", T_U32, 4096),
                gguf_kv(f"{a}.rope.scaling.yarn_beta_fast", T_F32, 32.0),
                gguf_kv(f"{a}.rope.scaling.yarn_beta_slow", T_F32, 1.0)]
    kvs += [
        gguf_kv(f"{a}.rope.freq_base", T_F32, s["theta"]),
        gguf_kv(f"{a}.attention.layer_norm_rms_epsilon", T_F32, s["eps"]),
        gguf_kv(f"{a}.expert_count", T_U32, s["experts"]),
        gguf_kv(f"{a}.expert_used_count", T_U32, s["used"]),
        gguf_kv(f"{a}.attention.key_length", T_U32, s["head_dim"]),
        gguf_kv(f"{a}.attention.value_length", T_U32, s["head_dim"]),
    ]
    if a == "gpt-oss":
        kvs.append(gguf_kv(f"{a}.attention.sliding_window", T_U32, 128))
    kvs += [gguf_kv(f"{a}.expert_feed_forward_length", T_U32, s["ff_exp"]),
            gguf_kv("general.quantization_version", T_U32, 2)]
    kvs += gpt2_tokenizer_kvs(root, s["vocab"])
    # the router and every bias in F32, as the converter writes them (llama-quantize keeps the router so)
    f32 = lambda n, std: std == "bias" or "ffn_gate_inp" in n
    entries = [(n, shape, GGML_F32 if f32(n, std) else gguf_type(shape, "f16"),
                lambda i=i, shape=shape, std=std: moe_tensor(seed, i, shape, std))
               for i, (n, shape, std) in enumerate(moe_specs(s))]
    write_gguf_file(path, kvs, entries)


def make_moe(args, root):
    """The GGUF-only shapes (mixtures of experts, hybrids): the F16 file, then llama-quantize's."""
    hybrid = args.shape in HYBRID_SHAPES
    s = dict((HYBRID_SHAPES if hybrid else MOE_SHAPES)[args.shape])
    if args.layers: s["layers"] = args.layers
    specs = list((hybrid_specs if hybrid else moe_specs)(s))
    n_params = sum(int(np.prod(shape)) for _, shape, _ in specs)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    f16 = out / f"{args.shape}-f16.gguf"
    types = [t for t in args.quantize.split(",") if t]
    targets = [out / f"{args.shape}-{t.lower()}.gguf" for t in types]
    if not f16.exists() or not targets or not all(t.exists() for t in targets):
        if not f16.exists():
            (write_gguf_hybrid if hybrid else write_gguf_moe)(f16, args.shape, s, args.seed, root)
        print(f"{f16}: {n_params} parameters ({s['layers']} of {s['real_layers']} layers), f16", flush=True)
    for t, path in zip(types, targets):
        if path.exists():
            print(f"{path}: exists, kept", flush=True)
            continue
        if not args.llama_quantize:
            raise SystemExit("make_bench_model.py: --quantize needs --llama-quantize PATH")
        subprocess.run([args.llama_quantize, str(f16), str(path), t], check=True, stdout=subprocess.DEVNULL)
        print(f"{path}: {t} by {args.llama_quantize}", flush=True)
    if args.drop_f16 and types and f16.exists():
        f16.unlink()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "journey", "bench-models"),
                    help="where to write (default: $XDG_CACHE_HOME/journey/bench-models, created)")
    ap.add_argument("--dtypes", default="f32,f16,bf16", help="safetensors directories ('' for none)")
    ap.add_argument("--gguf", default="f32,f16,q8_0", help="GGUF files ('' for none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", default="gpt2-small", choices=["gpt2-small", "llama-3.2-1b", *MOE_SHAPES, *HYBRID_SHAPES])
    ap.add_argument("--layers", type=int, default=0, help="mixtures of experts, hybrids: layers to write (default 6 / 4 / 12)")
    ap.add_argument("--quantize", default="", help="mixtures of experts: llama-quantize types (Q4_K_M,Q8_0,MXFP4_MOE)")
    ap.add_argument("--llama-quantize", default="", help="path of llama-quantize for --quantize")
    ap.add_argument("--drop-f16", action="store_true", help="remove the F16 file once quantized")
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    if args.shape in MOE_SHAPES or args.shape in HYBRID_SHAPES:
        return make_moe(args, root)
    if args.shape == "llama-3.2-1b":
        return make_llama(args, root)
    items = list(tensors(np.random.default_rng(args.seed)))
    n_params = sum(a.size for _, a in items)
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": N_EMBD, "n_head": N_HEAD,
              "n_layer": N_LAYER, "n_positions": N_CTX, "n_ctx": N_CTX, "n_inner": None,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "vocab_size": N_VOCAB,
              "bos_token_id": 50256, "eos_token_id": 50256}
    for dtype in filter(None, args.dtypes.split(",")):
        d = Path(args.out_dir) / f"gpt2-small-{dtype}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        for f in ("vocab.json", "merges.txt"):
            shutil.copy(root / "models" / "gpt2-tokenizer" / f, d / f)
        write_safetensors(d / "model.safetensors", items, dtype)
        print(f"{d}: {n_params} parameters, {dtype}", flush=True)
    for qtype in filter(None, args.gguf.split(",")):
        path = Path(args.out_dir) / f"gpt2-small-{qtype}.gguf"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_gguf(path, items, qtype, root)
        print(f"{path}: {n_params} parameters, {qtype}", flush=True)


if __name__ == "__main__":
    main()
