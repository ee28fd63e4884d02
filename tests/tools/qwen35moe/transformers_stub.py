# transformers stub for convert_hf_to_gguf.py (transformers is not installed): AutoConfig refuses
# (the converter then reads config.json), AutoTokenizer reads tokenizer.json's vocabulary and
# added tokens (all the converter's get_vocab_base needs for a byte-level BPE model).
import json, os
class AutoConfig:
    @staticmethod
    def from_pretrained(*a, **k):
        raise OSError("transformers stub: AutoConfig is not available here; use config.json")
class _Added:
    def __init__(self, d):
        self.content = d['content']; self.special = d.get('special', False); self.normalized = d.get('normalized', False)
class _Tok:
    def __init__(self, d):
        j = json.load(open(os.path.join(d, 'tokenizer.json'), encoding='utf-8'))
        self.vocab = dict(j['model']['vocab'])
        self._added = {t['id']: _Added(t) for t in j.get('added_tokens', [])}
        for i, t in self._added.items():
            self.vocab[t.content] = i
        self.added_tokens_decoder = self._added
    def get_vocab(self):
        return self.vocab
    def get_added_vocab(self):
        return {t.content: i for i, t in self._added.items()}
    def encode(self, text, add_special_tokens=True):
        return [text]
    def decode(self, ids, **k):
        return ''.join(ids)
class AutoTokenizer:
    @staticmethod
    def from_pretrained(d, **k):
        return _Tok(d)
