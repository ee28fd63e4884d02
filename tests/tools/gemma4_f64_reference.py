#!/usr/bin/env python3
"""A float64 reference of Gemma 4's text model (Gemma4ForConditionalGeneration's language model,
transformers' Gemma4TextModel + Gemma4ForCausalLM's soft-capped head), written from transformers'
modeling_gemma4.py and modeling_rope_utils.py (the "proportional" rope), not from journey.

Independent of journey and of llama.cpp: numpy only, weights read from the checkpoint's
safetensors (BF16 widened exactly), every operation in float64. It answers one question, issue 36:
how far are journey and llama.cpp from the model itself on the gemma4 fixture, and is the whole of
llama.cpp's distance its float16 GELU table?

--gelu exact   : gelu_pytorch_tanh, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), in float64.
--gelu ggml-f16: as ggml-cpu computes GELU (ggml/src/ggml-cpu/vec.h, GGML_GELU_FP16 defined):
                 x (float32) <= -10 -> 0; >= 10 -> x; else x rounded to float16 (round to nearest
                 even, as _cvtss_sh(x, 0)) indexes ggml_table_gelu_f16, whose entries are
                 fp16(ggml_gelu_f32(h)) (ggml-cpu.c, ggml_cpu_init). Used where llama.cpp's graph
                 (src/models/gemma4.cpp) uses it: the MLP's ggml_geglu_split (ggml_vec_geglu_f32:
                 table(gate) * up) and the per-layer-embedding gate's ggml_gelu (ggml_vec_gelu_f32).
                 Everything else stays float64.

  /usr/bin/python3 tests/tools/gemma4_f64_reference.py HF_DIR EXPECT_JSON [--gelu MODE] [--greedy N]
      [--dtype float32]   (the same pass in float32: the float32 rounding floor of this model)

prints JSON: for each case of EXPECT_JSON (its "ids"), the reference's top-20 next-token
log-probabilities after the last id and, with --greedy N, its N greedy tokens ("greedyN", argmax,
lowest id on ties; each step a full float64 forward of the sequence so far) with the top-2 margin
at each step ("greedyN_margins"), in the keys of llama.cpp's expect.json.
"""
import argparse
import hashlib
import json
import math
import struct
import sys

import numpy as np

DTYPE = np.float64  # --dtype float32 runs the same pass in float32 (numpy keeps float32 with Python scalars)


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():  # widened exactly to float64 (--dtype float32: to float32)
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = data[a:b]
        if t["dtype"] == "BF16":
            u = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            v = u.view(np.float32)
        elif t["dtype"] == "F32":
            v = np.frombuffer(raw, dtype=np.float32)
        elif t["dtype"] == "F16":
            v = np.frombuffer(raw, dtype=np.float16)
        else:
            raise SystemExit(f"{path}: tensor {name}: dtype {t['dtype']} not read")
        out[name] = v.astype(DTYPE).reshape(t["shape"])
    return out


# ---- GELU: exact, or ggml-cpu's float16 table ----------------------------------------------------

def gelu_exact(x):  # transformers' gelu_pytorch_tanh (torch.nn.functional.gelu(approximate="tanh"))
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _ggml_gelu_table():
    # ggml_table_gelu_f16[i] = fp16(ggml_gelu_f32(fp32(half i))), ggml_gelu_f32 in float32:
    # 0.5f*x*(1.0f + tanhf(SQRT_2_OVER_PI*x*(1.0f + GELU_COEF_A*x*x)))
    h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
    f = np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        g = f(0.5) * h * (f(1.0) + np.tanh(f(0.79788456080286535587989211986876) * h * (f(1.0) + f(0.044715) * h * h)))
    return g.astype(np.float16)


_TABLE = None


def gelu_ggml_f16(x):
    global _TABLE
    if _TABLE is None:
        _TABLE = _ggml_gelu_table()
    x32 = x.astype(np.float32)  # ggml's tensors are float32
    idx = x32.astype(np.float16).view(np.uint16)  # GGML_CPU_FP32_TO_FP16: round to nearest even
    y = _TABLE[idx].astype(np.float64)
    return np.where(x32 <= -10.0, 0.0, np.where(x32 >= 10.0, x32.astype(np.float64), y))


# ---- the model -----------------------------------------------------------------------------------

