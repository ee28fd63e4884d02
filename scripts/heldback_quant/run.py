# usage: run.py [JOURNEY]  (in the directory make.sh fills; LLAMA_REF: the llama_ref binary)
# llama.cpp (native L, f32_of_dequantized F) and journey (J) on every held-back file; distances as
# tests/model/test_quant_models.cpp measures them (over F's top-20).
import json, subprocess, sys, glob, os
import numpy as np
J_BIN = sys.argv[1] if len(sys.argv) > 1 else '/work/main/build/journey'
rng = np.random.default_rng(4243)
cases = {'quant12': [1, 47, 243, 180, 478, 339, 204, 293, 288, 446, 190, 436],
         'hb12': [1] + [int(x) for x in rng.integers(3, 512, 11)],
         'hb64': [1] + [int(x) for x in rng.integers(3, 512, 63)]}
for k in range(16): cases[f'r{k:02d}'] = [1] + [int(x) for x in rng.integers(3, 512, 11)]
def llama(path, ids):
    key = f'cache/{os.path.basename(path)}.{os.path.dirname(path).replace("/", "_")}.{hash(tuple(ids)) & 0xffffffff}.json'
    if os.path.exists(key): return json.load(open(key))
    out = json.loads(subprocess.run([os.environ.get('LLAMA_REF', './llama_ref'), path] + [str(i) for i in ids], capture_output=True, check=True, text=True).stdout)
    json.dump(out, open(key, 'w')); return out
def journey(path, ids):
    r = subprocess.run([J_BIN, 'next', '-m', path, '--ids', ' '.join(map(str, ids)), '--rows', '512', '--json', '-t', '2'], capture_output=True, text=True)
    if r.returncode: return None, r.stderr.strip()
    j = json.loads(r.stdout); lp = np.full(512, -1e30)
    for e in j['top']: lp[e['id']] = e['logprob']
    return lp, ''
os.makedirs('cache', exist_ok=True)
rows = []
for path in sorted(glob.glob('hb-*.gguf')):
    for cname, ids in cases.items():
        L = llama(path, ids); F = llama('dq/' + path, ids)
        Jl, err = journey(path, ids)
        if Jl is None: print(path, cname, 'journey refused:', err); continue
        Lv = np.array(L['logprobs_last_all']); Fv = np.array(F['logprobs_last_all'])
        top = [e['id'] for e in F['top20']]
        jf = np.abs(Jl[top] - Fv[top]); lf = np.abs(Lv[top] - Fv[top])
        ft1 = top[0]; jt1 = int(np.argmax(Jl)); lt1 = int(np.argmax(Lv))
        rows.append(dict(file=path, case=cname, j_max=jf.max(), j_mean=jf.mean(), l_max=lf.max(), l_mean=lf.mean(),
                         j_top1=jt1 == ft1, l_top1=lt1 == ft1, margin=float(np.sort(Fv)[-1] - np.sort(Fv)[-2])))
import collections
agg = collections.defaultdict(list)
for r in rows: agg[r['file']].append(r)
for f, rs in agg.items():
    m = lambda k: float(np.mean([r[k] for r in rs]))
    wins = sum(r['j_max'] <= r['l_max'] for r in rs)
    print(f"AVG {f:22s} n={len(rs)} J-F max {m('j_max'):.4f} mean {m('j_mean'):.4f} | L-F max {m('l_max'):.4f} mean {m('l_mean'):.4f} | J max<=L max in {wins}/{len(rs)} | top1=F: J {sum(r['j_top1'] for r in rs)} L {sum(r['l_top1'] for r in rs)}")
for r in rows:
    ok = r['j_max'] <= r['l_max'] and r['j_mean'] <= r['l_mean'] or (r['l_max'] < 0.1 and r['j_max'] <= 0.1)
    print(f"{r['file']:22s} {r['case']:8s} J-F max {r['j_max']:.4f} mean {r['j_mean']:.4f} | L-F max {r['l_max']:.4f} mean {r['l_mean']:.4f} | top1 J {int(r['j_top1'])} L {int(r['l_top1'])} (F margin {r['margin']:.3f}) {'ok' if ok else 'WORSE'}")
