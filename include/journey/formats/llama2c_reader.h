// llama2.c checkpoints (Karpathy's run.c "legacy" export):
//   int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
//   (vocab_size < 0 means the classifier is stored separately instead of shared with the
//   embedding), then float32 tensors, each stacked over the layers:
//   token_embedding (vocab, dim), rms_att (L, dim), wq (L, dim, dim), wk (L, kv_dim, dim),
//   wv (L, kv_dim, dim), wo (L, dim, dim), rms_ffn (L, dim), w1 (L, hidden, dim),
//   w2 (L, dim, hidden), w3 (L, hidden, dim), rms_final (dim),
//   freq_cis_real, freq_cis_imag (seq_len, head_size / 2) (unused), [wcls (vocab, dim)].
// Matrices are [out, in] row-major, like GGUF's, and RoPE rotates adjacent pairs (GGUF's
// "normal" llama rope), so the model code binds both formats through one name table.
#pragma once
#include <filesystem>

#include "journey/formats/model_file.h"

namespace journey {

// Reads a checkpoint into GGUF-style names: token_embd.weight, blk.N.attn_norm.weight,
// blk.N.attn_q/attn_k/attn_v/attn_output.weight, blk.N.ffn_norm.weight,
// blk.N.ffn_gate (w1) / ffn_down (w2) / ffn_up (w3).weight, output_norm.weight, and
// output.weight only when the classifier is not shared (as in GGUF, a missing output.weight
// means "use token_embd.weight"). Metadata uses GGUF keys: general.architecture = "llama",
// llama.embedding_length, llama.feed_forward_length, llama.block_count,
// llama.attention.head_count, llama.attention.head_count_kv, llama.context_length,
// llama.vocab_size, llama.rope.dimension_count, llama.rope.freq_base,
// llama.attention.layer_norm_rms_epsilon.
// Throws ModelError naming the file when the header is implausible or the size does not match.
ModelFile read_llama2c(const std::filesystem::path& path);

}  // namespace journey
