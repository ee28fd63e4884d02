#!/usr/bin/env python3
"""Seed corpora for the libFuzzer harnesses of tests/fuzz: small, valid files of each format,
cut from the real files in the repository (models/default, models/gpt2-tokenizer,
tests/data/models/stories260K/tok512.bin) or written with the format's own layout. Standard library only.

usage: make_seeds.py REPO_DIR OUT_DIR   (writes OUT_DIR/<harness>/<seed>)
"""
import json
import os
import struct
import sys

repo, out = sys.argv[1], sys.argv[2]


def put(harness, name, data):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# GPT-2's vocabulary, cut to its 256 byte tokens and the tokens its first 64 merges make.
with open(os.path.join(repo, "models/gpt2-tokenizer/vocab.json"), encoding="utf-8") as f:
    gpt2_vocab = json.load(f)
with open(os.path.join(repo, "models/gpt2-tokenizer/merges.txt"), encoding="utf-8") as f:
    merge_lines = [l.rstrip("\n") for l in f][1:65]
small = {t: i for t, i in gpt2_vocab.items() if i < 256}
for m in merge_lines:
    a, b = m.split(" ")
    small[a + b] = len(small)
small["<|endoftext|>"] = len(small)
put("fuzz_vocab_merges", "gpt2_small", json.dumps(small) + "\0#version: 0.2\n" + "\n".join(merge_lines) + "\n")
put("fuzz_vocab_merges", "escapes", json.dumps({"\\u0041": 0, "a": 1}, ensure_ascii=True) + "\0a b\n")

