// Integer dot products of Q8_0, Q4_0 and MXFP4 weight rows with an activation vector that is itself
// quantized to Q8_0-style blocks, as llama.cpp does for one-token products: per block of 32
// the weights (Q4_0: nibble - 8; MXFP4: the nibble's doubled E2M1 value, -12 .. 12, as ggml's
// kvalues_mxfp4) and the activations are int8, so the block's dot is an exact int32 sum
// (vpdpbusd), and only the per-block scaling happens in float (d_w: the half scale; MXFP4: its
// E8M0 exponent's 2^(e-128), ggml's E8M0_TO_FP32_HALF).
//
// Arithmetic, identical on the portable and the AVX-512 VNNI path (so they give the same bits):
//   16 float lanes acc[l], zero at the start. Blocks are taken in pairs (2c, 2c+1); lane l
//   serves block b = 2c + l/8 and its elements 4(l%8) .. 4(l%8)+3. For each pair in order:
//     isum  = sum of the 4 products w·q over those elements (exact int32),
//     scale = d_w(b) * d_x(b)                     (one float multiplication),
//     acc[l] = fma(float(isum), scale, acc[l]).
//   A missing odd last block adds fma(0, 0, acc[l]). Then lane l += lane l+8, +4, +2, +1.
//
// K-quants (Q4_K, Q5_K, Q6_K) take x quantized as llama.cpp's Q8_K (blocks of 256, below), and
// their float work happens once per super-block of 256, with no lanes: for super-block k
// (weight scales d, dmin; x scale d_x) the whole integer sum and, for Q4_K/Q5_K, the whole min sum
//     Q4_K, Q5_K: isum = Σ_s sc_s · Σ_{i in s} q_i·qx_i,  msum = Σ_s m_s · Σ32_s  (8 sub-blocks
//                 s of 32; q = 0..15 (Q4_K), 0..31 (Q5_K); Σ32_s: the sum of x's 32 quants there),
//     Q6_K:       isum = Σ_s sc_s · (Σ_{i in s} q_i·qx_i - 32 · Σ16_s)  (16 sub-blocks of 16,
//                 q stored as q + 32 = 0..63; the second term takes the +32 back out),
//   all exact int32, then
//     acc  = fma(float(isum), d · d_x, acc),   accm = fma(float(msum), dmin · d_x, accm),
//   and the row's dot is acc - accm (Q6_K: acc). With no order inside a super-block, any
//   grouping of the integer work gives these bits: one row at a time, or 16 rows side by side
//   (pack_rows16).
//   w = d·sc·q - dmin·m (Q4_K, Q5_K), d·sc·(q - 32) (Q6_K), so these sum w·(d_x·qx).
//
// The lattice and ternary types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, TQ1_0,
// TQ2_0) take x as Q8_K too, as llama.cpp does: per super-block, int8 weights q with an integer
// scale S per 4 elements and one float D (w = D·S·q), isum = Σ S·Σ4 q·qx exact, then
// acc = fma(float(isum), D · d_x, acc) (blocks/dot_iq.cpp states the details).
//
// The other types (Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL, IQ4_XS), the "unpacked" form: each row
// is first rewritten as int8 quants q with, per lane group of 4 elements, integers S, M and
// floats A, B such that w = A·S·q + B·M (Q4_1: A = d, S = 1, B = m, M = 1; Q2_K: A = d,
// S = sc, B = dmin, M = -m; Q3_K: S = sc - 32, q = -4..3; IQ4: q = the table's value; ...), then
//     acc[l] = fma(float(S · isum), A · d_x, acc[l]),
//     with a min (Q4_1, Q5_1, Q2_K): acc[l] = fma(float(M · Σ qx), B · d_x, acc[l]).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "journey/kernels/aligned.h"
#include "journey/kernels/matrix.h"

