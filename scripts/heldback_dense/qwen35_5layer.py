# Held-back Qwen3.5 variant (issue 35, "a held-back variant (other sizes, 5 layers) agrees too"):
# a Qwen3_5ForConditionalGeneration HF directory made with tests/tools/hybrid_standin.py, never read
# by the tests. The shared qwen35 fixture's config.json and tokenizer files (vocabulary 512), with
# 5 layers (linear, linear, linear, full, linear: full_attention_interval 4, the last layer linear),
# hidden 96, attention 6/2 heads of 48 (rotary 12 dims, M-RoPE sections [2, 2, 2]), Gated DeltaNet
# 3 key / 6 value heads of 24 (grouped -> tiled by llama.cpp's converter), MLP 208, tied, an MTP
# head (GGUF blk.5); all BF16, another seed. Usage: /usr/bin/python3 qwen35_5layer.py OUT [SEED]
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../tests/tools'))
from hybrid_standin import StandIn, QWEN35_HF, copy_tokenizer, write_config
out = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7705
C, H, HKV, D, F = 96, 6, 2, 48, 208
HK, HV, S, K = 3, 6, 24, 4
kinds = ['linear_attention'] * 3 + ['full_attention', 'linear_attention']
cfg = json.load(open(f'{QWEN35_HF}/config.json'))
t = cfg['text_config']
V = t['vocab_size']
t.update({
    'hidden_size': C, 'num_hidden_layers': len(kinds), 'layer_types': kinds, 'num_attention_heads': H,
    'num_key_value_heads': HKV, 'head_dim': D, 'intermediate_size': F, 'linear_num_key_heads': HK,
    'linear_num_value_heads': HV, 'linear_key_head_dim': S, 'linear_value_head_dim': S, 'linear_conv_kernel_dim': K,
})
t['rope_parameters']['mrope_section'] = [2, 2, 2]
cfg['vision_config']['out_hidden_size'] = C
write_config(cfg, out)
copy_tokenizer(QWEN35_HF, out)

w = StandIn(seed)
attn = lambda p: w.attn(p, C, H, HKV, D)
mlp = lambda p: w.mlp(p, C, F)
w.add('model.language_model.embed_tokens.weight', (V, C), std=0.1)  # tied: also the output
w.layers('model.language_model', kinds, C, attn, lambda p: w.gdn(p, C, HK, HV, S, S, K, ba_std=0.3), mlp)
w.norm('model.language_model.norm.weight', C)
w.mtp(C, attn, mlp)
w.save(out)
