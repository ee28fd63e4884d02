# usage: [OUT=DIR] expect.py FAMILY SEED  (OUT, default /tmp/moe3: OUT/FAMILY/FAMILY-F32.gguf; OUT/llama_ref built from llama_ref.cpp)
# ids drawn as the fixtures' (numpy default_rng(seed).choice over the NORMAL and BYTE tokens of the
# GGUF vocabulary; BOS first when the tokenizer adds one), then llama_ref for each case.
import json, os, subprocess, sys, hashlib
sys.path.insert(0, "/work/ref/llama.cpp/gguf-py")
import numpy as np
from gguf import GGUFReader
fam, seed = sys.argv[1], int(sys.argv[2])
out_dir = os.environ.get("OUT", "/tmp/moe3")
path = f"{out_dir}/{fam}/{fam}-F32.gguf"
r = GGUFReader(path)
f = r.fields
types = [int(f["tokenizer.ggml.token_type"].parts[i][0]) for i in f["tokenizer.ggml.token_type"].data]
pool = [i for i, t in enumerate(types) if t in (1, 6)]
add_bos = "tokenizer.ggml.add_bos_token" in f and bool(f["tokenizer.ggml.add_bos_token"].parts[-1][0])
bos = int(f["tokenizer.ggml.bos_token_id"].parts[-1][0]) if add_bos else None
cases = []
for k, (name, n) in enumerate([("len12", 12), ("len200", 200)]):
    ids_seed = seed * 100 + k
    rng = np.random.default_rng(ids_seed)
    ids = [int(x) for x in rng.choice(pool, size=n - (1 if add_bos else 0))]
    if add_bos: ids = [bos] + ids
    out = json.loads(subprocess.run([f"{out_dir}/llama_ref", path] + [str(i) for i in ids], capture_output=True, check=True, text=True).stdout)
    cases.append({"name": name, "n_tokens": n, "ids_seed": ids_seed, "bos_prepended": add_bos, "ids": ids, **{k2: v for k2, v in out.items() if k2 != "n_vocab"}})
    V = out["n_vocab"]
print(json.dumps({"description": f"llama.cpp reference outputs for journey's {fam} stand-in", "family": fam,
  "model": {"gguf": f"{fam}-F32.gguf", "hf_dir": "hf", "gguf_sha256": hashlib.sha256(open(path, "rb").read()).hexdigest()},
  "reference": {"tool": "llama.cpp v0.5.0 (commit de3ff81, the pinned tree /work/ref/llama.cpp, build/bin's libllama), CPU backend",
    "runner": "llama_ref.cpp (tests/data/README.md): one llama_decode for the whole prompt, n_ubatch 512, KV cache F32/F32, flash attention disabled, 2 threads, n_ctx = prompt+16 rounded up to 256; greedy = argmax, lowest id on ties, 16 tokens, no stop on EOS",
    "kv_cache_type": "f32", "flash_attn": False, "backend": "CPU", "threads": 2, "n_vocab": V},
  "cases": cases}))
