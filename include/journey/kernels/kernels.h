// The dynamics of the transformer: pure functions with explicit dimensions.
// Convention: T = tokens in this call, C = channels (n_embd), activations are row-major
// [T, C] float arrays. matmul() chooses the product kernel (gemv, gemm, quantized dots);
// attention() alone calls BLAS, for a prompt's per-head products.
#pragma once
#include <cstdint>
#include <span>

#include "journey/kernels/matrix.h"

namespace journey {

// Threads of our pool, which runs every parallel loop (OpenBLAS stays at one thread).
// n <= 0 means one per hardware core.
void set_num_threads(int n);
int num_threads();

// OpenBLAS picks its kernels when it is loaded, and Debian's 0.3.21 does not recognise newer
// Xeons: it falls back to its SSE3 "Prescott" kernels, ~3x slower. Returns the core type to
// name in OPENBLAS_CORETYPE (e.g. "SkylakeX" on an AVX-512 CPU) when that happened and the
// variable is not set; nullptr otherwise. main() sets it and re-executes itself.
const char* blas_core_override();

// OpenBLAS starts a worker thread per core when it is loaded, and each spins (sched_yield) for
// about 2^28 cycles before it sleeps: ~0.1 s of CPU in every process that runs that long,
// whether or not it ever calls BLAS (`journey tokenize` spent a third of its CPU time there).
// main() calls this first thing: OpenBLAS at one thread from the start, its workers parked.
void blas_one_thread();

// out[T, n_out] = x[T, n_in] · W (Conv1D) or x · Wᵀ (Linear); dispatches on W.dtype and T.
// prompt_kernels: use a prompt's kernels even for one row, so that the row gets the same bits as
// inside a product of several rows (the forward pass's last block narrows to the last token).
void matmul(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels = false);
// T independent tokens (several sequences decoded together): row t of out has exactly the bits
// of matmul(out_t, x_t, W, 1), while W is read from memory once for all T (a group of rows at a
// time, then from cache for every token): generation bound by memory serves T sequences for
// about the cost of one.
void matmul_tokens(float* out, const float* x, const Matrix& W, int T);

// One product of matmul_many: out[T, W.n_out()] = x[T, W.n_in()] · W.
struct Product {
    float* out;
    const float* x;
    const Matrix* W;
    int T;
};
// Several independent products in one parallel loop (a mixture of experts' chosen experts, as
// llama.cpp's mul_mat_id): the threads take the products' rows as they come, across products.
// Block-quantized W: every row of each x as one token, as matmul_tokens (the bits of matmul on
// that row alone, whatever T and the thread count), x quantized once per row and shared by the
// products with the same x (pointer and T). Float W: each product as matmul(out, x, W, T,
// prompt_kernels), one after another.
void matmul_many(std::span<const Product> products, bool prompt_kernels = false);

// out[C] = row `row` of E, converted to float (embedding lookup).
void embedding_row(float* out, const Matrix& E, int64_t row);

// out[T, C] = (x - mean) / sqrt(var + eps) * w + b, per row (biased variance, like PyTorch).
void layernorm(float* out, const float* x, const float* w, const float* b, int T, int C, float eps);

// out[T, C] = x / sqrt(mean(x²) + eps) * w, per row (RMSNorm, no mean subtraction, no bias).
void rmsnorm(float* out, const float* x, const float* w, int T, int C, float eps);

// x[T, N] += b[N] for every row.
void add_bias(float* x, const float* b, int T, int N);

// out[n] += a[n].
void add(float* out, const float* a, int64_t n);

// In place: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in float (HF gelu_new).
void gelu_new(float* x, int64_t n);

// In place over up[n]: up = gelu_tanh(gate) * up (GeGLU, Gemma's gating; gelu_tanh is gelu_new).
void geglu_tanh(float* up, const float* gate, int64_t n);

// In place over up[n]: up = silu(gate) * up, silu(g) = g / (1 + exp(-g))  (SwiGLU's gating).
void swiglu(float* up, const float* gate, int64_t n);

// In place over x[n]: x = cap * tanh(x / cap) (Gemma 2's soft-capping of scores and logits).
void softcap(float* x, int64_t n, float cap);

// In place over x[n]: exp(x - max) / sum.
void softmax(float* x, int64_t n);

// Rotary position embedding (rope.cpp), in place over x[T, n_heads * D]; row t is at position pos0 + t.
// Only the first R values of each head turn (partial rotary: GPT-NeoX, Phi; R = 0 means all D).
// Pair i of a head (i < R/2) is rotated by the angle pos * inv_freq[i] (theta^(-2i/D) unscaled;
// model/rope_freq.h stretches it for long contexts), cos and sin multiplied by mscale (yarn's and
// longrope's attention factor; 1 leaves them exact). Which two elements form pair i is the
// checkpoint's convention: (2i, 2i+1) interleaved (GGUF, llama2.c, Meta), or (i, i + R/2) half
// (Hugging Face, whose conversion permutes the q/k rows accordingly).
void rope(float* x, int T, int n_heads, int D, int pos0, const float* inv_freq, RopePairing pairing, int R = 0,
          float mscale = 1.0f);
// The same with the unscaled frequencies theta^(-2i/D).
void rope(float* x, int T, int n_heads, int D, int pos0, float theta, RopePairing pairing);

// Causal multi-head attention for T new queries at positions n_past .. n_past+T-1.
//   q       [T, H*D]       queries of the new tokens
//   k, v    [n_past+T, Hkv*D] the cache, every position so far including the new ones
//   z       [T, H*D]       out: per-head weighted sums of values (before the output projection)
//   pattern [H, T, n_past+T] out: attention probabilities, 0 where masked (future keys)
// Query head h reads key/value head h / (H / Hkv). Scores are q·k * scale, soft-capped when
// softcap > 0; with window > 0 the query at position p sees keys p - window + 1 .. p only.
struct AttentionOptions {
    float scale = 0.0f;    // 0: 1/sqrt(D)
    float softcap = 0.0f;  // > 0: scores = softcap * tanh(scores / softcap), before the softmax
    int window = 0;        // > 0: sliding window (keys within `window` positions, itself included)
    // [H] or null: attention sinks (gpt-oss), one learned logit per head that joins the softmax's
    // denominator (exp(sink - max) added to the sum) without a value of its own.
    const float* sinks = nullptr;
};
void attention(float* z, float* pattern, const float* q, const float* k, const float* v,
               int T, int n_past, int H, int Hkv, int D, const AttentionOptions& o = {});
// attention() for one new token (T = 1) over an F16 cache: k and v hold IEEE binary16 bits,
// [n_past+1, Hkv*D]. Each element is converted to float (exactly) as it is read, so the result
// has the bits of attention() on the cache converted to float, without converting it first.
void attention_f16_cache(float* z, float* pattern, const float* q, const uint16_t* k, const uint16_t* v, int n_past,
                         int H, int Hkv, int D, const AttentionOptions& o = {});

}  // namespace journey
