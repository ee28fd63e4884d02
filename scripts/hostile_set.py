#!/usr/bin/python3
"""A held-back-style set of hostile inputs (issue 40): about 100 files and command lines of the
classes the hostile rounds probed (GGUF structure, safetensors headers, shard paths, CLI extremes,
huge prompts, chat templates, tokenizer.json pipelines, convert/quantize outputs, messages files,
weights holding NaN), generated here from the small models of tests/data, each run once through
the journey binary and checked:

  - no signal (a crash shows as one), the expected exit code;
  - at most 10 s of CPU time (user + system; the wall time is shown, and a run is killed after
    60 s: the machine may be shared) and 1 GiB resident (the child's peak, from /usr/bin/time);
  - a refusal is one line on stderr, "journey: ...", under 1100 bytes, no raw control bytes;
  - nothing destroyed or left behind: every file of the case's directory is unchanged afterwards
    (bytes and kind: a FIFO stays a FIFO) and no file appears but the output the case expects.

Usage: scripts/hostile_set.py [--journey build/journey] [--data build/test-data] [-k SUBSTRING] [-v]
(needs the Release build: cmake --build build --target journey journey_tests, which unpacks the
test data). Exit status 1 when any case fails; the last line says how many passed.
"""
import argparse
import hashlib
import json
import os
import resource
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

LIMIT_S = 10.0
KILL_S = 60.0
LIMIT_RSS_KIB = 1 << 20  # 1 GiB

ap = argparse.ArgumentParser()
ap.add_argument("--journey", default="build/journey")
ap.add_argument("--data", default="build/test-data")
ap.add_argument("-k", default="", help="run only the cases whose name contains this")
ap.add_argument("-v", action="store_true", help="print every case, not only failures")
args = ap.parse_args()
JOURNEY = os.path.abspath(args.journey)
DATA = os.path.abspath(args.data)
LLAMA_GGUF = os.path.join(DATA, "models/llama3/llama3-F32.gguf")
LLAMA_HF = os.path.join(DATA, "models/llama3/hf")
LLAMA_TOK = os.path.join(DATA, "convert/llama3")
BASE_GGUF = os.path.join(DATA, "convert/base-F32.gguf")
for p in (JOURNEY, LLAMA_GGUF, LLAMA_HF, LLAMA_TOK, BASE_GGUF):
    if not os.path.exists(p):
        sys.exit("hostile_set: %s is missing (build journey and journey_tests first)" % p)


def rd(p):
    with open(p, "rb") as f:
        return f.read()


def wr(p, data):
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


# ---- GGUF: the llama3 stand-in, parsed so that a case can patch any field ------------------------
GGUF = rd(LLAMA_GGUF)
SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def parse_gguf(b):
    """Offsets of the fields a case patches: n_tensors, n_kv, each kv and each tensor info."""
    at = 24
    n_tensors, n_kv = struct.unpack_from("<QQ", b, 8)
    kvs, tensors = [], []

    def string(at):
        (n,) = struct.unpack_from("<Q", b, at)
        return b[at + 8:at + 8 + n].decode(errors="replace"), at + 8 + n

    def value(t, at):
        if t in SCALAR:
            return at + SCALAR[t]
        if t == 8:
            return string(at)[1]
        if t == 9:
            et, n = struct.unpack_from("<IQ", b, at)
            at += 12
            if et in SCALAR:
                return at + n * SCALAR[et]
            for _ in range(n):
                at = value(et, at)
            return at
        raise ValueError("type %d" % t)

    for _ in range(n_kv):
        key_at = at
        key, at = string(at)
        (t,) = struct.unpack_from("<I", b, at)
        kvs.append({"key": key, "key_at": key_at, "type_at": at, "value_at": at + 4, "type": t})
        at = value(t, at + 4)
        kvs[-1]["end"] = at
    for _ in range(n_tensors):
        name_at = at
        name, at = string(at)
        (nd,) = struct.unpack_from("<I", b, at)
        info = {"name": name, "name_at": name_at, "ndims_at": at, "dims_at": at + 4, "ndims": nd}
        at += 4 + 8 * nd
        info["type_at"], info["offset_at"] = at, at + 4
        tensors.append(info)
        at += 12
    return kvs, tensors, at


