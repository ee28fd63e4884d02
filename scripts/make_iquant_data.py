#!/usr/bin/env python3
"""Write tests/data/quant/iquant_rows.json (tests/kernels/blocks/test_iquant.cpp):

- rows: from ../shared/fixtures/quant/imatrix/dequant/*.json, the first row of up to two tensors
  of each importance-matrix, ternary and MXFP4 type: its raw blocks (as llama-quantize wrote
  them) and the row dequantized by gguf-py (== ggml's to_float, bit for bit, per the fixture).
- sweeps: per type, the FNV-1a 64 hash of the float32 bits gguf-py's dequantize gives for
  `blocks` pseudo-random blocks (the rule below, which the test repeats), so that every grid
  entry and sign pattern is exercised (coverage checked here), with the type's f16 scale forced
  finite. gguf-py's grids come from its own encoding (grid_hex + grid_map), not ggml-common.h.

Rule: x = seed (uint64); next byte: x = x * 6364136223846793005 + 1442695040888963407 (mod 2^64),
byte = x >> 56. A block is block_bytes such bytes in order; then the f16 d at offset `d_at` (if
any) becomes 0x3000 | (u16 at d_at & 0x3ff); IQ1_M clears bit 6 of byte 55 (the f16 d's exponent
top bit, spread over the scales); MXFP4 leaves e as drawn.

  PYTHONPATH=/work/ref/llama.cpp/gguf-py /usr/bin/python3 scripts/make_iquant_data.py \
      /work/shared/fixtures/quant/imatrix tests/data/quant/iquant_rows.json
"""
import json
import sys

import numpy as np
from gguf import quants
from gguf.constants import GGMLQuantizationType as T

TYPES = {  # name: (block elements, block bytes, d offset or None)
    "IQ2_XXS": (256, 66, 0), "IQ2_XS": (256, 74, 0), "IQ2_S": (256, 82, 0), "IQ3_XXS": (256, 98, 0),
    "IQ3_S": (256, 110, 0), "IQ1_S": (256, 50, 0), "IQ1_M": (256, 56, None), "TQ1_0": (256, 54, 52),
    "TQ2_0": (256, 66, 64), "MXFP4": (32, 17, None),
}
BLOCKS = 1024
SEED = 37


def blocks_for(name):
    _, nbytes, d_at = TYPES[name]
    x = SEED
    raw = bytearray()
    for _ in range(BLOCKS * nbytes):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        raw.append(x >> 56)
    for b in range(BLOCKS):
        o = b * nbytes
        if d_at is not None:
            v = 0x3000 | (int.from_bytes(raw[o + d_at:o + d_at + 2], "little") & 0x3ff)
            raw[o + d_at:o + d_at + 2] = v.to_bytes(2, "little")
        if name == "IQ1_M":
            raw[o + 55] &= 0xbf
    return bytes(raw)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) % (1 << 64)
    return h


def coverage(name, raw):
    """Fraction of grid entries hit by the sweep (1.0 required for the grid types)."""
    a = np.frombuffer(raw, dtype=np.uint8).reshape(BLOCKS, -1)
    if name == "IQ2_XXS":
        idx = a[:, 2:66].reshape(BLOCKS, 8, 8)[:, :, :4].ravel(); n = 256
    elif name == "IQ2_XS":
        idx = (a[:, 2:66].copy().view(np.uint16) & 511).ravel(); n = 512
    elif name == "IQ2_S":
        qs = a[:, 2:34].reshape(BLOCKS, 8, 4).astype(np.int32); qh = a[:, 66:74].astype(np.int32)
        idx = (qs | ((qh[:, :, None] << np.array([8, 6, 4, 2])) & 0x300)).ravel(); n = 1024
    elif name == "IQ3_XXS":
        idx = a[:, 2:66].ravel(); n = 256
    elif name == "IQ3_S":
        qs = a[:, 2:66].reshape(BLOCKS, 8, 8).astype(np.int32); qh = a[:, 66:74].astype(np.int32)
        sh = np.array([8, 7, 6, 5, 4, 3, 2, 1])
        idx = (qs | ((qh[:, :, None] << sh) & 256)).ravel(); n = 512
    elif name == "IQ1_S":
        qs = a[:, 2:34].reshape(BLOCKS, 8, 4).astype(np.int32); qh = a[:, 34:50].copy().view(np.uint16).astype(np.int32)
        idx = (qs | (((qh[:, :, None] >> np.array([0, 3, 6, 9])) & 7) << 8)).ravel(); n = 2048
    elif name == "IQ1_M":
        qs = a[:, 0:32].reshape(BLOCKS, 16, 2).astype(np.int32); qh = a[:, 32:48].astype(np.int32)
        idx = (qs | (((qh[:, :, None] >> np.array([0, 4])) & 7) << 8)).ravel(); n = 2048
    else:
        return None
    return len(set(idx.tolist())) / n


def main():
    fixture, out = sys.argv[1], sys.argv[2]
    rows = []
    for name in TYPES:
        seen = 0
        for f in ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ3_M", "TQ1_0", "TQ2_0", "MXFP4_MOE"]:
            d = json.load(open(f"{fixture}/dequant/{f}.json"))
            for t in d["tensors"]:
                if t["type"] != name or seen == 2 or any(r["tensor"] == t["name"] and r["type"] == name for r in rows):
                    continue
                assert t["bit_identical_gguf_py_vs_ggml"]
                rows.append({"file": d["file"], "tensor": t["name"], "type": name,
                             "blocks_hex": t["block_bytes_first_row_hex"], "row0": t["rows"][0]})
                seen += 1
        assert seen >= 1, name
    sweeps = []
    for name in TYPES:
        raw = blocks_for(name)
        qt = getattr(T, name)
        vals = quants.dequantize(np.frombuffer(raw, dtype=np.uint8), qt).astype(np.float32)
        assert vals.size == BLOCKS * TYPES[name][0]
        cov = coverage(name, raw)
        assert cov is None or cov == 1.0, (name, cov)
        sweeps.append({"type": name, "blocks": BLOCKS, "seed": SEED, "grid_coverage": cov,
                       "fnv1a64": f"{fnv1a64(vals.tobytes()):016x}"})
    json.dump({"source": "scripts/make_iquant_data.py: fixture rows from ../shared/fixtures/quant/imatrix/dequant "
                         "(gguf-py == ggml to_float) and gguf-py dequantized sweeps of pseudo-random blocks",
               "rows": rows, "sweeps": sweeps}, open(out, "w"), separators=(",", ":"))
    print(f"{len(rows)} rows, {len(sweeps)} sweeps", file=sys.stderr)


if __name__ == "__main__":
    main()
