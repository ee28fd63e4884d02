// Block dequantization with AVX-512, 16 elements per vector instruction, for the types whose
// prompts spend measurable time dequantizing (gemm.cpp's panels): Q8_0, Q4_0, Q4_K, Q5_K, Q6_K.
// The same float operations as dequantize_block (dequant_blocks.cpp), in the same order and
// with the same operands, so the same bits (tests/kernels/test_dequant_fast.cpp checks every
// type against it). Callers check the CPU first (gemm_fast_available()).
#pragma once
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// Whether dequantize_blocks_avx512 has a vector form of type t.
bool dequant_avx512_has(DType t);

// dst[nblocks * dtype_block(t)] = the nblocks blocks at src (possibly unaligned), as
// dequantize_block gives them; types without a vector form go through dequantize_block.
void dequantize_blocks_avx512(DType t, const unsigned char* src, float* dst, int64_t nblocks);

}  // namespace journey
