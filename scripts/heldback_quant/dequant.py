# f32_of_dequantized: an F32 GGUF with the file's metadata and gguf-py's dequantization of every tensor
# usage: dequant.py IN.gguf OUT.gguf (PYTHONPATH: llama.cpp's gguf-py)
import sys
import numpy as np
from gguf import GGUFReader, GGUFWriter, GGUFValueType
from gguf.quants import dequantize
src, dst = sys.argv[1], sys.argv[2]
r = GGUFReader(src)
w = GGUFWriter(dst, r.fields['general.architecture'].parts[-1].tobytes().decode())
for k, f in r.fields.items():
    if k.startswith('GGUF.') or k == 'general.architecture': continue
    t = f.types[0]
    if t == GGUFValueType.ARRAY:
        st = f.types[1]
        vals = [f.parts[i].tobytes().decode() if st == GGUFValueType.STRING else f.parts[i][0].item() for i in f.data]
        w.add_key_value(k, vals, t, sub_type=st)
    elif t == GGUFValueType.STRING:
        w.add_key_value(k, f.parts[-1].tobytes().decode(), t)
    else:
        w.add_key_value(k, f.parts[-1][0].item(), t)
for t in r.tensors:
    a = dequantize(t.data, t.tensor_type).astype(np.float32)
    shape = tuple(int(x) for x in reversed(t.shape))
    w.add_tensor(t.name, a.reshape(shape))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
