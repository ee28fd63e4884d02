// Our own kernels for what OpenBLAS cannot do well or at all: matrix-vector products over F32,
// F16 and BF16 weights read in place (generation, one token at a time), and a BF16
// matrix-matrix product on AVX512-BF16 (prompts). Each has a portable C++ version and an
// AVX-512 version chosen at run time by a CPU feature check; the two give the same bits
// (gemv) or agree within the stated tolerance (gemm_bf16).
//
// Layouts as in weights.h: Linear W [n_out, n_in] (y[o] = W[o,:] · x), Conv1D W [n_in, n_out]
// (y = Σ_i x[i] · W[i,:]).
#pragma once
#include <cstdint>

#include "journey/weights.h"

namespace journey {

// true: always use the portable kernels (tests, and machines without AVX-512).
// JOURNEY_PORTABLE_KERNELS=1 in the environment sets it at start-up.
void force_portable_kernels(bool on);
// Which kernels run: "avx512", "avx512+bf16" (also the BF16 gemm), or "portable".
const char* kernel_isa();

// y[o0:o1] = (x · W)[o0:o1] for outputs o0 <= o < o1: a pure, single-threaded kernel.
//   Arithmetic, identical on both paths:
//   Conv1D: y[o] = fma(x[n_in-1], W[n_in-1,o], ... fma(x[0], W[0,o], 0)), in order of i.
//   Linear: 16 partial sums, lane l accumulating i ≡ l (mod 16) by fma in order of i, then
//           added pairwise (lane l += lane l+8, +4, +2, +1).
void gemv_range(float* y, const float* x, const Matrix& W, int64_t o0, int64_t o1);

// y[n_out] = x[n_in] · W, split over the thread pool by outputs.
void gemv(float* y, const float* x, const Matrix& W);

// out[T, n_out] = x[T, n_in] · W for BF16 W. x is rounded to bfloat16 (nearest even) and each
// output accumulates, in float, products of pairs: acc += x[2k+1]·w[2k+1], then += x[2k]·w[2k]
// (vdpbf16ps's order). The portable version does the same in scalar code; vdpbf16ps flushes
// denormals, so the two agree to within a few float ulps of the sum of |products|, not bitwise.
// Split over the thread pool by output columns. Needs n_in even.
void gemm_bf16(float* out, const float* x, const Matrix& W, int T);
bool gemm_bf16_fast_available();  // AVX512-BF16 present and not forced portable

}  // namespace journey
