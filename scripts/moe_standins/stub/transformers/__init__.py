# A stand-in for transformers, enough for llama.cpp's convert_hf_to_gguf.py on the stand-ins:
# AutoConfig refuses (the converter then reads config.json); AutoTokenizer reads tokenizer.json's
# vocabulary and added tokens; encode/decode are never needed (get_vocab_base_pre is given).
import json
from pathlib import Path


class AutoConfig:
    @staticmethod
    def from_pretrained(*a, **k):
        raise OSError("stub transformers: no AutoConfig")


class _Added:
    def __init__(self, d):
        self.content = d["content"]
        self.special = d.get("special", False)
        self.normalized = d.get("normalized", True)


class _Tok:
    def __init__(self, d):
        t = json.loads((Path(d) / "tokenizer.json").read_text())
        self.vocab = dict(t["model"]["vocab"])
        self._added = {a["id"]: _Added(a) for a in t.get("added_tokens", [])}
        for i, a in self._added.items():
            self.vocab[a.content] = i
        self.added_tokens_decoder = self._added

    def get_added_vocab(self):
        return {a.content: i for i, a in self._added.items()}

    def encode(self, text, add_special_tokens=True):
        return [text]

    def decode(self, ids):
        return "".join(ids)


class AutoTokenizer:
    @staticmethod
    def from_pretrained(d, **k):
        return _Tok(d)