def rmsnorm(x, w, eps):  # Gemma4RMSNorm: x * (mean(x^2) + eps)^-0.5 [* w] (the weight as stored, no +1)
    y = x * (np.mean(x * x, axis=-1, keepdims=True) + eps) ** -0.5
    return y if w is None else y * w


def rope_tables(inv_freq, T):  # Gemma4TextRotaryEmbedding: emb = cat(freqs, freqs)
    freqs = (np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]).astype(DTYPE)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_rope(x, cos, sin):  # x [T, heads, D]; rotate_half pairs i with i + D/2
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


class Gemma4:
    def __init__(self, hf_dir, gelu):
        cfg = json.load(open(f"{hf_dir}/config.json"))
        self.c = cfg.get("text_config", cfg)
        c = self.c
        for key, ok in (("attention_k_eq_v", False), ("enable_moe_block", False), ("hidden_activation", "gelu_pytorch_tanh"),
                        ("attention_bias", False)):
            if c.get(key, ok) != ok:
                raise SystemExit(f"config.json: {key} = {c.get(key)} is not modelled by this reference")
        w = load_safetensors(f"{hf_dir}/model.safetensors")
        prefix = "model.language_model." if any(k.startswith("model.language_model.") for k in w) else "model."
        self.w = {k[len(prefix):]: v for k, v in w.items() if k.startswith(prefix)}
        self.head = w.get("lm_head.weight", self.w["embed_tokens.weight"])  # tied
        self.gelu = gelu_exact if gelu == "exact" else gelu_ggml_f16
        self.eps = c["rms_norm_eps"]

    def inv_freq(self, layer_type):
        c, rp = self.c, self.c["rope_parameters"][layer_type]
        if rp["rope_type"] == "default":  # compute_default_rope_parameters: head_dim, all of it
            dim = c["head_dim"]
            return 1.0 / rp["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float64) / dim)
        if rp["rope_type"] == "proportional":  # _compute_proportional_rope_parameters, head_dim_key global_head_dim
            hd = c["global_head_dim"]
            angles = int(rp.get("partial_rotary_factor", 1.0) * hd // 2)
            rot = 1.0 / rp["rope_theta"] ** (np.arange(0, 2 * angles, 2, dtype=np.float64) / hd)
            return np.concatenate([rot, np.zeros(hd // 2 - angles)]) / rp.get("factor", 1.0)
        raise SystemExit(f"config.json: rope_type {rp['rope_type']} is not modelled by this reference")

    def logits(self, ids):
        c, w, eps = self.c, self.w, self.eps
        T, C, L = len(ids), c["hidden_size"], c["num_hidden_layers"]
        P, H, Hkv = c["hidden_size_per_layer_input"], c["num_attention_heads"], c["num_key_value_heads"]
        ids = np.asarray(ids)
        # Gemma4TextScaledWordEmbedding: x * sqrt(C) (the scale rounded to the weights' dtype in
        # transformers; sqrt(64) = 8 and sqrt(16) = 4 are exact in BF16)
        x = w["embed_tokens.weight"][ids] * C ** 0.5
        # Per-layer inputs: get_per_layer_inputs + project_per_layer_inputs
        ple_tok = (w["embed_tokens_per_layer.weight"][ids] * P ** 0.5).reshape(T, L, P)
        proj = (x @ w["per_layer_model_projection.weight"].T) * C ** -0.5
        proj = rmsnorm(proj.reshape(T, L, P), w["per_layer_projection_norm.weight"], eps)
        per_layer = (proj + ple_tok) * 2.0 ** -0.5
        types = c["layer_types"]
        first_shared = L - c.get("num_kv_shared_layers", 0)
        prev = types[:first_shared]
        rope = {t: rope_tables(self.inv_freq(t), T) for t in set(types)}
        shared = {}
        i = np.arange(T)[:, None]
        j = np.arange(T)[None, :]
        for l in range(L):
            p = f"layers.{l}."
            typ = types[l]
            sliding = typ == "sliding_attention"
            D = c["head_dim"] if sliding or not c.get("global_head_dim") else c["global_head_dim"]
            cos, sin = rope[typ]
            # attention (Gemma4TextAttention): q/k norms per head, rope, v norm without weight, scaling 1
            h = rmsnorm(x, w[p + "input_layernorm.weight"], eps)
            q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, D)
            q = apply_rope(rmsnorm(q, w[p + "self_attn.q_norm.weight"], eps), cos, sin)
            if l >= first_shared:  # KV-shared layer: the last non-shared layer of its type's keys and values
                k, v = shared[typ]
            else:
                k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(T, Hkv, D)
                k = apply_rope(rmsnorm(k, w[p + "self_attn.k_norm.weight"], eps), cos, sin)
                v = rmsnorm((h @ w[p + "self_attn.v_proj.weight"].T).reshape(T, Hkv, D), None, eps)
                if l == len(prev) - 1 - prev[::-1].index(typ):  # store_full_length_kv
                    shared[typ] = (k, v)
            visible = j <= i
            if sliding:  # sliding_window_causal_mask: kv_idx > q_idx - sliding_window
                visible &= j > i - c["sliding_window"]
            out = np.empty((T, H, D), dtype=DTYPE)
            for hh in range(H):
                kv = hh // (H // Hkv)  # repeat_kv
                s = q[:, hh, :] @ k[:, kv, :].T * 1.0
                s = np.where(visible, s, -np.inf)
                s = np.exp(s - s.max(axis=1, keepdims=True))
                out[:, hh, :] = (s / s.sum(axis=1, keepdims=True)) @ v[:, kv, :]
            a = out.reshape(T, H * D) @ w[p + "self_attn.o_proj.weight"].T
            x = x + rmsnorm(a, w[p + "post_attention_layernorm.weight"], eps)
            # MLP (Gemma4TextMLP): down(act(gate(h)) * up(h)), post-norm, residual
            h = rmsnorm(x, w[p + "pre_feedforward_layernorm.weight"], eps)
            m = self.gelu(h @ w[p + "mlp.gate_proj.weight"].T) * (h @ w[p + "mlp.up_proj.weight"].T)
            m = m @ w[p + "mlp.down_proj.weight"].T
            x = x + rmsnorm(m, w[p + "post_feedforward_layernorm.weight"], eps)
            # per-layer input: residual + post_norm(proj(act(gate(x)) * per_layer_input))
            g = self.gelu(x @ w[p + "per_layer_input_gate.weight"].T) * per_layer[:, l, :]
            g = g @ w[p + "per_layer_projection.weight"].T
            x = x + rmsnorm(g, w[p + "post_per_layer_input_norm.weight"], eps)
            x = x * w[p + "layer_scalar"][0]
        x = rmsnorm(x[-1], w["norm.weight"], eps)
        z = x @ self.head.T
        cap = c.get("final_logit_softcapping")
        return cap * np.tanh(z / cap) if cap else z


def log_softmax(z):
    m = z.max()
    return z - (m + math.log(np.exp(z - m).sum()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hf_dir")
    ap.add_argument("expect_json")
    ap.add_argument("--gelu", choices=["exact", "ggml-f16"], default="exact")
    ap.add_argument("--greedy", type=int, default=0)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                    help="float32: the same pass in float32, to measure the float32 rounding floor")
    a = ap.parse_args()
    global DTYPE
    DTYPE = np.dtype(a.dtype).type
    model = Gemma4(a.hf_dir, a.gelu)
    cases = []
    for cs in json.load(open(a.expect_json))["cases"]:
        ids = list(cs["ids"])
        lp = log_softmax(model.logits(ids))
        top = np.argsort(-lp, kind="stable")[:20]
        out = {"name": cs["name"], "ids": ids, "top20": [{"id": int(t), "logprob": float(lp[t])} for t in top]}
        if a.greedy:
            seq, greedy, margins = list(ids), [], []
            z = lp
            for _ in range(a.greedy):
                order = np.argsort(-z, kind="stable")
                greedy.append(int(order[0]))
                margins.append(float(z[order[0]] - z[order[1]]))
                seq.append(int(order[0]))
                if len(greedy) < a.greedy:
                    z = log_softmax(model.logits(seq))
            out[f"greedy{a.greedy}"], out[f"greedy{a.greedy}_margins"] = greedy, margins
        cases.append(out)
    sha = hashlib.sha256(open(f"{a.hf_dir}/model.safetensors", "rb").read()).hexdigest()
    json.dump({"description": "float64 reference of Gemma 4's text model (tests/tools/gemma4_f64_reference.py)",
               "gelu": a.gelu, "dtype": a.dtype, "model_safetensors_sha256": sha, "cases": cases}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