KVS, TENSORS, INFO_END = parse_gguf(GGUF)


def patch(b, at, fmt, *vals):
    b = bytearray(b)
    struct.pack_into(fmt, b, at, *vals)
    return bytes(b)


def kv(key):
    return next(k for k in KVS if k["key"] == key)


def tensor(name):
    return next(t for t in TENSORS if t["name"] == name)


# ---- safetensors -----------------------------------------------------------------------------------
def safetensors(header, data=b"", raw_len=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h) if raw_len is None else raw_len) + h + data


LLAMA_CONFIG = json.loads(rd(os.path.join(LLAMA_HF, "config.json")))


def hf_dir(d, config=None, weights=None, tokenizer=True, name="hf"):
    """A Llama 3 Hugging Face directory (the stand-in's weights and tokenizer files) in d/name."""
    out = os.path.join(d, name)
    os.makedirs(out)
    wr(os.path.join(out, "config.json"), json.dumps(LLAMA_CONFIG if config is None else config))
    if weights is None:
        shutil.copy(os.path.join(LLAMA_HF, "model.safetensors"), out)
    elif weights is not False:
        wr(os.path.join(out, "model.safetensors"), weights)
    if tokenizer:
        for f in os.listdir(LLAMA_TOK):
            shutil.copy(os.path.join(LLAMA_TOK, f), out)
    return out


def config_with(**kw):
    c = dict(LLAMA_CONFIG)
    c.update(kw)
    return c


# ---- the cases -------------------------------------------------------------------------------------
CASES = []


def case(name, exit_code, creates=(), contains=None):
    """A case: fn(d) builds its files in directory d and returns the journey arguments (and
    optionally the stdin bytes). `creates`: files it may leave in d (the outputs)."""
    def add(fn):
        CASES.append({"name": name, "fn": fn, "exit": exit_code, "creates": set(creates), "contains": contains})
        return fn
    return add


def gguf_case(name, data, cmd="info", contains=None):
    @case("gguf: " + name, 2, contains=contains)
    def _(d):
        p = wr(os.path.join(d, "m.gguf"), data)
        return [cmd, "-m", p, "-p", "hi"] if cmd == "next" else [cmd, "-m", p]


t_embd = tensor("token_embd.weight")
gguf_case("bad magic", b"GGUX" + GGUF[4:])
gguf_case("version 99", patch(GGUF, 4, "<I", 99))
gguf_case("2^40 tensors", patch(GGUF, 8, "<Q", 1 << 40))
gguf_case("2^40 key-values", patch(GGUF, 16, "<Q", 1 << 40))
gguf_case("key length 2^62", patch(GGUF, KVS[1]["key_at"], "<Q", 1 << 62))
gguf_case("value type 99", patch(GGUF, KVS[1]["type_at"], "<I", 99))
arr = next(k for k in KVS if k["type"] == 9)
gguf_case("array count 2^60", patch(GGUF, arr["value_at"] + 4, "<Q", 1 << 60))
gguf_case("array of arrays", patch(GGUF, arr["value_at"], "<I", 9))
gguf_case("tensor offset past the end", patch(GGUF, t_embd["offset_at"], "<Q", 1 << 40), cmd="next")
gguf_case("tensor offset misaligned", patch(GGUF, t_embd["offset_at"], "<Q", 3), cmd="next")
gguf_case("tensors overlap", patch(GGUF, TENSORS[1]["offset_at"], "<Q", struct.unpack_from("<Q", GGUF, TENSORS[0]["offset_at"])[0]), cmd="next")
gguf_case("tensor type 999", patch(GGUF, t_embd["type_at"], "<I", 999), cmd="next")
gguf_case("9 dimensions", patch(GGUF, t_embd["ndims_at"], "<I", 9))
gguf_case("dimension 0", patch(GGUF, t_embd["dims_at"], "<Q", 0), cmd="next")
gguf_case("dimensions overflow", patch(patch(GGUF, t_embd["dims_at"], "<Q", 1 << 40), t_embd["dims_at"] + 8, "<Q", 1 << 40), cmd="next")
same = next((a, b) for a in TENSORS for b in TENSORS if a is not b and len(a["name"]) == len(b["name"]))
gguf_case("duplicate tensor name", GGUF[:same[1]["name_at"]] + GGUF[same[0]["name_at"]:same[0]["ndims_at"]] + GGUF[same[1]["ndims_at"]:],
          cmd="next")
