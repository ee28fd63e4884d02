# Tiny random-weight Qwen3.5-MoE (Qwen3_5MoeForConditionalGeneration) HF directory, standing in for
# Qwen/Qwen3.5-35B-A3B: the shared qwen35 fixture's config.json turned MoE, its tokenizer files;
# experts fused as transformers 5 stores them.
# Usage: /usr/bin/python3 make_fixture.py OUT   (tests/data/README.md, models/qwen35moe/)
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from hybrid_standin import StandIn, QWEN35_HF, copy_tokenizer, write_config
out = sys.argv[1]
C, L, H, HKV, D = 64, 4, 4, 1, 32
HK, HV, S, K = 4, 4, 16, 4
E, TOPK, FE, FS = 8, 2, 16, 32
V = 512
cfg = json.load(open(f'{QWEN35_HF}/config.json'))
t = cfg['text_config']
for k in ['intermediate_size']:
    t.pop(k)
t.update({
    'hidden_size': C, 'num_hidden_layers': L, 'num_attention_heads': H, 'num_key_value_heads': HKV, 'head_dim': D,
    'linear_num_key_heads': HK, 'linear_num_value_heads': HV, 'linear_key_head_dim': S, 'linear_value_head_dim': S,
    'linear_conv_kernel_dim': K, 'model_type': 'qwen3_5_moe_text', 'num_experts': E, 'num_experts_per_tok': TOPK,
    'moe_intermediate_size': FE, 'shared_expert_intermediate_size': FS, 'output_router_logits': False,
    'router_aux_loss_coef': 0.001, 'tie_word_embeddings': False,
})
t['rope_parameters']['mrope_section'] = [2, 1, 1]
t = dict(sorted(t.items()))
cfg['text_config'] = t
cfg['architectures'] = ['Qwen3_5MoeForConditionalGeneration']
cfg['model_type'] = 'qwen3_5_moe'
cfg['tie_word_embeddings'] = False
cfg['vision_config']['model_type'] = 'qwen3_5_moe'
cfg['vision_config']['out_hidden_size'] = C
write_config(cfg, out)
copy_tokenizer(QWEN35_HF, out)

w = StandIn(1207)
attn = lambda p: w.attn(p, C, H, HKV, D)
moe = lambda p: w.moe(p, C, E, FE, FS, fused=True)
w.add('model.language_model.embed_tokens.weight', (V, C), std=0.5)
w.layers('model.language_model', t['layer_types'][:L], C, attn,
         lambda p: w.gdn(p, C, HK, HV, S, S, K, ba_std=0.08), moe)
w.norm('model.language_model.norm.weight', C)
w.add('lm_head.weight', (V, C), std=0.08)
w.mtp(C, attn, moe)
w.save(out)
