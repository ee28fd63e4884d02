# The shared parts of the tiny random-weight hybrid stand-ins (Qwen3.5, Qwen3.5-MoE, Qwen3-Next):
# a BF16 tensor writer drawing from one numpy generator in call order, the blocks of the real
# checkpoints' tensor names (gated attention, the two Gated DeltaNet layouts, dense MLP, experts
# fused or one tensor each, the MTP head), and the single-file safetensors writer.
# Used by tests/tools/{qwen35hv,qwen35moe,qwen3next}/make_fixture.py and
# scripts/heldback_dense/qwen35_5layer.py (Debian's /usr/bin/python3 with torch and numpy).
import json, os, shutil, struct
import numpy as np, torch

QWEN35_HF = '/work/shared/fixtures/models/qwen35/hf'
QWEN3MOE_HF = '/work/shared/fixtures/models/qwen3moe/hf'
TOKENIZER_FILES = ['generation_config.json', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']


def copy_tokenizer(src, out):
    os.makedirs(out, exist_ok=True)
    for f in TOKENIZER_FILES:
        shutil.copyfile(f'{src}/{f}', f'{out}/{f}')


def write_config(cfg, out):
    os.makedirs(out, exist_ok=True)
    json.dump(cfg, open(f'{out}/config.json', 'w'), indent=2)


class StandIn:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.tensors = []

    def add(self, name, shape, std=0.05, mean=0.0, kind='normal'):
        if kind == 'normal':
            a = self.rng.normal(mean, std, size=shape)
        elif kind == 'alog':
            a = np.log(self.rng.uniform(1, 16, size=shape))
        self.tensors.append((name, torch.tensor(a, dtype=torch.float32).to(torch.bfloat16)))

    def norm(self, name, n):  # zero-centred (1 + w)
        self.add(name, (n,), std=0.1)

    def mlp(self, p, C, F):
        self.add(f'{p}.mlp.gate_proj.weight', (F, C), std=0.08)
        self.add(f'{p}.mlp.up_proj.weight', (F, C), std=0.08)
        self.add(f'{p}.mlp.down_proj.weight', (C, F), std=0.08)

    def moe(self, p, C, E, FE, FS, fused):
        """Router, experts (fused as transformers 5 stores Qwen3.5-MoE's: gate_up_proj [E, 2FE, C],
        down_proj [E, C, FE]; else one tensor each), a shared expert behind its own gate [1, C]."""
        self.add(f'{p}.mlp.gate.weight', (E, C), std=0.3)
        if fused:
            self.add(f'{p}.mlp.experts.gate_up_proj', (E, 2 * FE, C), std=0.08)
            self.add(f'{p}.mlp.experts.down_proj', (E, C, FE), std=0.08)
        else:
            for e in range(E):
                self.add(f'{p}.mlp.experts.{e}.gate_proj.weight', (FE, C), std=0.08)
                self.add(f'{p}.mlp.experts.{e}.up_proj.weight', (FE, C), std=0.08)
                self.add(f'{p}.mlp.experts.{e}.down_proj.weight', (C, FE), std=0.08)
        self.add(f'{p}.mlp.shared_expert.gate_proj.weight', (FS, C), std=0.08)
        self.add(f'{p}.mlp.shared_expert.up_proj.weight', (FS, C), std=0.08)
        self.add(f'{p}.mlp.shared_expert.down_proj.weight', (C, FS), std=0.08)
        self.add(f'{p}.mlp.shared_expert_gate.weight', (1, C), std=0.2)

    def attn(self, p, C, H, HKV, D):
        """Gated full attention: q_proj holds [q | gate] per head; q/k norms of the head size."""
        self.add(f'{p}.self_attn.q_proj.weight', (2 * H * D, C), std=0.08)
        self.add(f'{p}.self_attn.k_proj.weight', (HKV * D, C), std=0.08)
        self.add(f'{p}.self_attn.v_proj.weight', (HKV * D, C), std=0.08)
        self.add(f'{p}.self_attn.o_proj.weight', (C, H * D), std=0.08)
        self.norm(f'{p}.self_attn.q_norm.weight', D)
        self.norm(f'{p}.self_attn.k_norm.weight', D)

    def _gdn_tail(self, p, C, CH, HV, SV, K):
        self.add(f'{p}.linear_attn.conv1d.weight', (CH, 1, K), std=0.3)
        self.add(f'{p}.linear_attn.dt_bias', (HV,), std=0.5, mean=1.0)
        self.add(f'{p}.linear_attn.A_log', (HV,), kind='alog')
        self.add(f'{p}.linear_attn.norm.weight', (SV,), std=0.1, mean=1.0)
        self.add(f'{p}.linear_attn.out_proj.weight', (C, HV * SV), std=0.08)

    def gdn(self, p, C, HK, HV, SK, SV, K, ba_std):
        """Qwen3.5's Gated DeltaNet: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a apart."""
        CH = 2 * HK * SK + HV * SV
        self.add(f'{p}.linear_attn.in_proj_qkv.weight', (CH, C), std=0.08)
        self.add(f'{p}.linear_attn.in_proj_z.weight', (HV * SV, C), std=0.08)
        self.add(f'{p}.linear_attn.in_proj_b.weight', (HV, C), std=ba_std)
        self.add(f'{p}.linear_attn.in_proj_a.weight', (HV, C), std=ba_std)
        self._gdn_tail(p, C, CH, HV, SV, K)

    def gdn_next(self, p, C, HK, HV, SK, SV, K):
        """Qwen3-Next's: per key head [q (SK) | k (SK) | v (R SV) | z (R SV)] and [b (R) | a (R)]."""
        R = HV // HK
        self.add(f'{p}.linear_attn.in_proj_qkvz.weight', (HK * (2 * SK + 2 * R * SV), C), std=0.08)
        self.add(f'{p}.linear_attn.in_proj_ba.weight', (2 * HV, C), std=0.3)
        self._gdn_tail(p, C, 2 * HK * SK + HV * SV, HV, SV, K)

    def layers(self, prefix, kinds, C, attn, linear, ffn):
        """The decoder layers: kinds[l] is 'linear_attention' or 'full_attention'; attn, linear and
        ffn take the layer's prefix."""
        for l, kind in enumerate(kinds):
            p = f'{prefix}.layers.{l}'
            self.norm(f'{p}.input_layernorm.weight', C)
            (linear if kind == 'linear_attention' else attn)(p)
            self.norm(f'{p}.post_attention_layernorm.weight', C)
            ffn(p)

    def mtp(self, C, attn, ffn):
        """The MTP head (mtp.*): one attention layer, fc over [embedding | hidden], its norms."""
        p = 'mtp.layers.0'
        self.norm(f'{p}.input_layernorm.weight', C)
        attn(p)
        self.norm(f'{p}.post_attention_layernorm.weight', C)
        ffn(p)
        self.add('mtp.fc.weight', (C, 2 * C), std=0.08)
        self.norm('mtp.norm.weight', C)
        self.norm('mtp.pre_fc_norm_embedding.weight', C)
        self.norm('mtp.pre_fc_norm_hidden.weight', C)

    def save(self, out, sort=False):
        """model.safetensors, BF16, in call order (sort: in name order, as safetensors' save_file)."""
        tensors = sorted(self.tensors, key=lambda t: t[0]) if sort else self.tensors
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
