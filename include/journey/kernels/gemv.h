// Our own kernels for what OpenBLAS cannot do well or at all: matrix-vector products over F32,
// F16 and BF16 weights read in place (generation, one token at a time), and the matrix-matrix
// product of prompts for the same dtypes. Each has a portable C++ version and an AVX-512
// version chosen at run time by a CPU feature check; the two give the same bits.
//
// Layouts as in weights.h: Linear W [n_out, n_in] (y[o] = W[o,:] · x), Conv1D W [n_in, n_out]
// (y = Σ_i x[i] · W[i,:]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "journey/kernels/matrix.h"

namespace journey {

// true: always use the portable kernels (tests, and machines without AVX-512).
// JOURNEY_PORTABLE_KERNELS=1 in the environment sets it at start-up.
void force_portable_kernels(bool on);
// true: the AVX2 kernels (AVX2, FMA, F16C) even where AVX-512 is present (tests, to run every
// path on one machine); JOURNEY_KERNELS=avx2 in the environment sets it at start-up.
void force_avx2_kernels(bool on);
// Which kernels run: "avx512", "avx2" (CPUs without AVX-512, or forced) or "portable". The
// quantized dots' AVX-512 kernels also need VNNI (dot.h: quant_dot_fast_available); where it
// is missing they take the AVX2 ones.
const char* kernel_isa();

// How the fast one-token kernels (gemv's Linear rows, the quantized dots) walk the weights;
// the arithmetic, and so every bit of the result, is the same in both:
//   interleaved: a few rows at once with software prefetching (best on Intel);
//   sequential: one row after another, asking for the weights a fixed distance further on in
//   the stream (best on AMD Zen).
// Chosen by the CPU's vendor at run time; JOURNEY_STREAM_SHAPE=interleaved|sequential in the
// environment, or force_stream_shape (tests; nullopt: the automatic choice), overrides it.
enum class StreamShape { interleaved, sequential };
// The sequential shape's software prefetch distances.
// kStreamAhead, into L1 (_MM_HINT_T0): the K-quant dots. On AMD Zen 4 (Llama 3.2 1B, tg32,
// journey bench -r 2, 22:45-22:50 UTC 3 Dec, quiet, none / 4096 bytes alternating): Q4_K_M -t 2
// 21.3, 26.3 / 27.7, 28.5, -t 1 16.4, 17.5 / 17.6, 18.1. Into L2 at 8 KiB instead, Q6_K stayed
// level (-t 1 22.9, 22.5, 21.8 / 23.2, 22.8, 23.0; -t 2 30.6, 30.0, 32.6 / 30.3, 29.9, 30.9;
// 08:10 UTC 4 Dec), so they keep it.
// kStreamAheadL2, into L2 only (_MM_HINT_T1): the float rows and the Q8_0/Q4_0 dots. Their
// activations are large (a float x of 8192 inputs is 32 KiB, all of Zen 4's L1; Q8_0's quants,
// biases and scales 24 KiB), and lines prefetched into L1 pushed them out: one thread reading
// 2048 x 8192 F16 rows (ffn_down's shape) made 12.5-12.8 GB/s with 4 KiB into L1, 25.7-26.6
// with 8 KiB into L2; 8192 x 2048 rows 24-25 and 28 (a test program over 1 GiB of rows, 4 KiB
// and 2 MiB pages alike, 07:55 UTC 4 Dec). Llama 3.2 1B, journey bench -p 0 -n 16 -t 1,
// alternating (08:00-08:10 UTC 4 Dec): F16 7.6, 8.1 -> 10.0, 10.7 tok/s; Q8_0 14.8, 14.6, 14.1,
// 13.3 -> 18.5, 18.8, 18.0, 18.2. 16 KiB was no better, 4 KiB into L2 in between.
constexpr size_t kStreamAhead = 4096;
constexpr size_t kStreamAheadL2 = 8192;
// The lines of a block of kBytes, kStreamAhead bytes on in the row stream, into L1 (prefetcht0,
// as _mm_prefetch(_MM_HINT_T0); past the matrix's end a prefetch is a no-op): the K-quant and
// i-quant dots.
template <size_t kBytes>
inline void ask_ahead(const unsigned char* b) {
    for (size_t o = 0; o < kBytes; o += 64) __builtin_prefetch(b + kStreamAhead + o, 0, 3);
}
StreamShape stream_shape();
void force_stream_shape(std::optional<StreamShape> shape);
const char* stream_shape_name();

// y[n_out] = x[n_in] · W on the thread pool: Linear split by outputs, Conv1D by slabs of inputs.
//   Arithmetic, identical on both paths and on any thread count:
//   Conv1D: the inputs in slabs of 128 rows; slab s gives p_s[o] = fma(x[i1-1], W[i1-1,o], ...
//           fma(x[i0], W[i0,o], 0)) in order of i, and y[o] = ((p_0[o] + p_1[o]) + p_2[o]) + ...
//   Linear: 16 partial sums, lane l accumulating i ≡ l (mod 16) by fma in order of i, then
//           added pairwise (lane l += lane l+8, +4, +2, +1).
void gemv(float* y, const float* x, const Matrix& W);

// y[T, n_out]: T tokens, each row of y the bits gemv gives that token alone; W read once per
// group of rows for all T (sequences decoded together, matmul_tokens).
void gemv_tokens(float* y, const float* x, const Matrix& W, int T);

// out[T, n_out] = x[T, n_in] · W for F32, F16 and BF16 W, and Linear Q8_0/Q4_0 W (src/kernels/gemm.cpp), split over the thread
// pool by panels of output columns. Arithmetic, identical on both paths (so independent of the
// thread count too): out[t, o] = fma(x[t, n_in-1], w[n_in-1, o], ... fma(x[t, 0], w[0, o], 0)),
// w converted exactly to float.
void gemm(float* out, const float* x, const Matrix& W, int T);
bool gemm_fast_available();  // AVX-512 present and not forced portable
// gemm's outputs o0 <= o < o1 only, on the calling thread (o0 a multiple of 64, gemm's panels:
// the same bits as gemm gives them).
void gemm_outputs(float* out, const float* x, const Matrix& W, int T, int64_t o0, int64_t o1);
constexpr int64_t kGemmPanel = 64;

}  // namespace journey
