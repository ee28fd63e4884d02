# llama.cpp's converter with the stub transformers, the pre-tokenizer name given (--pre NAME),
# as the shared fixtures' tools/convert.py --pre does.
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__) + "/stub")
sys.path.insert(0, "/work/ref/llama.cpp")
sys.path.insert(0, "/work/ref/llama.cpp/gguf-py")
pre = None
if "--pre" in sys.argv:
    i = sys.argv.index("--pre"); pre = sys.argv[i + 1]; del sys.argv[i:i + 2]
import torch
class _Placeholder:  # dtypes torch 1.13 lacks; never met in these checkpoints
    def __init__(self, n): self.n = n
    def __repr__(self): return "placeholder " + self.n
for _n in ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "uint16", "uint32", "uint64"]:
    if not hasattr(torch, _n): setattr(torch, _n, _Placeholder(_n))
import conversion.base as base
if pre:
    base.TextModel.get_vocab_base_pre = lambda self, tok: pre
import runpy
sys.argv[0] = "/work/ref/llama.cpp/convert_hf_to_gguf.py"
runpy.run_path(sys.argv[0], run_name="__main__")
