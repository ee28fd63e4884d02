#!/usr/bin/python3
"""Train journey's default model: a small GPT-2 on the King James Bible, on the CPU.

Reproducible on a fresh Debian 12 machine:

    sudo apt-get install python3-torch python3-numpy python3-matplotlib bible-kjv
    /usr/bin/python3 scripts/train_default_model.py --minutes 40   # as for the shipped model

(`--install-deps` runs that apt-get line itself when something is missing.)  Use Debian's
/usr/bin/python3: the packages above install torch for it, not for a pyenv or venv python.

Steps, all in this file (no Hugging Face libraries):
  1. corpus:    `bible -f gen1:1-rev22:21` prints all 31,102 verses, one per line, as
                "Ge1:1 In the beginning ...".  A chapter becomes one document: its verses
                joined by "\\n" (verse numbers dropped), ending in "\\n".  Documents are
                separated by <|endoftext|> in the token stream.
  2. split:     chapters are numbered 0..1188 in canonical order; every 20th chapter
                (index % 20 == 19, so 59 chapters spread over the whole Bible) is the
                validation set and is never seen by the tokenizer trainer or the model.
  3. tokenizer: byte-level BPE in GPT-2 style, trained on the training chapters: GPT-2's
                bytes_to_unicode map and pre-tokenization regex (ASCII classes, which is exact
                for this pure-ASCII corpus), 256 byte tokens, merges, and <|endoftext|> as
                the last id.  The ids are checked by re-encoding everything with an
                independent, straightforward rank-ordered GPT-2 BPE encoder.
  4. model:     GPT-2 exactly (learned positions, pre-LN blocks, fused c_attn, gelu_new,
                ln_f, lm_head tied to wte), AdamW, linear warmup then cosine LR decay over a
                wall-clock budget (--minutes), or over a fixed step count (--steps).
  5. outputs:   models/default/{config.json, model.safetensors, vocab.json, merges.txt,
                expected.json}, models/loss.png, models/train_log.jsonl, models/train_report.json.
"""
import argparse
import heapq
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from collections import Counter, defaultdict

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBIAN_PACKAGES = ["python3-torch", "python3-numpy", "python3-matplotlib", "bible-kjv"]


def install_deps():
    missing = []
    for p in DEBIAN_PACKAGES:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True, text=True)
        if "install ok installed" not in r.stdout:
            missing.append(p)
    if missing:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        print("installing:", " ".join(missing), file=sys.stderr)
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                       check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


# ----------------------------------------------------------------------------------------------
# 1-2. Corpus and split

VERSE_RE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
VAL_EVERY = 20


def load_chapters():
    """[(book_abbrev, chapter_number, text)] in canonical order, from Debian's bible-kjv."""
    out = subprocess.run(["bible", "-f", "gen1:1-rev22:21"], stdin=subprocess.DEVNULL,
                         capture_output=True, check=True).stdout.decode("ascii")
    chapters, key, verses = [], None, []
    n_verses = 0
    for line in out.splitlines():
        m = VERSE_RE.match(line)
        if not m:
            raise SystemExit(f"unexpected line from bible: {line!r}")
        k = (m.group(1), int(m.group(2)))
        if k != key:
            if verses:
                chapters.append((key[0], key[1], "\n".join(verses) + "\n"))
            key, verses = k, []
        verses.append(" ".join(m.group(4).split()))
        n_verses += 1
    chapters.append((key[0], key[1], "\n".join(verses) + "\n"))
    if n_verses != 31102 or len(chapters) != 1189:
        raise SystemExit(f"expected 31102 verses in 1189 chapters, got {n_verses} in {len(chapters)}")
    return chapters


def split_chapters(chapters):
    train = [c for i, c in enumerate(chapters) if i % VAL_EVERY != VAL_EVERY - 1]
    val = [c for i, c in enumerate(chapters) if i % VAL_EVERY == VAL_EVERY - 1]
    return train, val


# ----------------------------------------------------------------------------------------------
# 3. Byte-level BPE, GPT-2 style

# GPT-2's pattern is 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ .
# Python's re has no \p{..}; the corpus is pure ASCII, where \p{L} = [A-Za-z] and \p{N} = [0-9].
PRETOKENIZE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")
EOT = "<|endoftext|>"


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable unicode characters."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs]))


