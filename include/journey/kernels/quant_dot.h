// Integer dot products of Q8_0 and Q4_0 weight rows with an activation vector that is itself
// quantized to Q8_0-style blocks, as llama.cpp does for one-token products: per block of 32
// the weights (Q4_0: nibble - 8) and the activations are int8, so the block's dot is an exact
// int32 sum (vpdpbusd), and only the per-block scaling happens in float.
//
// Arithmetic, identical on the portable and the AVX-512 VNNI path (so they give the same bits):
//   16 float lanes acc[l], zero at the start. Blocks are taken in pairs (2c, 2c+1); lane l
//   serves block b = 2c + l/8 and its elements 4(l%8) .. 4(l%8)+3. For each pair in order:
//     isum  = sum of the 4 products w·q over those elements (exact int32),
//     scale = d_w(b) * d_x(b)                     (one float multiplication),
//     acc[l] = fma(float(isum), scale, acc[l]).
//   A missing odd last block adds fma(0, 0, acc[l]). Then lane l += lane l+8, +4, +2, +1.
//
// K-quants (Q4_K, Q6_K), rows of 256-element super-blocks with sub-block scales, the same
// lanes: for super-block k with scales d (and dmin), pair c = 0..3 of x blocks (8k+2c, 8k+2c+1),
// lane l's 4 elements lie in one sub-block s with integer scale sc_s (and min m_s):
//     isum  = Σ q·qx over the 4 elements (exact int32; Q4_K q = 0..15, Q6_K q = -32..31),
//     acc[l] = fma(float(sc_s · isum), d · d_x, acc[l]),
//     Q4_K: acc[l] = fma(float(-(m_s · Σ qx)), dmin · d_x, acc[l]).
//   w = d·sc·q - dmin·m (Q4_K), d·sc·q (Q6_K), so these sum w·(d_x·qx) per lane.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "journey/kernels/matrix.h"

namespace journey {

// x quantized per block of 32: d = max|x| / 127, q = round(x / d) (to nearest, ties to even), so
// x ≈ d·q with |x - d·q| <= d/2. d stays a float (llama.cpp rounds it to f16; we need not).
// Padded with zeros to a whole number of block pairs, which the kernels rely on.
struct QuantizedActivations {
    int64_t n = 0;               // elements (a multiple of 32)
    std::vector<int8_t> q;       // n rounded up to 64
    std::vector<float> d;        // one per block, rounded up to even (padding 0)
    std::vector<float> d_lanes;  // d of each lane's block, 16 per block pair (the scale vector)
    // -k · (sum of each 4 q): undoes the +k the VNNI kernels add to w (Q8_0: 128, Q4_0: 8)
    std::vector<int32_t> bias_q8_0, bias_q4_0;
    std::vector<int32_t> sum4;   // the sum of each 4 q (K-quants: their mins, Q6_K's +32)
};

// Quantize n floats (n a multiple of 32; throws std::invalid_argument otherwise). A non-finite
// value makes its block's d NaN and its q zero, so NaN reaches every output it touches.
void quantize_activations(const float* x, int64_t n, QuantizedActivations& out);

// out[r] = row r · x (the arithmetic above) for rows r0 <= r < r1 of a Linear Q8_0 / Q4_0 /
// Q4_K / Q6_K matrix W with x.n columns (std::invalid_argument otherwise). Single-threaded; AVX-512 VNNI
// when the CPU has it and the portable kernels are not forced (see gemv.h).
void dot_rows(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1);

bool quant_dot_fast_available();  // AVX-512 VNNI present and not forced portable

}  // namespace journey
