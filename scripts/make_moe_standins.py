#!/usr/bin/python3
"""Tiny random-weight Hugging Face directories standing in for Mixtral and OLMoE (issue 34).

    /usr/bin/python3 scripts/make_moe_standins.py FIXTURES OUT

FIXTURES is the shared fixtures folder (its models/mistral/hf and models/gpt2/hf lend their
tokenizer files); OUT/<family>/hf gets config.json (the real model's keys, sizes shrunk: the real
values are in OUT/<family>/STANDIN.json), model.safetensors (BF16, the real tensor names: experts
one tensor each) and the tokenizer files. numpy only; the weights are drawn with fixed seeds.
"""
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np


def bf16(a):
    """float32 -> bfloat16 bits, round to nearest even (as torch's .to(torch.bfloat16))."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    r = ((u >> 16) & 1) + 0x7FFF
    return ((u + r) >> 16).astype(np.uint16)


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in sorted(tensors, key=lambda t: t[0]):  # by name, as the safetensors library writes
        b = bf16(a).tobytes()
        header[name] = {"dtype": "BF16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def draw(rng, shape, std):
    return (rng.standard_normal(shape) * std).astype(np.float32)


def norm(rng, n):
    return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)


def mixtral(rng, c):
    C, H, Hkv, F, E, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"],
                          c["num_local_experts"], c["vocab_size"])
    D = C // H
    t = [("model.embed_tokens.weight", draw(rng, (V, C), 1.0))]
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        t += [(p + "input_layernorm.weight", norm(rng, C)),
              (p + "self_attn.q_proj.weight", draw(rng, (H * D, C), 0.2)),
              (p + "self_attn.k_proj.weight", draw(rng, (Hkv * D, C), 0.2)),
              (p + "self_attn.v_proj.weight", draw(rng, (Hkv * D, C), 0.15)),
              (p + "self_attn.o_proj.weight", draw(rng, (C, H * D), 0.15)),
              (p + "post_attention_layernorm.weight", norm(rng, C)),
              (p + "block_sparse_moe.gate.weight", draw(rng, (E, C), 0.3))]
        for e in range(E):
            q = p + f"block_sparse_moe.experts.{e}."
            t += [(q + "w1.weight", draw(rng, (F, C), 0.2)), (q + "w2.weight", draw(rng, (C, F), 0.2)),
                  (q + "w3.weight", draw(rng, (F, C), 0.2))]
    t += [("model.norm.weight", norm(rng, C)), ("lm_head.weight", draw(rng, (V, C), 0.25))]
    return t


def olmoe(rng, c):
    C, H, Hkv, F, E, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"],
                          c["num_experts"], c["vocab_size"])
    D = C // H
    t = [("model.embed_tokens.weight", draw(rng, (V, C), 1.0))]
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        t += [(p + "input_layernorm.weight", norm(rng, C)),
              (p + "self_attn.q_proj.weight", draw(rng, (H * D, C), 0.2)),
              (p + "self_attn.k_proj.weight", draw(rng, (Hkv * D, C), 0.2)),
              (p + "self_attn.v_proj.weight", draw(rng, (Hkv * D, C), 0.15)),
              (p + "self_attn.o_proj.weight", draw(rng, (C, H * D), 0.15)),
              (p + "self_attn.q_norm.weight", norm(rng, H * D)),
              (p + "self_attn.k_norm.weight", norm(rng, Hkv * D)),
              (p + "post_attention_layernorm.weight", norm(rng, C)),
              (p + "mlp.gate.weight", draw(rng, (E, C), 0.3))]
        for e in range(E):
            q = p + f"mlp.experts.{e}."
            t += [(q + "gate_proj.weight", draw(rng, (F, C), 0.2)), (q + "up_proj.weight", draw(rng, (F, C), 0.2)),
                  (q + "down_proj.weight", draw(rng, (C, F), 0.2))]
    t += [("model.norm.weight", norm(rng, C)), ("lm_head.weight", draw(rng, (V, C), 0.3))]
    return t


# mistralai/Mixtral-8x22B-Instruct-v0.1 (its v3 vocabulary is the mistral fixture's tokenizer's)
MIXTRAL = {
    "architectures": ["MixtralForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
    "hidden_act": "silu", "hidden_size": 96, "initializer_range": 0.02, "intermediate_size": 48,
    "max_position_embeddings": 65536, "model_type": "mixtral", "num_attention_heads": 6, "num_experts_per_tok": 2,
    "num_hidden_layers": 2, "num_key_value_heads": 1, "num_local_experts": 8, "output_router_logits": False,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.38.0", "use_cache": True, "vocab_size": 512}
MIXTRAL_REAL = {"hidden_size": [6144, 96], "intermediate_size": [16384, 48], "num_attention_heads": [48, 6],
                "num_key_value_heads": [8, 1], "num_hidden_layers": [56, 2], "vocab_size": [32768, 512]}

# allenai/OLMoE-1B-7B-0924
OLMOE = {
    "architectures": ["OlmoeForCausalLM"], "attention_bias": False, "attention_dropout": 0.0, "clip_qkv": None,
    "eos_token_id": 500, "hidden_act": "silu", "hidden_size": 64, "initializer_range": 0.02, "intermediate_size": 32,
    "max_position_embeddings": 4096, "model_type": "olmoe", "norm_topk_prob": False, "num_attention_heads": 4,
    "num_experts": 8, "num_experts_per_tok": 2, "num_hidden_layers": 2, "num_key_value_heads": 4,
    "output_router_logits": False, "pad_token_id": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
    "rope_theta": 10000.0, "router_aux_loss_coef": 0.01, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.43.0.dev0", "use_cache": True, "vocab_size": 512}
OLMOE_REAL = {"hidden_size": [2048, 64], "intermediate_size": [1024, 32], "num_attention_heads": [16, 4],
              "num_key_value_heads": [16, 4], "num_hidden_layers": [16, 2], "num_experts": [64, 8],
              "num_experts_per_tok": [8, 2], "vocab_size": [50304, 512], "eos_token_id": [50279, 500]}


def main():
    fixtures, out = Path(sys.argv[1]), Path(sys.argv[2])
    jobs = [("mixtral", MIXTRAL, MIXTRAL_REAL, mixtral, 3401, "models/mistral/hf",
             ["tokenizer.json", "tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"],
             "mistralai/Mixtral-8x22B-Instruct-v0.1"),
            ("olmoe", OLMOE, OLMOE_REAL, olmoe, 3402, "models/gpt2/hf",
             ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"], "allenai/OLMoE-1B-7B-0924")]
    for name, config, real, make, seed, tok_dir, tok_files, stands_in in jobs:
        hf = out / name / "hf"
        hf.mkdir(parents=True, exist_ok=True)
        (hf / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        gen = {"_from_model_config": True, "eos_token_id": config["eos_token_id"], "transformers_version": config["transformers_version"]}
        if "bos_token_id" in config:
            gen["bos_token_id"] = config["bos_token_id"]
        if "pad_token_id" in config:
            gen["pad_token_id"] = config["pad_token_id"]
        (hf / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
        for f in tok_files:
            shutil.copyfile(fixtures / tok_dir / f, hf / f)
        write_safetensors(hf / "model.safetensors", make(np.random.default_rng(seed), config))
        (out / name / "STANDIN.json").write_text(json.dumps({
            "family": name, "stands_in_for": stands_in, "seed": seed, "checkpoint_dtype": "BF16",
            "real_values_of_shrunk_keys": real, "tokenizer": f"the shared fixtures' {tok_dir} tokenizer files, unchanged",
            "made_by": "scripts/make_moe_standins.py"}, indent=1) + "\n")


if __name__ == "__main__":
    main()
