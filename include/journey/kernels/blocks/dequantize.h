// Blocks to floats. The scalar reference (blocks/dequantize.cpp) is exactly ggml's
// dequantize_row_* arithmetic, in float, operation by operation, so the values are bit-identical
// to ggml's and gguf-py's (tests/kernels/blocks/test_dequantize.cpp). Layouts: blocks/layout.h.
#pragma once
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// Convert n consecutive elements of type t at src to floats, bit-identical to ggml's to_float
// (F32, F16, BF16 and every block type). For block types, n must be whole blocks (throws
// std::invalid_argument otherwise).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// dst[dtype_block(t)] = the block at src (possibly unaligned). t must be a block-quantized type.
void dequantize_block(DType t, const unsigned char* src, float* dst);

// sum_i row[i] * x[i] over n elements of a row of type t (same rule on n), in float: the scalar
// reference of a row's product with float activations (the fast one-token dots are in dot.h).
float vec_dot(DType t, const void* row, const float* x, int64_t n);

// AVX-512, 16 elements per vector instruction (blocks/dequantize_avx512.cpp), for the types whose
// prompts spend measurable time dequantizing (gemm.cpp's panels): Q8_0, Q4_0, Q4_K, Q5_K, Q6_K.
// The same float operations as dequantize_block, in the same order and with the same operands,
// so the same bits (tests/kernels/blocks/test_dequantize_avx512.cpp checks every type against it). Callers
// check the CPU first (gemm_fast_available()).
bool dequant_avx512_has(DType t);  // whether dequantize_blocks_avx512 has a vector form of t
// dst[nblocks * dtype_block(t)] = the nblocks blocks at src (possibly unaligned), as
// dequantize_block gives them; types without a vector form go through dequantize_block.
void dequantize_blocks_avx512(DType t, const unsigned char* src, float* dst, int64_t nblocks);

// The same on AVX2 (blocks/dequantize_avx2.cpp, gemm's panels on CPUs without AVX-512): Q8_0,
// Q4_0, Q6_K, 8 lanes at a time, dequantize_block's bits; callers check avx2_kernels() first.
bool dequant_avx2_has(DType t);
void dequantize_blocks_avx2(DType t, const unsigned char* src, float* dst, int64_t nblocks);

}  // namespace journey