dup = KVS[1]
gguf_case("duplicate key", patch(GGUF, 16, "<Q", len(KVS) + 1)[:KVS[-1]["end"]] + GGUF[dup["key_at"]:dup["end"]] + GGUF[KVS[-1]["end"]:])
blk = kv("llama.block_count")
gguf_case("block_count 10^9", patch(GGUF, blk["value_at"], "<I", 10**9), cmd="next")
gguf_case("block_count 0", patch(GGUF, blk["value_at"], "<I", 0), cmd="next")
gguf_case("head_count 0", patch(GGUF, kv("llama.attention.head_count")["value_at"], "<I", 0), cmd="next")
gguf_case("head_count_kv 3 (does not divide)", patch(GGUF, kv("llama.attention.head_count_kv")["value_at"], "<I", 3), cmd="next")
gguf_case("context 2^31", patch(GGUF, kv("llama.context_length")["value_at"], "<I", 1 << 31), cmd="next")
gguf_case("epsilon NaN", patch(GGUF, kv("llama.attention.layer_norm_rms_epsilon")["value_at"], "<f", float("nan")), cmd="next")
gguf_case("rope theta -1", patch(GGUF, kv("llama.rope.freq_base")["value_at"], "<f", -1.0), cmd="next")
for frac in (0.001, 0.3, 0.9, 0.999):
    gguf_case("cut at %g" % frac, GGUF[:int(len(GGUF) * frac)], cmd="next")
gguf_case("header only", GGUF[:24])
gguf_case("empty file", b"")

# safetensors in a Hugging Face directory
ST = rd(os.path.join(LLAMA_HF, "model.safetensors"))
(ST_N,) = struct.unpack_from("<Q", ST, 0)
ST_HEADER = json.loads(ST[8:8 + ST_N])


def st_case(name, weights):
    @case("safetensors: " + name, 2)
    def _(d):
        return ["next", "-m", hf_dir(d, weights=weights), "-p", "hi"]


def st_with(fn):
    h = json.loads(json.dumps(ST_HEADER))
    fn(h)
    return safetensors(h, ST[8 + ST_N:])


first = next(k for k in ST_HEADER if k != "__metadata__")
st_case("header length past the end", patch(ST, 0, "<Q", len(ST) * 4))
st_case("header length 2^63", patch(ST, 0, "<Q", 1 << 63))
st_case("header not JSON", safetensors(b"{not json" + b" " * 100, ST[8 + ST_N:]))
st_case("header nested 100000 deep", safetensors(b"[" * 100000 + b"]" * 100000))
st_case("offsets past the data", st_with(lambda h: h[first].update(data_offsets=[0, 1 << 40])))
st_case("offsets reversed", st_with(lambda h: h[first].update(data_offsets=[100, 0])))
st_case("shape disagrees with offsets", st_with(lambda h: h[first].update(shape=[3, 3])))
st_case("dtype unknown", st_with(lambda h: h[first].update(dtype="F128")))
st_case("shape overflows", st_with(lambda h: h[first].update(shape=[1 << 40, 1 << 40])))
st_case("negative dimension", st_with(lambda h: h[first].update(shape=[-1, 4])))
st_case("tensor missing", st_with(lambda h: h.pop(first)))
st_case("empty file", b"")

# shard paths
for label, shard in [("escapes with ..", "../outside.safetensors"), ("absolute", "/etc/passwd"),
                     ("newline and escapes", "a\nb\x1b[2J.safetensors"), ("missing", "model-00009-of-00009.safetensors"),
                     ("a directory", "."), ("1 MB name", "x" * 1000000)]:
    @case("shards: " + label, 2)
    def _(d, shard=shard):
        m = hf_dir(d, weights=False)
        wr(os.path.join(d, "outside.safetensors"), ST)
        wr(os.path.join(m, "model.safetensors.index.json"), json.dumps({"weight_map": {k: shard for k in ST_HEADER if k != "__metadata__"}}))
        return ["next", "-m", m, "-p", "hi"]

