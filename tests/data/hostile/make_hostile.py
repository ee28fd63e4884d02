#!/usr/bin/env python3
"""Writes the binary reproducers of tests/data/hostile/ (GGUF, llama2.c) and the configs that go
with them, from Python's struct and json alone. Run from anywhere: python3 make_hostile.py
(the files land beside this script; the committed files are its output)."""
import json
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(here, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


U32, F32, STRING, ARRAY = 4, 6, 8, 9


def gguf(kvs, tensors):
    """kvs: [(key, type, packed value)]; tensors: [(name, ne)] of F32, filled with 0.01."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, t, v in kvs:
        out += gguf_string(key) + struct.pack("<I", t) + v
    offset, data = 0, b""
    for name, ne in tensors:
        n = 1
        for d in ne:
            n *= d
        out += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        out += struct.pack("<IQ", 0, offset)
        raw = struct.pack("<%df" % n, *([0.01] * n))
        raw += b"\0" * ((32 - len(raw) % 32) % 32)
        data += raw
        offset += len(raw)
    out += b"\0" * ((32 - len(out) % 32) % 32)
    return out + data


def u32(v):
    return struct.pack("<I", v)


# GPT-2's byte tokens (bytes_to_unicode), the tokenizer of every GGUF here.
def byte_tokens():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def strings(xs):
    return struct.pack("<IQ", STRING, len(xs)) + b"".join(gguf_string(x) for x in xs)


tokenizer = [("tokenizer.ggml.model", STRING, gguf_string("gpt2")),
             ("tokenizer.ggml.tokens", ARRAY, strings(byte_tokens())), ("tokenizer.ggml.merges", ARRAY, strings([]))]


def gpt2_block_count(n):
    kvs = [("general.architecture", STRING, gguf_string("gpt2")), ("gpt2.embedding_length", U32, u32(4)),
           ("gpt2.block_count", U32, u32(n)), ("gpt2.feed_forward_length", U32, u32(16)),
           ("gpt2.context_length", U32, u32(8)), ("gpt2.attention.head_count", U32, u32(2)),
           ("gpt2.attention.layer_norm_epsilon", F32, struct.pack("<f", 1e-5))] + tokenizer
    return gguf(kvs, [("token_embd.weight", [4, 256])])


# GGUF block_count 10^9 and 5*10^6 over a file holding one tensor.
put("gguf_block_count_1e9.gguf", gpt2_block_count(10**9))
put("gguf_block_count_5e6.gguf", gpt2_block_count(5 * 10**6))

# A complete 1-layer Llama (C = 4, 2 heads, FFN 16, 256 byte tokens) whose context_length is 2^26.
C, F, V = 4, 16, 256
llama_kvs = [("general.architecture", STRING, gguf_string("llama")), ("llama.embedding_length", U32, u32(C)),
             ("llama.block_count", U32, u32(1)), ("llama.feed_forward_length", U32, u32(F)),
             ("llama.context_length", U32, u32(1 << 26)), ("llama.attention.head_count", U32, u32(2)),
             ("llama.attention.head_count_kv", U32, u32(2)),
             ("llama.attention.layer_norm_rms_epsilon", F32, struct.pack("<f", 1e-5))] + tokenizer
llama_tensors = [("token_embd.weight", [C, V]), ("output_norm.weight", [C]), ("blk.0.attn_norm.weight", [C]),
                 ("blk.0.attn_q.weight", [C, C]), ("blk.0.attn_k.weight", [C, C]), ("blk.0.attn_v.weight", [C, C]),
                 ("blk.0.attn_output.weight", [C, C]), ("blk.0.ffn_norm.weight", [C]),
                 ("blk.0.ffn_gate.weight", [C, F]), ("blk.0.ffn_up.weight", [C, F]), ("blk.0.ffn_down.weight", [F, C])]
put("gguf_llama_ctx_2p26.gguf", gguf(llama_kvs, llama_tensors))

# config.json: 10^9 layers (GPT-2, over the tests' 1-layer model.safetensors).
put("config_n_layer_1e9.json", json.dumps({
    "model_type": "gpt2", "vocab_size": 257, "n_positions": 8, "n_embd": 4, "n_layer": 10**9, "n_head": 2,
    "n_inner": None, "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05}, indent=1) + "\n")


# llama.c checkpoints: a tiny valid body (dim 8, hidden 16, 1 layer, 2 heads, vocab 512 as
# stories260K's tok512.bin, seq_len 4)
# under a header whose seq_len x n_layers claims gigabytes of KV cache.
def llama2c(dim, hidden, layers, heads, kv, vocab, seq, body_seq=4, body_layers=1):
    head = dim // heads
    floats = vocab * dim + body_layers * (dim + 4 * dim * dim + dim + 3 * hidden * dim) + dim + 2 * body_seq * head // 2
    return struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq) + struct.pack("<%df" % floats, *([0.01] * floats))


put("llama2c_seq_len_2p26.bin", llama2c(8, 16, 1, 2, 2, 512, 1 << 26))        # 2^26 x 1 layer x 8 x 2 x 4 B = 4 GiB
put("llama2c_layers_seq_1e9.bin", llama2c(8, 16, 4096, 2, 2, 512, 1 << 16))   # 2^16 x 4096 layers: 16 GiB

# Numbers beyond a double (nlohmann's out_of_range.406, which escaped the parse; found by the
# safetensors fuzzers): in a safetensors header, and in a sharded checkpoint's index.
h = b'{"a": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 4]}}'
h += b" " * ((8 - len(h) % 8) % 8)
put("header_number_overflow.safetensors", struct.pack("<Q", len(h)) + h + b"\0" * 4)
put("index_number_overflow.json", '{"metadata": {"total_size": 1e400}, "weight_map": {"a": "model-00001-of-00001.safetensors"}}\n')
