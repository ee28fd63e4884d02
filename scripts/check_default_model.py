#!/usr/bin/python3
"""Check models/default independently of PyTorch: read config.json and model.safetensors by hand,
run GPT-2 in float64 NumPy on the prompts of expected.json, and compare the last-position logits
and the prompt log-probs (the same comparison journey's C++ test makes, tolerance 1e-4).
Also checks that the BPE of vocab.json/merges.txt gives the stored ids.

    /usr/bin/python3 scripts/check_default_model.py [models/default]
"""
import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_default_model import GPT2Encoder, load_tokenizer  # noqa: E402

HF_NAMES = ["wte.weight", "wpe.weight", "ln_f.weight", "ln_f.bias"]
BLOCK_NAMES = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
               "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
               "mlp.c_proj.weight", "mlp.c_proj.bias"]


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", name
        a, b = info["data_offsets"]
        arr = np.frombuffer(raw[base + a:base + b], dtype="<f4").reshape(info["shape"])
        out[name] = arr.astype(np.float64)
    return out


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def forward(W, cfg, ids):
    d, H, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    T = len(ids)
    x = W["wte.weight"][ids] + W["wpe.weight"][:T]
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    for i in range(cfg["n_layer"]):
        p = lambda n: W[f"h.{i}.{n}"]  # noqa: E731
        h = layer_norm(x, p("ln_1.weight"), p("ln_1.bias"), eps)
        qkv = h @ p("attn.c_attn.weight") + p("attn.c_attn.bias")
        q, k, v = np.split(qkv, 3, axis=-1)
        hd = d // H
        q = q.reshape(T, H, hd).transpose(1, 0, 2)
        k = k.reshape(T, H, hd).transpose(1, 0, 2)
        v = v.reshape(T, H, hd).transpose(1, 0, 2)
        att = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        att[:, mask] = -np.inf
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(1, 0, 2).reshape(T, d)
        x = x + y @ p("attn.c_proj.weight") + p("attn.c_proj.bias")
        h = layer_norm(x, p("ln_2.weight"), p("ln_2.bias"), eps)
        h = h @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias")
        h = 0.5 * h * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h ** 3)))
        x = x + h @ p("mlp.c_proj.weight") + p("mlp.c_proj.bias")
    x = layer_norm(x, W["ln_f.weight"], W["ln_f.bias"], eps)
    return x @ W["wte.weight"].T


def main():
    mdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "models", "default")
    cfg = json.load(open(os.path.join(mdir, "config.json")))
    W = read_safetensors(os.path.join(mdir, "model.safetensors"))
    want = set(HF_NAMES) | {f"h.{i}.{n}" for i in range(cfg["n_layer"]) for n in BLOCK_NAMES}
    assert set(W) == want, f"tensor names differ: {sorted(set(W) ^ want)}"
    d, V = cfg["n_embd"], cfg["vocab_size"]
    assert W["wte.weight"].shape == (V, d) and W["wpe.weight"].shape == (cfg["n_positions"], d)
    assert W["h.0.attn.c_attn.weight"].shape == (d, 3 * d) and W["h.0.mlp.c_fc.weight"].shape == (d, 4 * d)
    vocab, merges = load_tokenizer(mdir)
    assert len(vocab) == V and vocab["<|endoftext|>"] == V - 1 == cfg["eos_token_id"]
    enc = GPT2Encoder(vocab, merges)
    exp = json.load(open(os.path.join(mdir, "expected.json")))
    worst = 0.0
    for p in exp["prompts"]:
        ids = enc.encode(p["text"])
        assert ids == p["ids"], (p["text"], ids, p["ids"])
        logits = forward(W, cfg, ids)
        dl = np.abs(logits[-1] - np.array(p["last_logits"])).max()
        lse = np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1)) + logits.max(-1)
        lp = logits[np.arange(len(ids) - 1), ids[1:]] - lse[:-1]
        dp = np.abs(lp - np.array(p["logprobs"])).max() if len(ids) > 1 else 0.0
        worst = max(worst, dl, dp)
        print(f"{len(ids):3d} tokens  max|dlogit| {dl:.2e}  max|dlogprob| {dp:.2e}  argmax {int(logits[-1].argmax())}"
              f" (expected {p['last_argmax']})  {p['text'][:50]!r}")
    print(f"worst difference {worst:.2e}: {'OK' if worst < 1e-4 else 'FAIL'}")
    sys.exit(0 if worst < 1e-4 else 1)


if __name__ == "__main__":
    main()