# CLI extremes
for flags in (["-t", "0"], ["-t", "100000000"], ["-c", "0"], ["-c", "1099511627776"], ["-n", "-2"],
              ["-n", "99999999999999999999999"], ["--temp", "nan"], ["--temp", "-1"], ["--temp", "1e999"],
              ["--top-p", "0"], ["--top-k", "-1"], ["--min-p", "2"], ["--seed", "4294967296"], ["--repeat-penalty", "0"],
              ["--repeat-last-n", "-2"], ["--kv-type", "f8"], ["--stop", ""], ["--top-logprobs", "5"]):
    @case("cli: generate " + " ".join(flags), 1)
    def _(d, flags=flags):
        return ["generate", "-m", LLAMA_GGUF, "-p", "hi", "-n", "1"] + flags if "-n" not in flags else \
            ["generate", "-m", LLAMA_GGUF, "-p", "hi"] + flags


@case("cli: next --rows 10^12", 1)
def _(d):
    return ["next", "-m", LLAMA_GGUF, "-p", "hi", "--rows", "1000000000000"]


@case("cli: score --window 1", 1)
def _(d):
    return ["score", "-m", LLAMA_GGUF, "-p", "hello there", "--window", "1"]


# a model path that is not UTF-8, in JSON output (was nlohmann's type_error.316, exit 3)
for cmd in (["info", "--json"], ["next", "--json", "-p", "hi"], ["tokenize", "--json", "-p", "hi"], ["score", "--json", "-p", "hello"]):
    @case("cli: non-UTF-8 model path, " + " ".join(cmd[:2]), 0)
    def _(d, cmd=cmd):
        p = os.path.join(d.encode(), b"\xff\xfe.gguf")
        shutil.copy(LLAMA_GGUF, p)
        return cmd[:1] + ["-m", p.decode(errors="surrogateescape")] + cmd[1:]


# huge prompts
@case("prompt: 10 million characters to next (refused before tokenizing)", 3)
def _(d):
    return ["next", "-m", LLAMA_GGUF, "-f", wr(os.path.join(d, "p.txt"), "hello " * 1700000)]


@case("prompt: 10 million characters to next --batch (an error record)", 3)
def _(d):
    wr(os.path.join(d, "b.jsonl"), json.dumps({"prompt": "hello " * 1700000}) + "\n")
    return ["-q", "next", "-m", LLAMA_GGUF, "--batch", os.path.join(d, "b.jsonl")]


@case("cli: generate --top-logprobs 10^8 (every token at most)", 0)
def _(d):
    return ["generate", "-m", LLAMA_GGUF, "-p", "hi", "-n", "1", "--json", "--top-logprobs", "100000000"]


@case("prompt: 3 MB to tokenize", 0)
def _(d):
    return ["tokenize", "-m", LLAMA_GGUF, "-f", wr(os.path.join(d, "p.txt"), "The cat sat. " * 250000)]


@case("prompt: invalid UTF-8", 3)
def _(d):
    return ["next", "-m", LLAMA_GGUF, "-f", wr(os.path.join(d, "p.txt"), b"abc\xff\xfe\xc0def")]


@case("prompt: 100,000 special tokens", 3)
def _(d):
    return ["next", "-m", LLAMA_GGUF, "-f", wr(os.path.join(d, "p.txt"), "<|begin_of_text|>" * 100000)]


@case("prompt: /dev/zero as -f", 3)
def _(d):
    return ["next", "-m", LLAMA_GGUF, "-f", "/dev/zero"]


# chat templates (journey template FILE --messages M)
MESSAGES = json.dumps([{"role": "user", "content": "hi"}])


def tmpl_case(name, text, exit_code=2, contains=None, extra=()):
    @case("template: " + name, exit_code, contains=contains)
    def _(d):
        p = wr(os.path.join(d, "t.jinja"), text)
        return ["template", p, "--messages", wr(os.path.join(d, "m.json"), MESSAGES)] + list(extra)


def chain(first, link, n):
    return "{{ " + first + link * n + " }}"


