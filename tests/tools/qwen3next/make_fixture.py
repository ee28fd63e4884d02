# Tiny random-weight Qwen3-Next (Qwen3NextForCausalLM) HF directory, standing in for
# Qwen/Qwen3-Next-80B-A3B-Instruct: its config.json keys (no text_config wrapper, no layer_types:
# every full_attention_interval-th layer is full attention), its tensor names (linear_attn.in_proj_qkvz
# and in_proj_ba grouped per key head, experts one tensor each, a gated shared expert, the MTP head
# under mtp.*), sizes shrunk; value heads twice the key heads, as the real model's 32 / 16.
# Usage: /usr/bin/python3 make_fixture.py OUT   (tests/data/README.md, models/qwen3next/)
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from hybrid_standin import StandIn, QWEN3MOE_HF, copy_tokenizer, write_config
out = sys.argv[1]
C, L, H, HKV, D = 64, 4, 4, 1, 32
HK, HV, S, K = 2, 4, 16, 4
E, TOPK, FE, FS, FF = 8, 2, 16, 32, 48
V = 512
cfg = {
    "architectures": ["Qwen3NextForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 470, "decoder_sparse_step": 1, "eos_token_id": 472, "full_attention_interval": 4,
    "head_dim": D, "hidden_act": "silu", "hidden_size": C, "initializer_range": 0.02, "intermediate_size": FF,
    "linear_conv_kernel_dim": K, "linear_key_head_dim": S, "linear_num_key_heads": HK, "linear_num_value_heads": HV,
    "linear_value_head_dim": S, "max_position_embeddings": 262144, "mlp_only_layers": [], "model_type": "qwen3_next",
    "moe_intermediate_size": FE, "norm_topk_prob": True, "num_attention_heads": H, "num_experts": E,
    "num_experts_per_tok": TOPK, "num_hidden_layers": L, "num_key_value_heads": HKV, "output_router_logits": False,
    "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 10000000,
    "router_aux_loss_coef": 0.001, "shared_expert_intermediate_size": FS, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.57.0.dev0", "use_cache": True, "use_sliding_window": False,
    "vocab_size": V,
}
write_config(cfg, out)
# Qwen3-Next's tokenizer is Qwen2's (as Qwen3's): the shared qwen3moe stand-in's files.
copy_tokenizer(QWEN3MOE_HF, out)

w = StandIn(1208)
attn = lambda p: w.attn(p, C, H, HKV, D)
moe = lambda p: w.moe(p, C, E, FE, FS, fused=False)
kinds = ['full_attention' if (l + 1) % cfg['full_attention_interval'] == 0 else 'linear_attention' for l in range(L)]
w.add('model.embed_tokens.weight', (V, C), std=0.5)
w.layers('model', kinds, C, attn, lambda p: w.gdn_next(p, C, HK, HV, S, S, K), moe)
w.norm('model.norm.weight', C)
w.add('lm_head.weight', (V, C), std=0.08)
w.mtp(C, attn, moe)
w.save(out, sort=True)  # safetensors' save_file order