byte_level = {
    "version": "1.0",
    "added_tokens": [{"id": small["<|endoftext|>"], "content": "<|endoftext|>", "single_word": False,
                      "lstrip": False, "rstrip": False, "normalized": True, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": None,
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "vocab": small, "merges": merge_lines},
}
put("fuzz_tokenizer_json", "byte_level", json.dumps(byte_level))
spm_vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
for b in range(256):
    spm_vocab["<0x%02X>" % b] = 3 + b
for piece in ["\u2581", "a", "b", "\u2581a", "ab"]:
    spm_vocab[piece] = len(spm_vocab)
spm = {
    "version": "1.0",
    "added_tokens": [{"id": 1, "content": "<s>", "special": True}, {"id": 2, "content": "</s>", "special": True}],
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                       {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "pre_tokenizer": None,
    "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                                                {"Sequence": {"id": "A", "type_id": 0}}]},
    "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True,
              "vocab": spm_vocab, "merges": ["\u2581 a", "a b"]},
}
put("fuzz_tokenizer_json", "spm", json.dumps(spm))

with open(os.path.join(repo, "models/default/config.json"), "rb") as f:
    put("fuzz_config_json", "default_gpt2", f.read())
put("fuzz_config_json", "llama", json.dumps({
    "model_type": "llama", "vocab_size": 512, "max_position_embeddings": 512, "hidden_size": 64,
    "num_hidden_layers": 5, "num_attention_heads": 8, "num_key_value_heads": 4, "intermediate_size": 172,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True, "hidden_act": "silu",
    "rope_scaling": None, "head_dim": 8}))


def safetensors(tensors):
    """tensors: [(name, shape, float values)] -> file bytes."""
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, shape, values in tensors:
        raw = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


put("fuzz_safetensors", "two", safetensors([("a", [2, 3], [0.5] * 6), ("b", [], [1.0])]))
put("fuzz_safetensors_index", "index", json.dumps(
    {"metadata": {"total_size": 8}, "weight_map": {"a": "model-00001-of-00001.safetensors"}}))

# llama2.c: dim 8, hidden 16, 1 layer, 2 heads, 2 kv heads, vocab 16 (shared classifier), seq_len 4.
dim, hidden, layers, heads, kv, vocab, seq = 8, 16, 1, 2, 2, 16, 4
head = dim // heads
floats = (vocab * dim + layers * (dim + 4 * dim * dim + dim + 3 * hidden * dim) + dim + 2 * seq * head // 2)
put("fuzz_llama2c", "tiny", struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq) +
    struct.pack("<%df" % floats, *[0.01 * (i % 7) for i in range(floats)]))
put("fuzz_llama2c", "tiny_unshared", struct.pack("<7i", dim, hidden, layers, heads, kv, -vocab, seq) +
    struct.pack("<%df" % (floats + vocab * dim), *[0.02] * (floats + vocab * dim)))

with open(os.path.join(repo, "tests/data/models/stories260K/tok512.bin"), "rb") as f:
    put("fuzz_tokenizer_bin", "tok512", f.read())


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf(kvs, tensors):
    """kvs: [(key, type, packed value)]; tensors: [(name, ne, float values)] -> GGUF v3 bytes."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, t, v in kvs:
        out += gguf_string(key) + struct.pack("<I", t) + v
    offset, data = 0, b""
    for name, ne, values in tensors:
        out += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
        out += struct.pack("<IQ", 0, offset)  # F32
        raw = struct.pack("<%df" % len(values), *values)
        raw += b"\0" * ((32 - len(raw) % 32) % 32)
        data += raw
        offset += len(raw)
    out += b"\0" * ((32 - len(out) % 32) % 32)
    return out + data


U32, F32, STRING, ARRAY = 4, 6, 8, 9
byte_tokens = [t for t, i in sorted(small.items(), key=lambda kv: kv[1])][:256]
strings = lambda xs: struct.pack("<IQ", STRING, len(xs)) + b"".join(gguf_string(x) for x in xs)
C, F, V, N = 4, 16, 256, 8
kvs = [("general.architecture", STRING, gguf_string("gpt2")), ("gpt2.embedding_length", U32, struct.pack("<I", C)),
       ("gpt2.block_count", U32, struct.pack("<I", 1)), ("gpt2.feed_forward_length", U32, struct.pack("<I", F)),
       ("gpt2.context_length", U32, struct.pack("<I", N)), ("gpt2.attention.head_count", U32, struct.pack("<I", 2)),
       ("gpt2.attention.layer_norm_epsilon", F32, struct.pack("<f", 1e-5)),
       ("tokenizer.ggml.model", STRING, gguf_string("gpt2")),
       ("tokenizer.ggml.tokens", ARRAY, strings(byte_tokens)), ("tokenizer.ggml.merges", ARRAY, strings([]))]
tensors = [("token_embd.weight", [C, V]), ("position_embd.weight", [C, N]), ("output_norm.weight", [C]),
           ("output_norm.bias", [C]), ("blk.0.attn_norm.weight", [C]), ("blk.0.attn_norm.bias", [C]),
           ("blk.0.attn_qkv.weight", [C, 3 * C]), ("blk.0.attn_qkv.bias", [3 * C]),
           ("blk.0.attn_output.weight", [C, C]), ("blk.0.attn_output.bias", [C]), ("blk.0.ffn_norm.weight", [C]),
           ("blk.0.ffn_norm.bias", [C]), ("blk.0.ffn_up.weight", [C, F]), ("blk.0.ffn_up.bias", [F]),
           ("blk.0.ffn_down.weight", [F, C]), ("blk.0.ffn_down.bias", [C])]
put("fuzz_gguf", "gpt2_tiny", gguf(kvs, [(n, ne, [0.01] * eval("*".join(map(str, ne)))) for n, ne in tensors]))

for harness in ("fuzz_bpe_gpt2", "fuzz_spm"):
    put(harness, "english", "Hello world, it's 2024! Once upon a time, there was a little girl.\n")
    put(harness, "special", "<|endoftext|><s></s> <unk>\u2581x")
    put(harness, "unicode", "na\u00efve caf\u00e9 \u65e5\u672c\u8a9e \U0001f600 \u00a0\u2028\r\n\t  x")
    put(harness, "bytes", b"\xff\xfe\x00\x80abc\xe2\x82")

# Chat templates: the real templates of tests/data/chat_templates (Llama 3.x, Qwen, Gemma, Phi,
# Mistral, Granite, SmolLM, DeepSeek, Zephyr), plus a few small ones that use each construct.
tdir = os.path.join(repo, "tests/data/chat_templates/templates")
for name in sorted(os.listdir(tdir)):
    with open(os.path.join(tdir, name), "rb") as f:
        put("fuzz_chat_template", name, f.read())
put("fuzz_chat_template", "constructs",
    "{%- macro m(a, b=2) -%}{{ a ~ b }}{%- endmacro -%}{% set ns = namespace(n=0) %}"
    "{% for x in messages if x.role != 'tool' %}{% set ns.n = ns.n + 1 %}{{ loop.index }}:{{ m(x.role) }}"
    "{{ x.content | tojson if x.content is not string else x.content | trim | upper }}"
    "{% if loop.last %}{{ '!' * 3 }}{% elif loop.first %}{% continue %}{% else %}{{ [1, 2][0] }}{% endif %}{% endfor %}"
    "{{ ns.n }}{{ messages | length }}{{ messages[0]['content'][2:5] }}{{ 'a,b' .split(',') | join('-') }}"
    "{% if add_generation_prompt %}{{ bos_token }}{% endif %}{{ raise_exception('x') if false }}{{ strftime_now('%Y') }}")
put("fuzz_chat_template", "calls",
    "{% filter upper %}{% call(x) m2() %}{{ x }}{% endcall %}{% endfilter %}{% macro m2() %}{{ caller(1) }}{% endmacro %}"
    "{{ {'a': 1, 'b': [1, 2.5, none, true]} | tojson(indent=2) }}{{ range(3) | list | sum }}{{ 'x' in 'xy' }}"
    "{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | first }}{% generation %}g{% endgeneration %}")

# Hugging Face pipelines with real vocabularies: the first byte picks the tokenizer (the order of
# fuzz_hf_pipeline.cpp), the texts are those of each tokenizer's reference cases.
import tarfile
for index, name in enumerate(["llama3", "qwen2", "mistral-v0.3", "gptneox", "starcoder"]):
    with tarfile.open(os.path.join(repo, "tests/data/tokenizers", name + ".tar.xz")) as tar:
        cases = json.load(tar.extractfile(name + "/cases.json"))["cases"]
    for k, case in enumerate(cases[:12]):
        put("fuzz_hf_pipeline", "%s_%02d" % (name, k), bytes([index]) + case["text"].encode())

# convert's readers (fuzz_convert_config): the tiny Llama the harness writes (Llama 3's config
# cut to its shapes), once with tokenizer_config.json after a NUL byte; the config.json of each
# model of tests/data/models (most refused: their tensors are not the harness's); the hostile
# configs of tests/data/hostile.
with tarfile.open(os.path.join(repo, "tests/data/models/llama3/model.tar.xz")) as tar:
    tiny = json.load(tar.extractfile("hf/config.json"))
tiny.update(hidden_size=16, num_attention_heads=2, num_key_value_heads=1, head_dim=8, intermediate_size=32,
            num_hidden_layers=1, max_position_embeddings=256)
put("fuzz_convert_config", "tiny_llama3", json.dumps(tiny, indent=1))
put("fuzz_convert_config", "tiny_llama2", json.dumps(dict(tiny, rope_scaling=None, rope_theta=10000.0, _name_or_path="org/Tiny-Llama-1.1B-chat-v0.3")))
with open(os.path.join(repo, "tests/data/convert/llama3/tokenizer_config.json"), "rb") as f:
    put("fuzz_convert_config", "tiny_tokenizer_config", json.dumps(tiny).encode() + b"\0" + f.read())
for name in sorted(os.listdir(os.path.join(repo, "tests/data/models"))):
    archive = os.path.join(repo, "tests/data/models", name, "model.tar.xz")
    if not os.path.exists(archive):
        continue
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.endswith("config.json") and member.size < 16384:
                put("fuzz_convert_config", name + "_" + member.name.replace("/", "_"), tar.extractfile(member).read())
hostile = os.path.join(repo, "tests/data/hostile")
for name in sorted(os.listdir(hostile)):
    with open(os.path.join(hostile, name), "rb") as f:
        data = f.read()
    if name.startswith("config_"):
        put("fuzz_convert_config", name, data)
        put("fuzz_config_json", name, data)
    elif name.startswith("tokenizer_"):  # the regex, normalizer and number bombs of issues 38-40
        put("fuzz_tokenizer_json", name, data)
    elif name.endswith(".jinja"):
        put("fuzz_chat_template", name, data)
