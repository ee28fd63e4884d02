#!/usr/bin/env python3
"""An MXFP4 gpt-oss checkpoint, as OpenAI publishes gpt-oss-20b, from a BF16 stand-in directory.

Usage: make_mxfp4_checkpoint.py HF_DIR OUT_DIR [--check MXFP4_MOE.gguf]

HF_DIR is a gpt-oss directory in transformers' dequantized layout (the shared fixture's
models/gpt-oss/hf: experts as BF16 gate_up_proj [E, C, 2F], gate and up interleaved along 2F, and
down_proj [E, F, C]). OUT_DIR gets config.json (with quantization_config, as gpt-oss-20b's) and
model.safetensors (mxfp4-experts.safetensors: its U8 tensors alone) in which each expert matrix W is stored as the real checkpoints store it:

  W_blocks  uint8 [E, rows, cols / 32, 16]  32 FP4 E2M1 codes per block, two to a byte:
                                             element 2k in byte k's low nibble, 2k + 1 in its high one
  W_scales  uint8 [E, rows, cols / 32]      the block's E8M0 exponent: value = E2M1 * 2^(scale - 127)

with rows the output dimension (gate_up_proj: 2F rows, gate and up interleaved; down_proj: C rows),
the layout transformers' Mxfp4GptOssExperts reads (integrations/mxfp4.py, convert_moe_packed_tensors:
lut[blk & 0x0F] to the even elements, lut[blk >> 4] to the odd ones, ldexp by scales - 127) and
openai/gpt-oss's weights.py. The E2M1 table, in code order: +0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, ...
The other tensors (attention, router, norms, embeddings, the experts' biases) are copied unchanged.

Each block is rounded as ggml's quantize_row_mxfp4_ref rounds it (exponent floor(log2(amax)) - 2 +
127, each element the nearest E2M1 value, the first on a tie), so the checkpoint holds exactly the
experts llama-quantize's MXFP4_MOE writes from the same weights: --check compares every block
with that GGUF's (read by gguf-py; PYTHONPATH=llama.cpp/gguf-py) and fails on any difference.
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np

E2M1_DOUBLED = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], dtype=np.float32)


def read_safetensors(path):
    raw = Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, d in header.items():
        if name == "__metadata__":
            continue
        b, e = d["data_offsets"]
        out[name] = (d["dtype"], d["shape"], data[b:e])
    return out


def bf16_to_f32(buf, shape):
    u = np.frombuffer(buf, dtype=np.uint16).astype(np.uint32) << 16
    return u.view(np.float32).reshape(shape)


def write_safetensors(path, tensors):
    """tensors: name -> (dtype string, shape, bytes); written in name order, as safetensors does."""
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        dtype, shape, buf = tensors[name]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(buf)]}
        offset += len(buf)
        blobs.append(buf)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def quantize_mxfp4(w):
    """w: float32 [..., rows, cols] -> (blocks uint8 [..., rows, cols/32, 16], scales uint8 [..., rows, cols/32])."""
    x = w.reshape(*w.shape[:-1], w.shape[-1] // 32, 32).astype(np.float32)
    amax = np.abs(x).max(axis=-1)
    with np.errstate(divide="ignore"):
        e = np.where(amax > 0, np.floor(np.log2(amax)) - 2 + 127, 0).astype(np.uint8)
    # 2^(e - 128): the scale of the doubled E2M1 values (ggml_e8m0_to_fp32_half), exact in float32
    d = np.ldexp(np.float32(1), e.astype(np.int32) - 128).astype(np.float32)
    err = np.abs(E2M1_DOUBLED * d[..., None, None] - x[..., None])  # [..., nb, 32, 16]
    codes = np.argmin(err, axis=-1).astype(np.uint8)  # the first of equal errors, as ggml's loop
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    return blocks, e


def ggml_blocks(blocks, scales):
    """The same blocks in ggml's block_mxfp4 bytes (scale, then element j low / j + 16 high)."""
    lo, hi = blocks & 0x0F, blocks >> 4
    codes = np.stack((lo, hi), axis=-1).reshape(*blocks.shape[:-1], 32)
    qs = codes[..., :16] | (codes[..., 16:] << 4)
    return np.concatenate((scales[..., None], qs), axis=-1)


def main():
    args = sys.argv[1:]
    check = None
    if "--check" in args:
        i = args.index("--check")
        check = args[i + 1]
        del args[i:i + 2]
    src, out = Path(args[0]), Path(args[1])
    out.mkdir(parents=True, exist_ok=True)
    config = json.loads((src / "config.json").read_text())
    config["quantization_config"] = {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"],
        "quant_method": "mxfp4",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")

    tensors = read_safetensors(src / "model.safetensors")
    written, ggml = {}, {}
    for name, (dtype, shape, buf) in tensors.items():
        if name.endswith("mlp.experts.gate_up_proj") or name.endswith("mlp.experts.down_proj"):
            assert dtype == "BF16"
            w = np.swapaxes(bf16_to_f32(buf, shape), -1, -2)  # [E, in, out] -> [E, out, in]
            blocks, scales = quantize_mxfp4(np.ascontiguousarray(w))
            written[name + "_blocks"] = ("U8", blocks.shape, blocks.tobytes())
            written[name + "_scales"] = ("U8", scales.shape, scales.tobytes())
            g = ggml_blocks(blocks, scales)
            layer = name.split(".")[2]
            if name.endswith("down_proj"):
                ggml[f"blk.{layer}.ffn_down_exps.weight"] = g
            else:
                ggml[f"blk.{layer}.ffn_gate_exps.weight"] = g[:, 0::2]
                ggml[f"blk.{layer}.ffn_up_exps.weight"] = g[:, 1::2]
        else:
            written[name] = (dtype, shape, buf)
    write_safetensors(out / "model.safetensors", written)
    # The experts alone (journey's tests join them with the BF16 directory's other tensors).
    write_safetensors(out / "mxfp4-experts.safetensors", {n: v for n, v in written.items() if v[0] == "U8"})

    if check:
        from gguf import GGUFReader
        r = GGUFReader(check)
        seen = 0
        for t in r.tensors:
            if t.name in ggml:
                theirs = np.asarray(t.data).reshape(ggml[t.name].shape)
                same = np.array_equal(theirs, ggml[t.name])
                print(f"{t.name}: {'identical' if same else 'DIFFERENT'} to {check}'s blocks")
                if not same:
                    sys.exit(1)
                seen += 1
        if seen != len(ggml):
            sys.exit(f"{check}: {seen} of {len(ggml)} expert tensors found")


if __name__ == "__main__":
    main()
