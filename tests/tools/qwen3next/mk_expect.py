# expect.json of a stand-in: llama.cpp's outputs through llama_ref (tests/tools/qwen35moe/
# llama_ref.cpp, linked to /work/ref/llama.cpp/build/bin's libllama), as for the qwen35moe one.
# Usage (in the directory holding FAMILY/ and llama_ref):
#   /usr/bin/python3 mk_expect.py FAMILY SEED "REAL MODEL"
#   (qwen3next 1208 Qwen/Qwen3-Next-80B-A3B-Instruct; qwen35hv 1209 Qwen/Qwen3.5-2B)
import json, subprocess, sys
family, seed, real = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, '/work/ref/llama.cpp/gguf-py')
import numpy as np, gguf
g = f'{family}/{family}-F32.gguf'
r = gguf.GGUFReader(g)
tt = r.fields['tokenizer.ggml.token_type']
types = [int(tt.parts[i][0]) for i in tt.data]
pool = [i for i, t in enumerate(types) if t in (1, 6)]  # NORMAL, BYTE
cases = []
for name, n, s in [('len12', 12, seed * 1000 + 12), ('len200', 200, seed * 1000 + 200)]:
    ids = [int(x) for x in np.random.default_rng(s).choice(pool, size=n)]
    out = json.loads(subprocess.check_output(['./llama_ref', g, ' '.join(map(str, ids))]))
    cases.append({'name': name, 'n_tokens': n, 'ids_seed': s, 'bos_prepended': False, 'ids': ids, **out})
json.dump({'description': f'llama.cpp reference outputs for the {real} stand-in ({family})', 'family': family,
           'reference': {'tool': 'llama.cpp de3ff81 libllama (/work/ref/llama.cpp/build/bin), CPU backend', 'runner': 'llama_ref.cpp (tests/data/README.md)',
                         'kv_cache_type': 'f32', 'flash_attn': False, 'threads': 2, 'n_vocab': len(types)},
           'cases': cases}, open(f'{family}/expect.json', 'w'), indent=1)
print([c['greedy16'][:4] for c in cases], [min(c['greedy16_margins']) for c in cases])
