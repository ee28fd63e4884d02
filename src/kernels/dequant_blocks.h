// One block of each ggml block type to floats: the scalar reference for every quantized type
// (layouts in include/journey/kernels/quant.h). Exactly ggml's dequantize_row_* arithmetic, in
// float, operation by operation, so the values are bit-identical to ggml's and gguf-py's.
#pragma once
#include <cstdint>

#include "journey/formats/tensor.h"

namespace journey {

// dst[dtype_block(t)] = block at src (possibly unaligned). t must be a block-quantized type.
void dequantize_block(DType t, const unsigned char* src, float* dst);

// IQ4_NL / IQ4_XS: the 16 values a 4-bit index selects (ggml's kvalues_iq4nl).
inline constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes q
// (j < 4: low 6 bits of q[j] and q[j+4]; j >= 4: a nibble of q[j+4] and the top 2 bits of
// q[j-4] / q[j]).
inline void scale_min_k4(int j, const unsigned char* q, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = uint8_t((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
        m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q3_K: the 16 6-bit scales (as stored, 0..63; the value is scale - 32) from the 12 packed bytes.
void scales_q3_k(const unsigned char* packed, int8_t* scales);

}  // namespace journey