BYTE_ENC = bytes_to_unicode()
BYTE_DEC = {v: k for k, v in BYTE_ENC.items()}


def pretokens(text):
    """Pre-tokenized words, each already mapped through bytes_to_unicode."""
    return ["".join(BYTE_ENC[b] for b in w.encode("utf-8")) for w in PRETOKENIZE.findall(text)]


def train_bpe(texts, vocab_size):
    """Learn merges on word frequencies with incremental pair counts.
    Returns (vocab {token: id}, merges [(a, b)]).  Ids: 0..255 the bytes in byte order,
    then one id per merge in merge order, then <|endoftext|> last."""
    word_freq = Counter()
    for t in texts:
        word_freq.update(pretokens(t))
    words = [list(w) for w in word_freq]
    freqs = list(word_freq.values())
    vocab = {BYTE_ENC[b]: b for b in range(256)}
    n_merges = vocab_size - 256 - 1

    pair_count = defaultdict(int)
    pair_words = defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += freqs[i]
            pair_words[(a, b)].add(i)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)

    merges = []
    while len(merges) < n_merges and heap:
        negc, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negc or negc == 0:
            continue  # stale heap entry
        new = pair[0] + pair[1]
        if new in vocab:  # same string reachable by another merge: would not add a token
            pair_count[pair] = 0
            continue
        merges.append(pair)
        vocab[new] = len(vocab)
        changed = set()
        for i in list(pair_words[pair]):
            w, f = words[i], freqs[i]
            for a, b in zip(w, w[1:]):
                pair_count[(a, b)] -= f
                changed.add((a, b))
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and w[j] == pair[0] and w[j + 1] == pair[1]:
                    out.append(new)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for a, b in zip(out, out[1:]):
                pair_count[(a, b)] += f
                pair_words[(a, b)].add(i)
                changed.add((a, b))
        for p in changed:
            if pair_count[p] > 0 and p != pair:
                heapq.heappush(heap, (-pair_count[p], p))
        del pair_count[pair]
        del pair_words[pair]
    vocab[EOT] = len(vocab)
    seg = {"".join(w): w for w in words}  # the trainer's own segmentation of every training word
    return vocab, merges, seg


class GPT2Encoder:
    """A plain GPT-2 BPE encoder (as in OpenAI's encoder.py): repeatedly merge the
    lowest-ranked adjacent pair of the word.  Independent of the trainer above."""

    def __init__(self, vocab, merges):
        self.vocab = vocab
        self.inv = {i: t for t, i in vocab.items()}
        self.ranks = {m: r for r, m in enumerate(merges)}
        self.cache = {}

    def bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            best, best_rank = None, None
            for p in zip(parts, parts[1:]):
                r = self.ranks.get(p)
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = p, r
            if best is None:
                break
            out, j = [], 0
            while j < len(parts):
                if j + 1 < len(parts) and parts[j] == best[0] and parts[j + 1] == best[1]:
                    out.append(best[0] + best[1])
                    j += 2
                else:
                    out.append(parts[j])
                    j += 1
            parts = out
        self.cache[word] = parts
        return parts

    def encode(self, text):
        """Text without special tokens -> ids."""
        return [self.vocab[t] for w in pretokens(text) for t in self.bpe(w)]

    def decode(self, ids):
        return bytes(BYTE_DEC[c] for i in ids for c in self.inv[i]).decode("utf-8", errors="replace")


