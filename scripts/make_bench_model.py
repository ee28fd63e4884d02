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
"""
import argparse
import os
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
        return out + np.asarray(items, dtype={T_I32: "<i4", T_U32: "<u4", T_F32: "<f4"}[etype]).tobytes()
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", nargs="?", default=os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "journey", "bench-models"),
                    help="where to write (default: $XDG_CACHE_HOME/journey/bench-models, created)")
    ap.add_argument("--dtypes", default="f32,f16,bf16", help="safetensors directories ('' for none)")
    ap.add_argument("--gguf", default="f32,f16,q8_0", help="GGUF files ('' for none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", default="gpt2-small", choices=["gpt2-small", "llama-3.2-1b"])
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
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
