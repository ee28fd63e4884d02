# Tiny random-weight Qwen3.5 (Qwen3_5ForConditionalGeneration) HF directory whose Gated DeltaNet
# has twice as many value heads as key heads (as every real Qwen3.5 from 2B up: 16 key / 32 value
# heads), which llama.cpp's converter reorders from grouped to tiled. Starts from the shared
# qwen35 fixture's config.json and tokenizer files; sizes shrunk, tied, MTP head dense.
# Usage: /usr/bin/python3 make_fixture.py OUT   (tests/data/README.md, models/qwen35hv/)
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from hybrid_standin import StandIn, QWEN35_HF, copy_tokenizer, write_config
out = sys.argv[1]
C, L, H, HKV, D, F = 64, 4, 4, 1, 32, 96
HK, HV, S, K = 2, 4, 16, 4
V = 512
cfg = json.load(open(f'{QWEN35_HF}/config.json'))
t = cfg['text_config']
t.update({
    'hidden_size': C, 'num_hidden_layers': L, 'num_attention_heads': H, 'num_key_value_heads': HKV, 'head_dim': D,
    'intermediate_size': F, 'linear_num_key_heads': HK, 'linear_num_value_heads': HV, 'linear_key_head_dim': S,
    'linear_value_head_dim': S, 'linear_conv_kernel_dim': K,
})
t['rope_parameters']['mrope_section'] = [2, 1, 1]
cfg['vision_config']['out_hidden_size'] = C
write_config(cfg, out)
copy_tokenizer(QWEN35_HF, out)

w = StandIn(1211)
attn = lambda p: w.attn(p, C, H, HKV, D)
mlp = lambda p: w.mlp(p, C, F)
w.add('model.language_model.embed_tokens.weight', (V, C), std=0.1)  # tied: also the output
w.layers('model.language_model', t['layer_types'][:L], C, attn,
         lambda p: w.gdn(p, C, HK, HV, S, S, K, ba_std=0.3), mlp)
w.norm('model.language_model.norm.weight', C)
w.mtp(C, attn, mlp)
w.save(out)
