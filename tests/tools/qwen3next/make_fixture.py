# Tiny random-weight Qwen3-Next (Qwen3NextForCausalLM) HF directory, standing in for
# Qwen/Qwen3-Next-80B-A3B-Instruct: its config.json keys (no text_config wrapper, no layer_types:
# every full_attention_interval-th layer is full attention), its tensor names (linear_attn.in_proj_qkvz
# and in_proj_ba grouped per key head, experts one tensor each, a gated shared expert, the MTP head
# under mtp.*), sizes shrunk; value heads twice the key heads, as the real model's 32 / 16.
# Usage: /usr/bin/python3 make_fixture.py OUT   (tests/data/README.md, models/qwen3next/)
import json, struct, sys, os, shutil
import numpy as np, torch
out = sys.argv[1]
seed = 1208
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(seed)
C, L, H, HKV, D = 64, 4, 4, 1, 32
HK, HV, S, K = 2, 4, 16, 4
E, TOPK, FE, FS, FF = 8, 2, 16, 32, 48
V = 512
R = HV // HK
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
json.dump(cfg, open(f'{out}/config.json', 'w'), indent=2)
# Qwen3-Next's tokenizer is Qwen2's (as Qwen3's): the shared qwen3moe stand-in's files.
src = '/work/shared/fixtures/models/qwen3moe/hf'
for f in ['generation_config.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']:
    shutil.copyfile(f'{src}/{f}', f'{out}/{f}')

tensors = []
def add(name, shape, std=0.05, mean=0.0, kind='normal'):
    if kind == 'normal':
        a = rng.normal(mean, std, size=shape)
    elif kind == 'alog':
        a = np.log(rng.uniform(1, 16, size=shape))
    tensors.append((name, torch.tensor(a, dtype=torch.float32).to(torch.bfloat16)))
def norm(name, n):  # zero-centred (1 + w)
    add(name, (n,), std=0.1)
CH = 2 * HK * S + HV * S
def moe(p):
    add(f'{p}.mlp.gate.weight', (E, C), std=0.3)
    for e in range(E):
        add(f'{p}.mlp.experts.{e}.gate_proj.weight', (FE, C), std=0.08)
        add(f'{p}.mlp.experts.{e}.up_proj.weight', (FE, C), std=0.08)
        add(f'{p}.mlp.experts.{e}.down_proj.weight', (C, FE), std=0.08)
    add(f'{p}.mlp.shared_expert.gate_proj.weight', (FS, C), std=0.08)
    add(f'{p}.mlp.shared_expert.up_proj.weight', (FS, C), std=0.08)
    add(f'{p}.mlp.shared_expert.down_proj.weight', (C, FS), std=0.08)
    add(f'{p}.mlp.shared_expert_gate.weight', (1, C), std=0.2)
def attn(p):
    add(f'{p}.self_attn.q_proj.weight', (2 * H * D, C), std=0.08)
    add(f'{p}.self_attn.k_proj.weight', (HKV * D, C), std=0.08)
    add(f'{p}.self_attn.v_proj.weight', (HKV * D, C), std=0.08)
    add(f'{p}.self_attn.o_proj.weight', (C, H * D), std=0.08)
    norm(f'{p}.self_attn.q_norm.weight', D)
    norm(f'{p}.self_attn.k_norm.weight', D)
add('model.embed_tokens.weight', (V, C), std=0.5)
for l in range(L):
    p = f'model.layers.{l}'
    norm(f'{p}.input_layernorm.weight', C)
    if (l + 1) % cfg['full_attention_interval'] != 0:
        # per key head: [q (S) | k (S) | v (R S) | z (R S)], and [b (R) | a (R)]
        add(f'{p}.linear_attn.in_proj_qkvz.weight', (HK * (2 * S + 2 * R * S), C), std=0.08)
        add(f'{p}.linear_attn.in_proj_ba.weight', (2 * HV, C), std=0.3)
        add(f'{p}.linear_attn.conv1d.weight', (CH, 1, K), std=0.3)
        add(f'{p}.linear_attn.dt_bias', (HV,), std=0.5, mean=1.0)
        add(f'{p}.linear_attn.A_log', (HV,), kind='alog')
        add(f'{p}.linear_attn.norm.weight', (S,), std=0.1, mean=1.0)
        add(f'{p}.linear_attn.out_proj.weight', (C, HV * S), std=0.08)
    else:
        attn(p)
    norm(f'{p}.post_attention_layernorm.weight', C)
    moe(p)
norm('model.norm.weight', C)
add('lm_head.weight', (V, C), std=0.08)
p = 'mtp.layers.0'
norm(f'{p}.input_layernorm.weight', C)
attn(p)
norm(f'{p}.post_attention_layernorm.weight', C)
moe(p)
add('mtp.fc.weight', (C, 2 * C), std=0.08)
norm('mtp.norm.weight', C)
norm('mtp.pre_fc_norm_embedding.weight', C)
norm('mtp.pre_fc_norm_hidden.weight', C)

tensors.sort(key=lambda t: t[0])  # safetensors' save_file order
header, off, blobs = {}, 0, []
for name, x in tensors:
    b = x.view(torch.int16).numpy().tobytes()
    header[name] = {'dtype': 'BF16', 'shape': list(x.shape), 'data_offsets': [off, off + len(b)]}
    off += len(b)
    blobs.append(b)
header['__metadata__'] = {'format': 'pt'}
h = json.dumps(header, separators=(',', ':')).encode()
h += b' ' * ((8 - len(h) % 8) % 8)
with open(f'{out}/model.safetensors', 'wb') as f:
    f.write(struct.pack('<Q', len(h)))
    f.write(h)
    for b in blobs:
        f.write(b)
n = sum(x.numel() for _, x in tensors)
print('params', n, 'bytes', off)