tmpl_case("macro recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
tmpl_case("mutual macro recursion", "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}{{ a() }}")
tmpl_case("range(10^12)", "{% for i in range(1000000000000) %}x{% endfor %}")
tmpl_case("range(10^12)|list", "{{ range(1000000000000)|list|length }}")
tmpl_case("string * 10^12", "{{ 'a' * 1000000000000 }}")
tmpl_case("list * 10^12", "{{ ([1] * 1000000000000)|length }}")
tmpl_case("string doubling", "{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}")
tmpl_case("list doubling printed", "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}")
tmpl_case("list doubling compared", "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l == ns.l }}",
          exit_code=None)
tmpl_case("list doubling tojson", "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l|tojson }}")
tmpl_case("include", "{% include 'x.jinja' %}")
tmpl_case("extends", "{% extends 'x.jinja' %}")
tmpl_case("import", "{% import 'x.jinja' as x %}")
tmpl_case("200,000 '+'", chain("a", " + a", 200000))
tmpl_case("200,000 attributes", chain("a", ".b", 200000))
tmpl_case("200,000 filters", chain("x", "|trim", 200000))
tmpl_case("200,000 nested ifs", "{% if 1 %}" * 200000 + "{% endif %}" * 200000)
tmpl_case("200,000 brackets", "{{ " + "[" * 200000 + "]" * 200000 + " }}")
tmpl_case("infinite loop by steps", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
tmpl_case("tojson(indent=10^9)", "{{ messages|tojson(indent=1000000000) }}", exit_code=None)
tmpl_case("indent(10^9)", "{{ 'a\\nb'|indent(1000000000) }}")
tmpl_case("center(10^12)", "{{ 'a'|center(1000000000000) }}", exit_code=None)
tmpl_case("join of 10^6 items * 100", "{{ (['x' * 100] * 1000000)|join('y' * 1000) }}")
tmpl_case("30 MB string read 10^5 times", "{% set s = 'a' * 30000000 %}{% for i in range(100000) %}{% if s %}{% endif %}{{ s|length if i == 0 }}{% endfor %}",
          exit_code=0)
tmpl_case("split of 30 MB", "{{ ('a,' * 15000000).split(',')|length }}")
tmpl_case("unique of 10^5", "{{ range(100000)|unique|list|length }}", exit_code=0)
tmpl_case("raise_exception with escapes", "{{ raise_exception('\\x1b[2J\\nboom\\r') }}")
tmpl_case("control byte in the source", "{{ \x1b }}")
tmpl_case("unterminated string", "{{ 'abc }}")
tmpl_case("unterminated block", "{% if true %}")
tmpl_case("17 MiB template", "x" * (17 << 20))
tmpl_case("non-UTF-8 template", b"{{ '\xff\xfe' }}", exit_code=None)


@case("template: a FIFO", 2)
def _(d):
    os.mkfifo(os.path.join(d, "t.jinja"))
    return ["template", os.path.join(d, "t.jinja"), "--messages", wr(os.path.join(d, "m.json"), MESSAGES)]


@case("template: /dev/zero", 2)
def _(d):
    return ["template", "/dev/zero", "--messages", wr(os.path.join(d, "m.json"), MESSAGES)]


@case("template: a directory named chat_template.jinja", 2)
def _(d):
    m = hf_dir(d, tokenizer=True)
    os.mkdir(os.path.join(m, "chat_template.jinja"))
    return ["template", m, "--messages", wr(os.path.join(d, "m.json"), MESSAGES)]


@case("template: generation_config.json a FIFO", 2)
def _(d):
    m = hf_dir(d, tokenizer=True)
    os.remove(os.path.join(m, "generation_config.json"))
    os.mkfifo(os.path.join(m, "generation_config.json"))
    return ["template", m, "--messages", wr(os.path.join(d, "m.json"), MESSAGES)]


@case("template: --var nested 30,000 deep", 3)
def _(d):
    return ["template", wr(os.path.join(d, "t.jinja"), "{{ x }}"), "--messages", wr(os.path.join(d, "m.json"), MESSAGES),
            "--var", "x=" + "[" * 30000 + "]" * 30000]


# messages files
def msg_case(name, data, exit_code=3):
    @case("messages: " + name, exit_code)
    def _(d):
        return ["template", wr(os.path.join(d, "t.jinja"), "{{ messages|length }}"), "--messages", wr(os.path.join(d, "m.json"), data)]


msg_case("a million messages", json.dumps([{"role": "user", "content": "x"}] * 1000000))
msg_case("ill-formed UTF-8", b'[{"role": "user", "content": "\xff\xfe"}]')
msg_case("nested 100,000 deep", "[" * 100000 + "]" * 100000)
msg_case("not an array", '{"role": "user"}')
msg_case("content of the wrong type", '[{"role": "user", "content": 5}]', exit_code=None)
msg_case("40 MB", json.dumps([{"role": "user", "content": "x" * (40 << 20)}]))


@case("messages: /dev/zero", 3)
def _(d):
    return ["template", wr(os.path.join(d, "t.jinja"), "x"), "--messages", "/dev/zero"]


# tokenizer.json pipelines
TOKJ = json.loads(rd(os.path.join(LLAMA_TOK, "tokenizer.json")))


def tok_case(name, mutate, text="aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", exit_code=2):
    @case("tokenizer.json: " + name, exit_code)
    def _(d):
        t = json.loads(json.dumps(TOKJ))
        mutate(t)
        return ["tokenize", "--tokenizer-json", wr(os.path.join(d, "tokenizer.json"), json.dumps(t)), "-p", text]


def split_pattern(regex):
    return lambda t: t.update(pre_tokenizer={"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False})


tok_case("(a|aa)+c backtracking", split_pattern("(a|aa)+c"))
tok_case("(a*)*b (Oniguruma needs the b first)", split_pattern("(a*)*b"), exit_code=0)
tok_case("(.*a){20}", split_pattern("(.*a){20}"), exit_code=None)
tok_case("(\\w+\\s?)*$ on a long word", split_pattern("(\\w+\\s?)*$"), text="a" * 5000 + "!", exit_code=None)
tok_case("invalid regex", split_pattern("(unclosed"))
tok_case("Replace doubling x40", lambda t: t.update(normalizer={"type": "Sequence", "normalizers": [
    {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}] * 40}))
tok_case("decoder Replace doubling", lambda t: t.update(decoder={"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}] * 40}), exit_code=0)
tok_case("vocab id 2^40", lambda t: t["model"]["vocab"].update({"zz": 1 << 40}))
tok_case("merge of unknown tokens", lambda t: t["model"].update(merges=["qqq zzz"] + t["model"]["merges"]))
tok_case("added token of 1 MB", lambda t: t["added_tokens"].append({"id": 99999, "content": "x" * 1000000, "special": True}), exit_code=None)
tok_case("model type unknown", lambda t: t["model"].update(type="Unigram2"))
tok_case("normalizer type 5", lambda t: t.update(normalizer={"type": 5}))
tok_case("Precompiled charsmap garbage", lambda t: t.update(normalizer={"type": "Precompiled", "precompiled_charsmap": "AAAA////"}))


@case("tokenizer.json: nested 100,000 deep", 2)
def _(d):
    return ["tokenize", "--tokenizer-json", wr(os.path.join(d, "tokenizer.json"), "[" * 100000 + "]" * 100000), "-p", "x"]


# convert / quantize: outputs, and configs the loader refuses
def conv_case(name, exit_code, config=None, out=None, creates=(), pre=None, contains=None):
    @case("convert: " + name, exit_code, creates=creates, contains=contains)
    def _(d):
        m = hf_dir(d, config=config)
        if pre:
            pre(d, m)
        return ["convert", "-m", m, "-o", out(d, m) if out else os.path.join(d, "out.gguf"), "--type", "f32"]


conv_case("output is the model's weights", 1, out=lambda d, m: os.path.join(m, "model.safetensors"))
conv_case("output is config.json", 1, out=lambda d, m: os.path.join(m, "config.json"))
conv_case("output is a symlink to the weights", 1, out=lambda d, m: (os.symlink(os.path.join(m, "model.safetensors"), os.path.join(d, "l.gguf")), os.path.join(d, "l.gguf"))[1])
conv_case("output is a FIFO", 1, out=lambda d, m: (os.mkfifo(os.path.join(d, "f.gguf")), os.path.join(d, "f.gguf"))[1])
conv_case("output is a directory", 1, out=lambda d, m: d)
conv_case("output is /dev/null", 1, out=lambda d, m: "/dev/null")
conv_case("output directory missing", 1, out=lambda d, m: os.path.join(d, "no", "such", "out.gguf"))
conv_case("num_key_value_heads 0", 2, config=config_with(num_key_value_heads=0))
conv_case("num_attention_heads 0", 2, config=config_with(num_attention_heads=0))
conv_case("rms_norm_eps 0", 2, config=config_with(rms_norm_eps=0))
conv_case("vocab_size 2^31", 2, config=config_with(vocab_size=1 << 31))
conv_case("hidden_size a string", 2, config=config_with(hidden_size="128"), contains="hidden_size")
conv_case("rope_scaling a list", 2, config=config_with(rope_scaling=[1, 2]))
conv_case("rope_scaling type 5", 2, config=config_with(rope_scaling={"rope_type": 5, "factor": 2.0}), contains=None)
conv_case("num_hidden_layers 10^9", 2, config=config_with(num_hidden_layers=10**9))
conv_case("_name_or_path of 200,000 digits", 0, config=config_with(_name_or_path="1" * 200000), creates=["out.gguf"])
conv_case("tokenizer_config.json bos_token a number", 0, creates=["out.gguf"],
          pre=lambda d, m: wr(os.path.join(m, "tokenizer_config.json"), json.dumps(dict(json.loads(rd(os.path.join(LLAMA_TOK, "tokenizer_config.json"))), bos_token=5))))
conv_case("tokenizer.json post_processor type a number", 2,
          pre=lambda d, m: wr(os.path.join(m, "tokenizer.json"), json.dumps(dict(TOKJ, post_processor={"type": 7}))), contains="type")
conv_case("tokenizer.json added_tokens content a number", 2,
          pre=lambda d, m: wr(os.path.join(m, "tokenizer.json"), json.dumps(dict(TOKJ, added_tokens=[{"id": 5, "content": 5}]))), contains="content")
conv_case("added_tokens_decoder key not a number", 0, creates=["out.gguf"],
          pre=lambda d, m: wr(os.path.join(m, "tokenizer_config.json"), json.dumps({"added_tokens_decoder": {"x": {"content": "a"}}})))
conv_case("an existing output survives a failure", 2, config=config_with(num_key_value_heads=0),
          pre=lambda d, m: wr(os.path.join(d, "out.gguf"), "the previous output"))


@case("quantize: output is the input", 1)
def _(d):
    p = os.path.join(d, "m.gguf")
    shutil.copy(BASE_GGUF, p)
    return ["quantize", p, p, "q8_0"]


@case("quantize: output is a FIFO", 1)
def _(d):
    os.mkfifo(os.path.join(d, "q.gguf"))
    return ["quantize", BASE_GGUF, os.path.join(d, "q.gguf"), "q8_0"]


@case("quantize: type unknown", 1)
def _(d):
    return ["quantize", BASE_GGUF, os.path.join(d, "q.gguf"), "q3_xxs"]


# weights that hold NaN / Inf
for label, bits in (("NaN", b"\xc0\x7f"), ("Inf", b"\x80\x7f")):
    @case("weights: " + label + " in the final norm", 2, contains=label)
    def _(d, bits=bits):
        h = ST_HEADER["model.norm.weight"]
        at = 8 + ST_N + h["data_offsets"][0]
        return ["next", "-m", hf_dir(d, weights=ST[:at] + bits + ST[at + 2:]), "-p", "hello"]


# ---- running them ----------------------------------------------------------------------------------
def snapshot(d):
    """Every path under d: its kind and (for a regular file) the hash of its bytes."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    out[os.path.relpath(p, d)] = "file " + hashlib.sha256(f.read()).hexdigest()
            else:
                out[os.path.relpath(p, d)] = "mode %o" % stat.S_IFMT(st.st_mode)
    return out


def limits():
    os.setsid()
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # a runaway stops here; 1 GiB is checked by RSS
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(c, base):
    d = tempfile.mkdtemp(prefix="case-", dir=base)
    argv = c["fn"](d)
    before = snapshot(d)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", JOURNEY_MODEL="")
    with open(os.path.join(base, "out"), "wb") as out, open(os.path.join(base, "err"), "wb") as err:
        t0 = time.monotonic()
        # /usr/bin/time (a small process) forks journey: ru_maxrss of a child of this Python process
        # would count Python's own pages from before exec.
        timef = os.path.join(base, "time")
        p = subprocess.Popen(["/usr/bin/time", "-q", "-o", timef, "-f", "%U %S %M"] + [JOURNEY] + argv, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=err, env=env, preexec_fn=limits)
        killed = []
        timer = threading.Timer(KILL_S, lambda: (killed.append(1), os.killpg(p.pid, signal.SIGKILL)))
        timer.start()
        _, status, _ = os.wait4(p.pid, 0)
        timer.cancel()
        elapsed = time.monotonic() - t0
    report = rd(timef).decode().split("\n")
    fields = report[-2].split() if len(report) > 1 else []
    cpu = float(fields[0]) + float(fields[1]) if len(fields) == 3 else 0.0
    maxrss = int(fields[2]) if len(fields) == 3 else 0
    signalled = [l for l in report if l.startswith("Command terminated by signal")]
    if os.WIFEXITED(status) and signalled:  # time exits 128 + N for a child killed by signal N
        status = int(signalled[0].split()[-1])
    err_text = rd(os.path.join(base, "err"))
    after = snapshot(d)
    problems = []
    if killed:
        problems.append("killed after %.0f s" % KILL_S)
    elif os.WIFSIGNALED(status):
        problems.append("signal %d" % os.WTERMSIG(status))
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    if code is not None and c["exit"] is not None and code != c["exit"]:
        problems.append("exit %d, expected %d" % (code, c["exit"]))
    if code is not None and c["exit"] is None and code not in (0, 2, 3):
        problems.append("exit %d" % code)
    if cpu > LIMIT_S:
        problems.append("%.1f s of CPU" % cpu)
    if maxrss > LIMIT_RSS_KIB:
        problems.append("%d MiB resident" % (maxrss // 1024))
    if code not in (0, None):
        lines = err_text.split(b"\n")
        if not (len(lines) == 2 and lines[1] == b"" and lines[0].startswith(b"journey: ")):
            problems.append("stderr is not one line: %r" % err_text[:300])
        if len(err_text) >= 1100 or any(b < 0x20 and b not in (0x0a, 0x09) for b in err_text):
            problems.append("stderr long or holding control bytes")
        if c["contains"] and c["contains"].encode() not in err_text:
            problems.append("stderr does not name %r" % c["contains"])
    for path, kind in before.items():
        if after.get(path) != kind:
            problems.append("%s changed (%s -> %s)" % (path, kind[:20], (after.get(path) or "gone")[:20]))
    for path in after:
        if path not in before and path not in c["creates"]:
            problems.append("%s left behind" % path)
    shutil.rmtree(d, ignore_errors=True)
    return problems, elapsed, cpu, maxrss, code, err_text


def main():
    base = tempfile.mkdtemp(prefix="journey-hostile-")
    failed = ran = 0
    worst_t = worst_rss = 0
    try:
        for c in CASES:
            if args.k not in c["name"]:
                continue
            ran += 1
            problems, wall, t, rss, code, err = run(c, base)
            worst_t, worst_rss = max(worst_t, t), max(worst_rss, rss)
            if problems:
                failed += 1
            if problems or args.v:
                print("%-4s %-62s exit %-4s %5.2f s CPU %5.2f s wall %5d MiB  %s" % ("FAIL" if problems else "ok", c["name"][:62], code, t, wall, rss // 1024,
                      "; ".join(problems) if problems else err.decode(errors="replace").strip()[:150]))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("hostile_set: %d of %d cases held (most CPU %.2f s, most memory %d MiB)" % (ran - failed, ran, worst_t, worst_rss // 1024))
    return 1 if failed else 0


sys.exit(main())
