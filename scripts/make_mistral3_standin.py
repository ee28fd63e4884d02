#!/usr/bin/python3
"""A tiny random-weight Hugging Face directory standing in for Ministral 3 or Mistral Small 3.1 (issue 36).

    /usr/bin/python3 scripts/make_mistral3_standin.py TOKENIZER_DIR OUT [--small]

Mistral3ForConditionalGeneration (mistralai/Ministral-3-8B-Instruct-2512): config.json with the
real keys (text_config of model_type ministral3 with its YaRN rope_parameters and
llama_4_scaling_beta; the pixtral vision_config), sizes shrunk (the real values in
OUT/STANDIN.json); model.safetensors (BF16) with the text model under transformers 5's names
(model.language_model.*, lm_head.weight) and two small vision-side tensors (the vision tower's
ln_pre and the projector's norm: parts journey and llama.cpp's text conversion set aside); the
tokenizer files of TOKENIZER_DIR (tests/data/convert/mixtral: Mistral's v3 SentencePiece
vocabulary cut to 512). numpy only, fixed seed. Reuses make_moe_standins.py's writer.

--small: Mistral Small 3.1 (mistralai/Mistral-Small-3.1-24B-Instruct-2503; 3.2 has the same
config), the same wrapper whose text_config is a plain MistralConfig (model_type mistral: no YaRN,
no temperature, rope_theta 1e9, head_dim 128 != hidden_size / heads), its tensors under
transformers 4.50's names (language_model.model.*, language_model.lm_head.weight,
vision_tower.*, multi_modal_projector.*). Its own seed; sizes in OUT/STANDIN.json's notes.
"""
import json
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from make_moe_standins import write_safetensors  # noqa: E402

SEED = 3603
TEXT = {
    "attention_dropout": 0.0, "head_dim": 32, "hidden_act": "silu", "hidden_size": 128, "initializer_range": 0.02,
    "intermediate_size": 256, "max_position_embeddings": 1024, "model_type": "ministral3", "num_attention_heads": 4,
    "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05,
    "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 16.0, "llama_4_scaling_beta": 0.1, "mscale": 1.0,
                        "mscale_all_dim": 1.0, "original_max_position_embeddings": 64, "rope_theta": 1000000.0,
                        "rope_type": "yarn", "type": "yarn"},
    "sliding_window": None, "tie_word_embeddings": False, "use_cache": True, "vocab_size": 512}
VISION = {
    "attention_dropout": 0.0, "head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "image_size": 1540,
    "initializer_range": 0.02, "intermediate_size": 4096, "model_type": "pixtral", "num_attention_heads": 16,
    "num_channels": 3, "num_hidden_layers": 24, "patch_size": 14, "rope_theta": 10000.0}
CONFIG = {
    "architectures": ["Mistral3ForConditionalGeneration"], "dtype": "bfloat16", "image_token_index": 10,
    "model_type": "mistral3", "multimodal_projector_bias": False, "projector_hidden_act": "gelu",
    "spatial_merge_size": 2, "text_config": TEXT, "transformers_version": "5.0.0.dev0", "vision_config": VISION,
    "vision_feature_layer": -1}
REAL = {"hidden_size": [4096, 128], "intermediate_size": [14336, 256], "num_attention_heads": [32, 4],
        "num_key_value_heads": [8, 1], "head_dim": [128, 32], "num_hidden_layers": [34, 2], "vocab_size": [131072, 512],
        "max_position_embeddings": [262144, 1024], "rope_parameters.original_max_position_embeddings": [16384, 64]}


SMALL_SEED = 3631
SMALL_TEXT = {
    "attention_dropout": 0.0, "head_dim": 48, "hidden_act": "silu", "hidden_size": 128, "initializer_range": 0.02,
    "intermediate_size": 256, "max_position_embeddings": 1024, "model_type": "mistral", "num_attention_heads": 4,
    "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0,
    "sliding_window": None, "use_cache": True, "vocab_size": 512}
SMALL_CONFIG = {
    "architectures": ["Mistral3ForConditionalGeneration"], "image_token_index": 10, "model_type": "mistral3",
    "multimodal_projector_bias": False, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
    "text_config": SMALL_TEXT, "torch_dtype": "bfloat16", "transformers_version": "4.50.0.dev0",
    "vision_config": {**VISION, "hidden_act": "gelu"}, "vision_feature_layer": -1}
SMALL_REAL = {"hidden_size": [5120, 128], "intermediate_size": [32768, 256], "num_attention_heads": [32, 4],
              "num_key_value_heads": [8, 1], "head_dim": [128, 48], "num_hidden_layers": [40, 2],
              "vocab_size": [131072, 512], "max_position_embeddings": [131072, 1024]}


def tensors(rng, c=TEXT, p0="model.language_model.", head="lm_head.weight", vision="model."):
    C, H, Hkv, D, F, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                          c["intermediate_size"], c["vocab_size"])
    draw = lambda shape, fan_in: (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    norm = lambda n, mean=1.0: (mean + rng.standard_normal(n) * 0.2).astype(np.float32)
    t = [(p0 + "embed_tokens.weight", (rng.standard_normal((V, C)) * 0.5).astype(np.float32))]
    for l in range(c["num_hidden_layers"]):
        p = p0 + f"layers.{l}."
        t += [(p + "input_layernorm.weight", norm(C)),
              (p + "self_attn.q_proj.weight", draw((H * D, C), C)),
              (p + "self_attn.k_proj.weight", draw((Hkv * D, C), C)),
              (p + "self_attn.v_proj.weight", draw((Hkv * D, C), C)),
              (p + "self_attn.o_proj.weight", draw((C, H * D), H * D)),
              (p + "post_attention_layernorm.weight", norm(C)),
              (p + "mlp.gate_proj.weight", draw((F, C), C)),
              (p + "mlp.up_proj.weight", draw((F, C), C)),
              (p + "mlp.down_proj.weight", draw((C, F), F))]
    t += [(p0 + "norm.weight", norm(C, 2.5)), (head, draw((V, C), C))]
    # the vision side (not run): two of its tensors, of the vision config's width
    t += [(vision + "vision_tower.ln_pre.weight", norm(VISION["hidden_size"])),
          (vision + "multi_modal_projector.norm.weight", norm(VISION["hidden_size"]))]
    return t


def main():
    tok, out = Path(sys.argv[1]), Path(sys.argv[2])
    small = "--small" in sys.argv[3:]
    config = SMALL_CONFIG if small else CONFIG
    hf = out / "hf"
    hf.mkdir(parents=True, exist_ok=True)
    (hf / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    gen = {"_from_model_config": True, "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 11,
           "transformers_version": config["transformers_version"]}
    (hf / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")
    for f in ["tokenizer.json", "tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"]:
        shutil.copyfile(tok / f, hf / f)
    if small:
        t = tensors(np.random.default_rng(SMALL_SEED), SMALL_TEXT, "language_model.model.", "language_model.lm_head.weight", "")
    else:
        t = tensors(np.random.default_rng(SEED))
    write_safetensors(hf / "model.safetensors", t)


if __name__ == "__main__":
    main()
