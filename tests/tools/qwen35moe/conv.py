# convert_hf_to_gguf.py with the transformers stub and the pre-tokenizer forced to "qwen35"
# (the stand-in vocabulary's hash is not in the converter's table), as the qwen35 fixture was made.
import sys, runpy
sys.path.insert(0, '/tmp/h3/stub')
sys.path.insert(1, '/work/ref/llama.cpp')
sys.argv = ['convert_hf_to_gguf.py'] + sys.argv[1:]
import torch
for _n in ('float8_e4m3fn', 'float8_e5m2'):
    if not hasattr(torch, _n):
        setattr(torch, _n, type(_n, (), {})())  # torch 1.13 has no float8 types (unused here)
import conversion.base as base
base.TextModel.get_vocab_base_pre = lambda self, tokenizer: 'qwen35'
runpy.run_path('/work/ref/llama.cpp/convert_hf_to_gguf.py', run_name='__main__')
