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
        self.is_fast = True
        self.vocab_size = len(t["model"]["vocab"])
        stm = Path(d) / "special_tokens_map.json"
        sp = []
        if stm.exists():
            for k, v in json.loads(stm.read_text()).items():
                for e in (v if isinstance(v, list) else [v]):
                    c = e["content"] if isinstance(e, dict) else e
                    if c not in sp: sp.append(c)
        if __import__("os").environ.get("STUB_SPECIAL_ADDED"):
            for a in t.get("added_tokens", []):
                if a.get("special") and a["content"] not in sp: sp.append(a["content"])
        self.all_special_tokens = sp
        self.all_special_ids = [self.vocab[c] for c in sp if c in self.vocab]
        self._tj = t

    def get_vocab(self):
        return dict(self.vocab)

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