def save_tokenizer(vocab, merges, outdir):
    with open(os.path.join(outdir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(outdir, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")


def load_tokenizer(outdir):
    with open(os.path.join(outdir, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(outdir, "merges.txt"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[0] == "#version: 0.2"
    merges = [tuple(l.split(" ")) for l in lines[1:] if l]
    return vocab, merges


# ----------------------------------------------------------------------------------------------
# 4. The model: GPT-2, in plain PyTorch, with Hugging Face's parameter names and layouts

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Conv1D(nn.Module):
    """GPT-2's 'Conv1D': a linear layer whose weight is stored [in, out]."""

    def __init__(self, nx, nf):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(0.0, 0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        shape = x.shape[:-1] + (self.weight.shape[1],)
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(shape)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, d, n_head, n_ctx, dropout):
        super().__init__()
        self.n_head = n_head
        self.c_attn = Conv1D(d, 3 * d)
        self.c_proj = Conv1D(d, d)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.drop(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, d, dropout):
        super().__init__()
        self.c_fc = Conv1D(d, 4 * d)
        self.c_proj = Conv1D(4 * d, d)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop(self.c_proj(gelu_new(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, d, n_head, n_ctx, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = Attention(d, n_head, n_ctx, dropout)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = MLP(d, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab_size, n_ctx, d, n_layer, n_head, dropout=0.0):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, d)
        self.wpe = nn.Embedding(n_ctx, d)
        nn.init.normal_(self.wte.weight, 0.0, 0.02)
        nn.init.normal_(self.wpe.weight, 0.0, 0.01)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList([Block(d, n_head, n_ctx, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))

    def forward(self, idx):
        T = idx.shape[1]
        x = self.drop(self.wte(idx) + self.wpe(torch.arange(T, device=idx.device)))
        for block in self.h:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.t()  # lm_head tied to wte


# ----------------------------------------------------------------------------------------------
# 5. Files

def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: torch.Tensor (float32)} -> the safetensors format:
    u64 little-endian header length, JSON header, then the raw little-endian data."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name].detach().to(torch.float32).contiguous().cpu()
        data = t.numpy().astype("<f4", copy=False).tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * ((8 - len(hjson) % 8) % 8)  # pad so the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        assert info["dtype"] == "F32"
        out[name] = torch.from_numpy(np.frombuffer(raw[8 + n + a:8 + n + b], dtype="<f4").copy()).view(info["shape"])
    return out


def hf_config(args, vocab_size):
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": vocab_size,
        "n_positions": args.ctx,
        "n_ctx": args.ctx,
        "n_embd": args.width,
        "n_layer": args.layers,
        "n_head": args.heads,
        "n_inner": None,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "initializer_range": 0.02,
        "resid_pdrop": args.dropout,
        "embd_pdrop": args.dropout,
        "attn_pdrop": args.dropout,
        "bos_token_id": vocab_size - 1,
        "eos_token_id": vocab_size - 1,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
    }


# ----------------------------------------------------------------------------------------------

def encode_docs(enc, docs, eot_id):
    """Documents -> one stream: doc0 <eot> doc1 <eot> ... (an <eot> also leads, as a start)."""
    out = [eot_id]
    for d in docs:
        out.extend(enc.encode(d))
        out.append(eot_id)
    return np.array(out, dtype=np.int64)


@torch.no_grad()
def eval_windows(model, stream, ctx, starts):
    """Mean next-token loss over windows stream[s : s+ctx+1]."""
    model.eval()
    tot, n = 0.0, 0
    for i in range(0, len(starts), 16):
        xb = torch.stack([torch.from_numpy(stream[s:s + ctx + 1]) for s in starts[i:i + 16]])
        logits = model(xb[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), xb[:, 1:].reshape(-1), reduction="sum")
        tot += loss.item()
        n += xb[:, 1:].numel()
    model.train()
    return tot / n


@torch.no_grad()
def full_nll(model, stream, ctx):
    """Mean NLL of every token of stream after the first, in non-overlapping windows
    (each window's first token is predicted from the previous window's context only)."""
    model.eval()
    tot, n = 0.0, 0
    for s in range(0, len(stream) - 1, ctx):
        x = torch.from_numpy(stream[s:s + ctx + 1])[None]
        if x.shape[1] < 2:
            break
        logits = model(x[:, :-1])
        tot += F.cross_entropy(logits[0], x[0, 1:], reduction="sum").item()
        n += x.shape[1] - 1
    model.train()
    return tot / n, n


def unigram_nll(train_stream, val_stream, vocab_size):
    """Add-one smoothed unigram model from the training tokens, on the same validation targets."""
    counts = np.bincount(train_stream, minlength=vocab_size).astype(np.float64) + 1.0
    logp = np.log(counts / counts.sum())
    return float(-logp[val_stream[1:]].mean())


@torch.no_grad()
def generate(model, ids, n, ctx, temperature=0.0, top_k=0, gen=None):
    model.eval()
    ids = list(ids)
    for _ in range(n):
        logits = model(torch.tensor([ids[-ctx:]]))[0, -1]
        if temperature == 0.0:
            nxt = int(torch.argmax(logits))
        else:
            logits = logits / temperature
            if top_k:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[-1]] = float("-inf")
            nxt = int(torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen))
        ids.append(nxt)
    model.train()
    return ids


def train_loop(args, model, opt, train_stream, val_stream, rng, log_path, V):
    """AdamW steps on random windows; returns (steps, tokens, training seconds)."""
    # fixed evaluation windows, so the curves are comparable over time
    val_starts = list(np.random.default_rng(1).integers(0, len(val_stream) - args.ctx - 1, 16))
    train_eval_starts = list(np.random.default_rng(2).integers(0, len(train_stream) - args.ctx - 1, 16))
    budget = args.minutes * 60.0
    log = open(log_path, "w")

    def lr_at(step, frac):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        frac = min(max(frac, 0.0), 1.0)
        return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1.0 + math.cos(math.pi * frac))

    def record(step, tokens, elapsed, lr, recent):
        vl = eval_windows(model, val_stream, args.ctx, val_starts)
        tl = eval_windows(model, train_stream, args.ctx, train_eval_starts)
        rec = {"step": step, "tokens": tokens, "seconds": round(elapsed, 1), "lr": lr,
               "train_loss": tl, "train_loss_running": recent, "val_loss": vl}
        log.write(json.dumps(rec) + "\n")
        log.flush()
        print(f"step {step:6d}  tokens {tokens / 1e6:7.2f}M  {elapsed / 60:5.1f} min  lr {lr:.2e}  "
              f"train {tl:.4f} (running {recent:.4f})  val {vl:.4f}", flush=True)

    t_train = time.time()
    eval_clock = 0.0  # time spent evaluating is not counted against the budget
    step, tokens, last_eval, recent = 0, 0, -1e9, []
    lr = args.lr
    while True:
        elapsed = time.time() - t_train - eval_clock
        frac = step / args.steps if args.steps else elapsed / budget
        if frac >= 1.0:
            break
        if elapsed - last_eval >= args.eval_every:
            t_e = time.time()
            record(step, tokens, elapsed, lr, float(np.mean(recent)) if recent else float("nan"))
            recent = []
            last_eval = elapsed
            eval_clock += time.time() - t_e
        lr = lr_at(step, frac)
        for g in opt.param_groups:
            g["lr"] = lr
        starts = rng.integers(0, len(train_stream) - args.ctx - 1, args.batch)
        xb = torch.from_numpy(np.stack([train_stream[s:s + args.ctx + 1] for s in starts]))
        logits = model(xb[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), xb[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        recent.append(loss.item())
        step += 1
        tokens += xb[:, 1:].numel()
    train_seconds = time.time() - t_train - eval_clock
    record(step, tokens, train_seconds, lr, float(np.mean(recent)) if recent else float("nan"))
    log.close()
    return step, tokens, train_seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--install-deps", action="store_true", help="apt-get install what is missing first")
    ap.add_argument("--out", default=os.path.join(REPO, "models"), help="models directory (default: repo's models/)")
    ap.add_argument("--vocab-size", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=192)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--batch", type=int, default=8, help="sequences per step")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup", type=int, default=50, help="warmup steps")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--minutes", type=float, default=45.0, help="wall-clock training budget; the LR schedule follows it")
    ap.add_argument("--steps", type=int, default=0, help="train exactly this many steps instead of a time budget")
    ap.add_argument("--eval-every", type=float, default=120.0, help="seconds between evaluations")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--tokenizer-only", action="store_true")
    ap.add_argument("--resume-final", action="store_true",
                    help="skip training: load models/ckpt_final.pt (written after training) and redo the outputs")
    args = ap.parse_args()

    if args.install_deps:
        install_deps()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    outdir = os.path.join(args.out, "default")
    os.makedirs(outdir, exist_ok=True)
    t_all = time.time()

    # -- corpus
    chapters = load_chapters()
    train_ch, val_ch = split_chapters(chapters)
    train_docs = [c[2] for c in train_ch]
    val_docs = [c[2] for c in val_ch]
    print(f"corpus: {len(chapters)} chapters, {sum(len(c[2]) for c in chapters)} bytes; "
          f"train {len(train_ch)} chapters {sum(map(len, train_docs))} bytes, "
          f"val {len(val_ch)} chapters {sum(map(len, val_docs))} bytes", flush=True)

    # -- tokenizer
    t0 = time.time()
    vocab, merges, seg = train_bpe(train_docs, args.vocab_size)
    assert len(vocab) == args.vocab_size and vocab[EOT] == args.vocab_size - 1
    save_tokenizer(vocab, merges, outdir)
    vocab, merges = load_tokenizer(outdir)  # from here on, only what is on disk
    enc = GPT2Encoder(vocab, merges)
    # verification: the plain rank-ordered encoder must reproduce the trainer's segmentation
    for w, parts in seg.items():
        if enc.bpe(w) != parts:
            raise SystemExit(f"BPE mismatch on {w!r}: trainer {parts} encoder {enc.bpe(w)}")
    for d in train_docs[:50] + val_docs:
        assert enc.decode(enc.encode(d)) == d
    eot_id = vocab[EOT]
    train_stream = encode_docs(enc, train_docs, eot_id)
    val_stream = encode_docs(enc, val_docs, eot_id)
    print(f"tokenizer: {len(vocab)} ids ({len(merges)} merges) in {time.time() - t0:.1f}s; "
          f"verified on {len(seg)} training words; train {len(train_stream)} tokens, "
          f"val {len(val_stream)} tokens ({sum(map(len, val_docs)) / len(val_stream):.2f} bytes/token)", flush=True)
    if args.tokenizer_only:
        return

    # -- model
    V = len(vocab)
    model = GPT2(V, args.ctx, args.width, args.layers, args.heads, args.dropout)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {args.layers} layers, width {args.width}, {args.heads} heads, ctx {args.ctx}, "
          f"vocab {V}: {n_params} parameters", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

    log_path = os.path.join(args.out, "train_log.jsonl")
    ckpt_path = os.path.join(args.out, "ckpt_final.pt")
    if args.resume_final:
        ck = torch.load(ckpt_path)
        model.load_state_dict(ck["model"])
        step, tokens, train_seconds, log_path = ck["step"], ck["tokens"], ck["train_seconds"], ck["log_path"]
    else:
        step, tokens, train_seconds = train_loop(args, model, opt, train_stream, val_stream, rng, log_path, V)
        torch.save({"model": model.state_dict(), "step": step, "tokens": tokens,
                    "train_seconds": train_seconds, "log_path": log_path}, ckpt_path)

    # -- save
    state = {k: v for k, v in model.state_dict().items()}
    write_safetensors(os.path.join(outdir, "model.safetensors"), state, {"format": "pt"})
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(hf_config(args, V), f, indent=2)
        f.write("\n")
    # reload from disk: everything below is computed from the saved files
    loaded = read_safetensors(os.path.join(outdir, "model.safetensors"))
    model = GPT2(V, args.ctx, args.width, args.layers, args.heads, 0.0)
    missing = model.load_state_dict(loaded, strict=True)
    model.eval()

    # -- final numbers
    val_nll, n_val = full_nll(model, val_stream, args.ctx)
    uni_nll = unigram_nll(train_stream, val_stream, V)
    print(f"final: val loss {val_nll:.4f} (ppl {math.exp(val_nll):.2f}) over {n_val} tokens; "
          f"unigram add-one {uni_nll:.4f} (ppl {math.exp(uni_nll):.2f})", flush=True)

    # -- expected values for journey's tests (float64)
    m64 = GPT2(V, args.ctx, args.width, args.layers, args.heads, 0.0).double()
    m64.load_state_dict({k: v.double() for k, v in loaded.items()})
    m64.eval()
    prompts = [
        val_docs[0].split("\n")[0],                       # first verse of a held-out chapter
        val_docs[10].split("\n")[0][:60].rsplit(" ", 1)[0],  # a prefix of another one
        "\n".join(val_docs[30].split("\n")[:2]),          # two verses, across a newline
        val_docs[45].split("\n")[2],                      # a verse from the middle of a chapter
    ]
    expected = {"description": "journey test vectors: token ids from the GPT-2 BPE of vocab.json/merges.txt "
                               "(no special tokens in the text), and the model's logits computed in float64 "
                               "by PyTorch from model.safetensors. logprobs[i] = log p(ids[i+1] | ids[:i+1]).",
                "model": "models/default", "prompts": []}
    with torch.no_grad():
        for p in prompts:
            ids = enc.encode(p)
            assert len(ids) <= args.ctx
            logits = m64(torch.tensor([ids]))[0]
            lp = F.log_softmax(logits, dim=-1)
            last = logits[-1]
            top = torch.topk(last, 10)
            expected["prompts"].append({
                "text": p,
                "ids": ids,
                "last_logits": [float(f"{x:.10g}") for x in last.tolist()],
                "last_logits_sum": float(last.sum()),
                "last_argmax": int(torch.argmax(last)),
                "top10_ids": top.indices.tolist(),
                "top10_logits": top.values.tolist(),
                "logprobs": [float(lp[i, ids[i + 1]]) for i in range(len(ids) - 1)],
            })
    with open(os.path.join(outdir, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")

    # -- samples
    gen = torch.Generator().manual_seed(42)
    samples = []
    for p in ["And the LORD spake unto Moses, saying,", "In the beginning", "Blessed are the",
              "And Jesus answered and said unto them,"]:
        g = generate(model, [eot_id] + enc.encode(p), 60, args.ctx)
        s = generate(model, [eot_id] + enc.encode(p), 60, args.ctx, temperature=0.8, top_k=40, gen=gen)
        samples.append({"prompt": p, "greedy": enc.decode([i for i in g[1:] if i != eot_id]),
                        "sampled_t0.8_top40": enc.decode([i for i in s[1:] if i != eot_id])})
        print(f"--- greedy: {samples[-1]['greedy']!r}\n--- sampled: {samples[-1]['sampled_t0.8_top40']!r}", flush=True)

    report = {
        "corpus": {"chapters": len(chapters), "train_chapters": len(train_ch), "val_chapters": len(val_ch),
                   "train_bytes": sum(map(len, train_docs)), "val_bytes": sum(map(len, val_docs)),
                   "val_chapter_refs": [f"{b}{c}" for b, c, _ in val_ch]},
        "tokenizer": {"vocab_size": V, "merges": len(merges), "train_tokens": int(len(train_stream)),
                      "val_tokens": int(len(val_stream))},
        "model": {"layers": args.layers, "width": args.width, "heads": args.heads, "ctx": args.ctx,
                  "parameters": n_params,
                  "safetensors_bytes": os.path.getsize(os.path.join(outdir, "model.safetensors"))},
        "training": {"steps": step, "batch": args.batch, "tokens_seen": tokens,
                     "epochs": tokens / len(train_stream), "train_seconds": round(train_seconds, 1),
                     "total_seconds": round(time.time() - t_all, 1), "threads": args.threads,
                     "lr": args.lr, "min_lr": args.min_lr, "warmup": args.warmup,
                     "weight_decay": args.weight_decay, "dropout": args.dropout, "seed": args.seed,
                     "minutes": args.minutes, "fixed_steps": args.steps},
        "final": {"val_loss": val_nll, "val_ppl": math.exp(val_nll), "val_tokens_scored": n_val,
                  "unigram_loss": uni_nll, "unigram_ppl": math.exp(uni_nll)},
        "samples": samples,
    }
    with open(os.path.join(args.out, "train_report.json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    plot_losses(log_path, os.path.join(args.out, "loss.png"), uni_nll)
    print(f"done in {time.time() - t_all:.0f}s", flush=True)


def plot_losses(log_path, png_path, unigram=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    recs = [json.loads(l) for l in open(log_path) if l.strip()]
    x = [r["tokens"] / 1e6 for r in recs]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=100)
    ax.plot(x, [r["train_loss"] for r in recs], label="train (16 fixed windows of 256)")
    ax.plot(x, [r["val_loss"] for r in recs], label="validation (16 fixed windows of 256)")
    if unigram is not None:
        ax.axhline(unigram, color="gray", ls="--", lw=1, label=f"unigram baseline ({unigram:.2f})")
    ax.set_xlabel("training tokens (millions)")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title("journey default model: GPT-2 on the KJV Bible")
    ax.set_ylim(bottom=min(r["val_loss"] for r in recs) - 0.3,
                top=max(unigram or 0, 7.0) + 0.3)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path)


if __name__ == "__main__":
    main()