namespace journey {

// x quantized per block of 32: d = max|x| / 127, q = round(x / d) (to nearest, ties to even), so
// x ≈ d·q with |x - d·q| <= d/2. d stays a float (llama.cpp rounds it to f16; we need not).
// Padded with zeros to a whole number of block pairs, which the kernels rely on.
// Or per block of 256 as llama.cpp's Q8_K (quantize_row_q8_K_ref), exactly: m = the element of
// largest |x| (the first of equals), s = -127 / m in float, q = min(127, round(s·x)) (ties to
// even), d = 1 / s; with the sums of each 16 and each 32 quants.
struct QuantizedActivations {
    int64_t n = 0;               // elements (a multiple of block)
    int block = 32;              // 32 or 256 (Q8_K: only q, d, sum16 and sum32 are filled)
    // Each array starts on a cache line (aligned.h): the kernels read them 64 bytes at a time.
    LineVector<int8_t> q;        // n rounded up to 64
    LineVector<float> d;         // one per block, rounded up to even (padding 0)
    LineVector<float> d_lanes;   // d of each lane's block, 16 per block pair (the scale vector)
    // -k · (sum of each 4 q): undoes the +k the VNNI kernels add to w (Q8_0: 128, Q4_0: 8)
    LineVector<int32_t> bias_q8_0, bias_q4_0;
    LineVector<int32_t> sum4;    // the sum of each 4 q (the unpacked types' mins)
    LineVector<int16_t> sum16, sum32;  // Q8_K: the sum of each 16 and each 32 q
};

// The block size x needs for a weight type's dots: 256 for Q4_K, Q5_K, Q6_K and the lattice and
// ternary types, else 32.
int activation_block(DType w);

// Quantize n floats per block of 32 or 256 (n a multiple of block; throws std::invalid_argument
// otherwise). A non-finite value makes its block's d NaN and its q zero, so NaN reaches every
// output it touches.
void quantize_activations(const float* x, int64_t n, QuantizedActivations& out, int block = 32);

// out[r] = row r · x (the arithmetic above) for rows r0 <= r < r1 of a Linear W of any
// block-quantized type with x.n columns, x quantized per activation_block(W.dtype)
// (std::invalid_argument otherwise). Single-threaded; AVX-512 VNNI
// when the CPU has it and the portable kernels are not forced (see gemv.h).
void dot_rows(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1);
// Several tokens' activations (block 32) interleaved for the Q8_0, Q4_0 and MXFP4 row x token tiles of
// dot_rows_tokens, so that a tile's activations come from one stream through one pointer. For
// the AVX-512 VNNI kernels: tokens in tiles of 8 (the last of 1..8), and within a tile, per pair
// of blocks, each token's 64 quants, its 16 biases for the weight type and its 16 lane scales
// (192 bytes). For the AVX2 kernels (`avx2`, when VNNI does not run): tiles of 4 (the last 1..3,
// 5 tokens as 3 and 2), per block the tile's n tokens' 32 quants, then their n scales d in 32
// bytes (dot.cpp).
struct PackedTokens {
    DType w = DType::Q8_0;  // whose biases (Q4_0's, or Q8_0's: Q8_0 and MXFP4)
    int T = 0;
    int64_t pairs = 0;        // block pairs a token
    bool avx2 = false;        // the AVX2 kernels' layout
    LineVector<std::byte> bytes;
};
void pack_tokens(const QuantizedActivations* xs, int T, DType w, PackedTokens& out);
// Whether dot_rows_tokens reads W's tokens as pack_tokens lays them out (Q8_0, Q4_0 and MXFP4 on
// the AVX-512 VNNI or AVX2 kernels), so that a caller packs them once for all its row ranges.
bool tokens_packed(DType w);

// The same for T tokens: out[t * out_stride + r] = dot_rows of xs[t], the same bits; Q8_0,
// Q4_0 and MXFP4 in tiles of 4 rows x 8 tokens on AVX-512 VNNI, of 2 rows x 4 tokens (4 x 2,
// 3 x 3, 4 x 1 for the last tokens) on AVX2 (each weight block unpacked once for the tile's
// tokens, each token's activations loaded once for its rows; `packed`: xs as pack_tokens made
// them for W's type and these kernels, else packed here), Q6_K and Q4_K regrouped 16 rows
// (pack_rows16) unpack each weight block once for up to four tokens (sequences decoded together,
// prompts of Q4_K and MXFP4, experts' token groups); IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S decode each super-block once
// for up to 16.
void dot_rows_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                     int64_t r1, const PackedTokens* packed = nullptr);

bool quant_dot_fast_available();  // AVX-512 VNNI present and not forced portable
// Without it: AVX2 + FMA + F16C present and the portable kernels not forced (kernel_isa "avx2",
// or "avx512" without VNNI). Q4_K, Q5_K, Q6_K and the unpacked types' one-token dots then run
// AVX2 kernels with the portable bits.
bool quant_dot_avx2_available();

// Q4_K rows regrouped for the one-token dot, as llama.cpp repacks Q4_K at load on x86 (8 rows):
// the blocks of 16 rows side by side, so that one pass over x serves 16 rows and one vector
// instruction 16 rows' sums. Group g (rows 16g .. 16g+15), super-block k: 2304 bytes at
// (g · cols/256 + k) · 2304, holding d[16] and dmin[16] (halves), the 12 scale bytes of each
// row as three arrays of 16 words (word j, bytes 4j .. 4j+3, of row r at 64 + 64j + 4r), then
// word j of chunk c (qs[32c .. 32c+31]) of row r at 256 + 64 (8c + j) + 4r.
// The same bytes as the rows, rearranged: W.rows16 then serves dot_rows (same bits).
// Q6_K the same way, its group's super-block 3360 bytes at (g · cols/256 + k) · 3360: d[16]
// (halves), the 16 scale bytes of each row as four arrays of 16 words (word v of row r at 32 +
// 64v + 4r), then per half h and word j (q = 8h + j) three arrays of 16 words at 288 + 192q: ql
// word 16h + j, ql word 16h + 8 + j, qh word 8h + j (row r's at + 4r): the bits of elements
// 128h + 4j + {0, 32, 64, 96} .. +3. (Tried once before as a plain transpose of the rows and
// measured within the noise on Llama 3.2 1B; with lanes as rows the one-token dot has no sums
// across lanes and no scale permutes.)
// The same bytes as the rows, rearranged: W.rows16 then serves dot_rows (same bits).
bool can_pack_rows16(const Matrix& W);  // Q4_K or Q6_K, Linear, rows a multiple of 16
size_t rows16_bytes(const Matrix& W);   // = the matrix's own size
void pack_rows16(const Matrix& W, std::byte* dst);
// The inverse for one group's super-block: its 16 rows' blocks as stored (144 or 210 bytes,
// row r's at blocks + r · stride), so that prompts (gemm.cpp's panels) and the several-token Q6_K
// dots read the regrouped copy and the mapping's pages stay unread.
void unpack_rows16_block(DType t, const std::byte* group_block, std::byte* blocks, size_t stride);

}  // namespace journey
