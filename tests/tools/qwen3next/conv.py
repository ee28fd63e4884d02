# convert_hf_to_gguf.py with the transformers stub (tests/tools/qwen35moe/transformers_stub.py and
# tqdm_stub.py as transformers/__init__.py and tqdm/__init__.py under STUB) and the pre-tokenizer
# forced to PRE (default "qwen2"; the stand-in vocabulary's hash is not in the converter's table),
# as the shared qwen3moe (qwen2) and qwen35 (qwen35) fixtures were made.
# Usage: [PRE=qwen35] STUB=DIR /usr/bin/python3 conv.py HF --outtype f32 --outfile F
import os, sys, runpy
sys.path.insert(0, os.environ.get('STUB', '/tmp/n3/stub'))
sys.path.insert(1, '/work/ref/llama.cpp')
sys.argv = ['convert_hf_to_gguf.py'] + sys.argv[1:]
import torch
for _n in ('float8_e4m3fn', 'float8_e5m2'):
    if not hasattr(torch, _n):
        setattr(torch, _n, type(_n, (), {})())  # torch 1.13 has no float8 types (unused here)
import conversion.base as base
_pre = os.environ.get('PRE', 'qwen2')
base.TextModel.get_vocab_base_pre = lambda self, tokenizer: _pre
runpy.run_path('/work/ref/llama.cpp/convert_hf_to_gguf.py', run_name='__main__')
