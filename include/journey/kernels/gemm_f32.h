// Small float products inside one task of a parallel loop (issue 35: the Gated DeltaNet's chunks,
// one head per task).
#pragma once
#include <cstdint>

namespace journey {

// c[M, N] = alpha · op(a) · op(b) + beta · c, row-major floats (op(a) [M, K], op(b) [K, N]; ta / tb:
// a / b stored transposed), leading dimensions lda, ldb, ldc, computed in the calling thread
// (OpenBLAS at one thread), so that the bits do not depend on the thread count.
void gemm_f32(bool ta, bool tb, int M, int N, int K, float alpha, const float* a, int64_t lda, const float* b,
              int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace journey
