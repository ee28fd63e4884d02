# A held-back variant of a fixture's HF directory: every tensor redrawn with another seed from a
# normal distribution of the tensor's own mean and std (same names, shapes, dtypes); the other
# files copied. usage: reseed.py SRC_HF DST_HF SEED
import json, os, shutil, struct, sys
import numpy as np
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(dst, exist_ok=True)
for f in os.listdir(src):
    if f != 'model.safetensors': shutil.copy(os.path.join(src, f), dst)
raw = open(os.path.join(src, 'model.safetensors'), 'rb').read()
n = struct.unpack('<Q', raw[:8])[0]; hdr = json.loads(raw[8:8 + n]); body = raw[8 + n:]
rng = np.random.default_rng(seed)
def to_f32(b, dt):
    if dt == 'F32': return np.frombuffer(b, np.float32).astype(np.float64)
    if dt == 'F16': return np.frombuffer(b, np.float16).astype(np.float64)
    if dt == 'BF16': return (np.frombuffer(b, np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    raise SystemExit('dtype ' + dt)
def from_f32(a, dt):
    a = a.astype(np.float32)
    if dt == 'F32': return a.tobytes()
    if dt == 'F16': return a.astype(np.float16).tobytes()
    u = a.view(np.uint32); u = ((u + 0x7fff + ((u >> 16) & 1)) >> 16).astype(np.uint16); return u.tobytes()
out = bytearray()
newhdr = {}
for name in sorted(k for k in hdr if k != '__metadata__'):
    t = hdr[name]; b = body[t['data_offsets'][0]:t['data_offsets'][1]]
    a = to_f32(b, t['dtype'])
    m, s = (a.mean(), a.std()) if a.size else (0, 0)
    new = rng.normal(m, s, a.shape) if s > 0 else a.copy()
    nb = from_f32(new, t['dtype'])
    newhdr[name] = {'dtype': t['dtype'], 'shape': t['shape'], 'data_offsets': [len(out), len(out) + len(nb)]}
    out += nb
if '__metadata__' in hdr: newhdr['__metadata__'] = hdr['__metadata__']
h = json.dumps(newhdr).encode(); h += b' ' * ((8 - len(h) % 8) % 8)
open(os.path.join(dst, 'model.safetensors'), 'wb').write(struct.pack('<Q', len(h)) + h + bytes(out))
