# Held-back quant base: the quant/ stand-in's kind (TinyLlama-shaped llama, 2 layers, vocab 512,
# its tokenizer), another seed and width: width 512, ffn 1024, 8 heads of 64, 2 kv heads.
# Weights N(0, 1/sqrt(fan_in)) (embedding/output 0.2), norms 1 + N(0, 0.1), rounded to bf16, as base-F32.
# usage: make_base.py OUT.gguf QUANT_FIXTURE_DIR/base-F32.gguf (PYTHONPATH: llama.cpp's gguf-py)
import sys
import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType
C, F, H, KV, L, V, SEED = 512, 1024, 8, 2, 2, 512, 4242
base = GGUFReader(sys.argv[2])
w = GGUFWriter(sys.argv[1], 'llama')
skip = {'GGUF.version', 'GGUF.tensor_count', 'GGUF.kv_count', 'general.architecture'}
over = {'llama.embedding_length': C, 'llama.feed_forward_length': F, 'llama.attention.head_count': H,
        'llama.attention.head_count_kv': KV, 'llama.rope.dimension_count': C // H, 'general.name': 'Heldback'}
for k, f in base.fields.items():
    if k in skip: continue
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        st = f.types[1]
        vals = [f.parts[i].tobytes().decode() if st == GGUFValueType.STRING else f.parts[i][0].item() for i in f.data]
        w.add_key_value(k, vals, t, sub_type=st)
    elif t == GGUFValueType.STRING:
        w.add_key_value(k, over.get(k, f.parts[-1].tobytes().decode()), t)
    else:
        w.add_key_value(k, over.get(k, f.parts[-1][0].item()), t)
rng = np.random.default_rng(SEED)
def bf16(a):
    u = a.astype(np.float32).view(np.uint32)
    u = ((u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000).astype(np.uint32)
    return u.view(np.float32)
def mat(rows, cols, std): return bf16(rng.normal(0, std, (rows, cols)))
def norm(n): return bf16(1 + rng.normal(0, 0.1, n))
D = C // H
w.add_tensor('token_embd.weight', mat(V, C, 0.2))
w.add_tensor('output.weight', mat(V, C, 0.2))
for l in range(L):
    p = f'blk.{l}.'
    w.add_tensor(p + 'attn_norm.weight', norm(C))
    w.add_tensor(p + 'attn_q.weight', mat(C, C, C ** -0.5))
    w.add_tensor(p + 'attn_k.weight', mat(KV * D, C, C ** -0.5))
    w.add_tensor(p + 'attn_v.weight', mat(KV * D, C, C ** -0.5))
    w.add_tensor(p + 'attn_output.weight', mat(C, C, C ** -0.5))
    w.add_tensor(p + 'ffn_norm.weight', norm(C))
    w.add_tensor(p + 'ffn_gate.weight', mat(F, C, C ** -0.5))
    w.add_tensor(p + 'ffn_up.weight', mat(F, C, C ** -0.5))
    w.add_tensor(p + 'ffn_down.weight', mat(C, F, F ** -0.5))
w.add_tensor('output_norm.weight', norm(C))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
