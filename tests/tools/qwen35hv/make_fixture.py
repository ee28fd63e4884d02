# Tiny random-weight Qwen3.5 (Qwen3_5ForConditionalGeneration) HF directory whose Gated DeltaNet
# has twice as many value heads as key heads (as every real Qwen3.5 from 2B up: 16 key / 32 value
# heads), which llama.cpp's converter reorders from grouped to tiled. Starts from the shared
# qwen35 fixture's config.json and tokenizer files; sizes shrunk, tied, MTP head dense.
# Usage: /usr/bin/python3 make_fixture.py OUT   (tests/data/README.md, models/qwen35hv/)
import json, struct, sys, os, shutil
import numpy as np, torch
out = sys.argv[1]
seed = 1211
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(seed)
C, L, H, HKV, D, F = 64, 4, 4, 1, 32, 96
HK, HV, S, K = 2, 4, 16, 4
V = 512
src = '/work/shared/fixtures/models/qwen35/hf'
cfg = json.load(open(f'{src}/config.json'))
t = cfg['text_config']
t.update({
    'hidden_size': C, 'num_hidden_layers': L, 'num_attention_heads': H, 'num_key_value_heads': HKV, 'head_dim': D,
    'intermediate_size': F, 'linear_num_key_heads': HK, 'linear_num_value_heads': HV, 'linear_key_head_dim': S,
    'linear_value_head_dim': S, 'linear_conv_kernel_dim': K,
})
t['rope_parameters']['mrope_section'] = [2, 1, 1]
cfg['vision_config']['out_hidden_size'] = C
json.dump(cfg, open(f'{out}/config.json', 'w'), indent=2)
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
def mlp(p):
    add(f'{p}.mlp.gate_proj.weight', (F, C), std=0.08)
    add(f'{p}.mlp.up_proj.weight', (F, C), std=0.08)
    add(f'{p}.mlp.down_proj.weight', (C, F), std=0.08)
def attn(p):
    add(f'{p}.self_attn.q_proj.weight', (2 * H * D, C), std=0.08)
    add(f'{p}.self_attn.k_proj.weight', (HKV * D, C), std=0.08)
    add(f'{p}.self_attn.v_proj.weight', (HKV * D, C), std=0.08)
    add(f'{p}.self_attn.o_proj.weight', (C, H * D), std=0.08)
    norm(f'{p}.self_attn.q_norm.weight', D)
    norm(f'{p}.self_attn.k_norm.weight', D)
add('model.language_model.embed_tokens.weight', (V, C), std=0.1)  # tied: also the output
for l in range(L):
    p = f'model.language_model.layers.{l}'
    norm(f'{p}.input_layernorm.weight', C)
    if t['layer_types'][l] == 'linear_attention':
        add(f'{p}.linear_attn.in_proj_qkv.weight', (CH, C), std=0.08)
        add(f'{p}.linear_attn.in_proj_z.weight', (HV * S, C), std=0.08)
        add(f'{p}.linear_attn.in_proj_b.weight', (HV, C), std=0.3)
        add(f'{p}.linear_attn.in_proj_a.weight', (HV, C), std=0.3)
        add(f'{p}.linear_attn.conv1d.weight', (CH, 1, K), std=0.3)
        add(f'{p}.linear_attn.dt_bias', (HV,), std=0.5, mean=1.0)
        add(f'{p}.linear_attn.A_log', (HV,), kind='alog')
        add(f'{p}.linear_attn.norm.weight', (S,), std=0.1, mean=1.0)
        add(f'{p}.linear_attn.out_proj.weight', (C, HV * S), std=0.08)
    else:
        attn(p)
    norm(f'{p}.post_attention_layernorm.weight', C)
    mlp(p)
norm('model.language_model.norm.weight', C)
p = 'mtp.layers.0'
norm(f'{p}.input_layernorm.weight', C)
attn(p)
norm(f'{p}.post_attention_layernorm.weight', C)
mlp(p)
add('mtp.fc.weight', (C, 2 * C), std=0.08)
norm('mtp.norm.weight', C)
norm('mtp.pre_fc_norm_embedding.weight', C)
norm('mtp.pre_fc_norm_hidden.weight', C)

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
