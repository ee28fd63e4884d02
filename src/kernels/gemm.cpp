// The matrix-matrix product of prompts, on our thread pool: float weights (F32, F16, BF16) and
// block-quantized ones, dequantized exactly while their panels are packed.
//
// Why not BLAS: a prompt's product is skinny (T = a few hundred rows of x against a weight
// matrix of millions of elements), so OpenBLAS spends much of its time copying (packing) the
// weights, and it knows no F16/BF16. Why not vdpbf16ps for BF16: on this CPU it retires one
// 32-product instruction every other cycle, half the rate of F32 fma, so converting BF16 to F32
// while packing and multiplying in F32 is faster (scripts/machine_limits.sh measures both).
//
// Shape of the kernel: threads take panels of 64 output columns as they come; a panel of W,
// converted to float, is packed as [n_in][64] (1 MiB at 4096 inputs: in L2), then 6 tokens at
// a time run over it with 6 x 4 vector accumulators, one fma per weight vector and token.
// Quantized W: see pack_panel_quant. CPUs without AVX-512: gemm_avx2, the same panels as strips
// of 16 columns under a 6-token x 16-column kernel.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <immintrin.h>
#include <vector>

#include "journey/kernels/to_float.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/thread_pool.h"
#include "avx2_lanes.h"
#include "avx512_loads.h"

namespace journey {
namespace {

using namespace avx512;

constexpr int64_t kNB = 64;  // output columns per panel: four vectors of 16
constexpr int kMR = 6;       // tokens per tile
constexpr int64_t kAhead = 16;  // rows prefetched ahead while packing

// 16 rows read a chunk at a time are 16 streams the hardware does not follow: ask for the chunk
// after next (kAheadChunks on) of each of `rows` rows while chunk i0 is dequantized (both paths'
// pack_panel_quant; a prefetch carries no target, so one function serves both).
constexpr int64_t kQuantChunk = 256, kAheadChunks = 2;
inline void ask_chunk_ahead(const unsigned char* src, int64_t rows, size_t row_bytes, int64_t i0, int64_t n_in, int64_t block,
                            size_t block_bytes) {
    if (i0 + kAheadChunks * kQuantChunk >= n_in) return;
    const size_t ahead = static_cast<size_t>((i0 + kAheadChunks * kQuantChunk) / block) * block_bytes;
    const size_t len = static_cast<size_t>(std::min(kQuantChunk, n_in - i0 - kAheadChunks * kQuantChunk) / block) * block_bytes;
    for (int64_t c = 0; c < rows; ++c)
        for (size_t b = 0; b < len; b += 64) __builtin_prefetch(src + static_cast<size_t>(c) * row_bytes + ahead + b, 0, 3);
}

// Stored row r of W (Linear: output r; Conv1D: input r), elements c0 .. c0+n, converted exactly
// to float by to_float.h (quantized rows whole: c0 = 0, n = W.cols).
void row_to_float(float* dst, const Matrix& W, int64_t r, int64_t c0, int64_t n) {
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(W.cols));
    to_float(dst, W.dtype, W.data + static_cast<size_t>(r) * row_bytes + dtype_bytes(W.dtype, static_cast<uint64_t>(c0)), n);
}

// panel[i][c] = w[i, o0 + c] as float for c < nc (the rest is not read).
void pack_panel_portable(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    const int64_t n_in = W.n_in();
    if (W.layout == Layout::Conv1D) {  // row i holds the panel's columns side by side
        for (int64_t i = 0; i < n_in; ++i) row_to_float(panel + i * kNB, W, i, o0, nc);
        return;
    }
    std::vector<float> row(static_cast<size_t>(n_in));  // Linear: output o0 + c is row o0 + c
    for (int64_t c = 0; c < nc; ++c) {
        row_to_float(row.data(), W, o0 + c, 0, n_in);
        for (int64_t i = 0; i < n_in; ++i) panel[i * kNB + c] = row[static_cast<size_t>(i)];
    }
}

// The definition: out[t, o] = fma(x[t, n_in-1], w[n_in-1, o], ... fma(x[t, 0], w[0, o], 0)).
void gemm_portable(float* out, const float* x, const Matrix& W, int T, int64_t o0, int64_t o1) {
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    std::vector<float> panel(static_cast<size_t>(n_in * kNB));
    for (int64_t c0 = o0; c0 < o1; c0 += kNB) {
        const int64_t nc = std::min(kNB, o1 - c0);
        pack_panel_portable(panel.data(), W, c0, nc);
        for (int t = 0; t < T; ++t) {
            float* ot = out + t * n_out + c0;
            std::fill(ot, ot + nc, 0.0f);
            for (int64_t i = 0; i < n_in; ++i) {
                const float xi = x[t * n_in + i];
                const float* p = panel.data() + i * kNB;
                for (int64_t c = 0; c < nc; ++c) ot[c] = std::fma(xi, p[c], ot[c]);
            }
        }
    }
}

// A lambda would not inherit the caller's target attribute (and would not compile where the
// building machine lacks AVX-512), so the cast is a function of its own.
JOURNEY_AVX512 inline __m512d pd(__m512 v) { return _mm512_castps_pd(v); }

// r[j][k] becomes r[k][j]: a 16 x 16 transpose in registers (pairs, then quads of floats within
// 128-bit lanes, then the lanes themselves). The maskz forms with full masks: see load16.
JOURNEY_AVX512 inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {  // t[i]: rows i, i+1 interleaved at columns 4L, 4L+1; t[i+1] at 4L+2, 4L+3
        t[i] = _mm512_maskz_unpacklo_ps(0xffff, r[i], r[i + 1]);
        t[i + 1] = _mm512_maskz_unpackhi_ps(0xffff, r[i], r[i + 1]);
    }
    for (int g = 0; g < 16; g += 4) {  // r[g+k], lane L: rows g .. g+3 at column 4L + k
        r[g] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, pd(t[g]), pd(t[g + 2])));
        r[g + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, pd(t[g]), pd(t[g + 2])));
        r[g + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xff, pd(t[g + 1]), pd(t[g + 3])));
        r[g + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xff, pd(t[g + 1]), pd(t[g + 3])));
    }
    for (int k = 0; k < 4; ++k) {  // column 4L + k gathers lane L of r[k], r[4+k], r[8+k], r[12+k]
        const __m512 a = _mm512_maskz_shuffle_f32x4(0xffff, r[k], r[4 + k], 0x88), b = _mm512_maskz_shuffle_f32x4(0xffff, r[k], r[4 + k], 0xdd);
        const __m512 c = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + k], r[12 + k], 0x88), d = _mm512_maskz_shuffle_f32x4(0xffff, r[8 + k], r[12 + k], 0xdd);
        t[k] = _mm512_maskz_shuffle_f32x4(0xffff, a, c, 0x88);
        t[8 + k] = _mm512_maskz_shuffle_f32x4(0xffff, a, c, 0xdd);
        t[4 + k] = _mm512_maskz_shuffle_f32x4(0xffff, b, d, 0x88);
        t[12 + k] = _mm512_maskz_shuffle_f32x4(0xffff, b, d, 0xdd);
    }
    for (int j = 0; j < 16; ++j) r[j] = t[j];
}

// panel[i][c] = w[i, o0 + c] as float for c < nc, 0 for nc <= c < 64. D is a float dtype.
template <DType D>
JOURNEY_AVX512 void pack_panel(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    constexpr size_t es = D == DType::F32 ? 4 : 2;  // element bytes
    const int64_t n_in = W.n_in();
    if (W.layout == Layout::Conv1D) {  // row i holds the panel's 64 columns side by side
        const size_t stride = static_cast<size_t>(W.cols) * es;
        for (int64_t i = 0; i < n_in; ++i) {
            const std::byte* row = W.data + static_cast<size_t>(i * W.cols + o0) * es;
            // Rows are far apart: without asking ahead, each one waits for memory in turn.
            if (i + kAhead < n_in)
                for (size_t b = 0; b < kNB * es; b += 64) prefetch(row + kAhead * stride + b);
            for (int j = 0; j < 4; ++j)
                _mm512_storeu_ps(panel + i * kNB + 16 * j, load16<D>(row + 16 * j * es, tail_mask(nc - 16 * j)));
        }
        return;
    }
    // Linear: output o's weights are row o. 16 rows x 16 inputs at a time are loaded, transposed
    // in registers, and stored as 16 panel rows of 16 outputs.
    for (int64_t c0 = 0; c0 < kNB; c0 += 16) {
        for (int64_t i = 0; i < n_in; i += 16) {
            const __mmask16 m = tail_mask(n_in - i);
            __m512 r[16];
            for (int64_t c = c0; c < c0 + 16; ++c)
                r[c - c0] = c < nc ? load16<D>(W.data + static_cast<size_t>((o0 + c) * n_in + i) * es, m) : _mm512_setzero_ps();
            transpose16(r);
            for (int64_t j = 0; j < 16 && i + j < n_in; ++j) _mm512_storeu_ps(panel + (i + j) * kNB + c0, r[j]);
        }
    }
}

// panel[i0 + i][c0 + c] = dq[c][i] for i < n (a multiple of 16), c < 16: 16 x 16 at a time.
JOURNEY_AVX512 inline void store_transposed(float* panel, const float (*dq)[256], int64_t n, int64_t i0, int64_t c0) {
    for (int64_t i = 0; i < n; i += 16) {
        __m512 r[16];
        for (int c = 0; c < 16; ++c) r[c] = _mm512_load_ps(dq[c] + i);
        transpose16(r);
        for (int j = 0; j < 16; ++j) _mm512_storeu_ps(panel + (i0 + i + j) * kNB + c0, r[j]);
    }
}

// Q4_K and Q6_K regrouped 16 rows at a time (pack_rows16): a group's super-block is one
// contiguous 2304 or 3360 bytes, put back into its 16 blocks as stored, then dequantized and
// transposed as below (the same values, so the same bits as from the mapping; the mapping's pages
// stay unread). Panels start at multiples of 64 and such a W has whole groups of 16 rows.
JOURNEY_AVX512 void pack_panel_rows16(float* panel, const Matrix& W, int64_t o0, int64_t nc, float (*dq)[256]) {
    constexpr int64_t kSuper = 256, kAhead = 2;
    constexpr size_t kStride = 256;  // room for one block of either type
    const size_t block_bytes = dtype_bytes(W.dtype, uint64_t(kSuper)), kGroupBlock = 16 * block_bytes;
    const int64_t n_in = W.n_in(), nsb = n_in / kSuper;
    alignas(64) std::byte blocks[16 * kStride];
    for (int64_t c0 = 0; c0 < kNB; c0 += 16) {
        if (c0 >= nc) {  // outputs past nc: 0
            for (int64_t i = 0; i < n_in; ++i) std::fill(panel + i * kNB + c0, panel + i * kNB + c0 + 16, 0.0f);
            continue;
        }
        const std::byte* group = W.rows16 + static_cast<size_t>((o0 + c0) / 16 * nsb) * kGroupBlock;
        for (int64_t k = 0; k < nsb; ++k) {
            if (k + kAhead < nsb)
                for (size_t b = 0; b < kGroupBlock; b += 64) prefetch(group + static_cast<size_t>(k + kAhead) * kGroupBlock + b);
            unpack_rows16_block(W.dtype, group + static_cast<size_t>(k) * kGroupBlock, blocks, kStride);
            for (int c = 0; c < 16; ++c)
                dequantize_blocks_avx512(W.dtype, reinterpret_cast<const unsigned char*>(blocks + c * kStride), dq[c], 1);
            store_transposed(panel, dq, kSuper, k * kSuper, c0);
        }
    }
}

// The same for block-quantized (Linear) W: per group of 16 outputs, 256 inputs of each row at a
// time (whole blocks: every block type holds 32 or 256; n_in is whole blocks, so a multiple of
// 32) are dequantized into a 16 KiB buffer that stays in L1, then transposed 16 x 16 at a time.
JOURNEY_AVX512 void pack_panel_quant(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    constexpr int64_t kChunk = kQuantChunk;
    const int64_t n_in = W.n_in(), block = int64_t(dtype_block(W.dtype));
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in)), block_bytes = dtype_bytes(W.dtype, uint64_t(block));
    alignas(64) float dq[16][kChunk];
    if (W.rows16) return pack_panel_rows16(panel, W, o0, nc, dq);
    for (int64_t c0 = 0; c0 < kNB; c0 += 16) {
        const int64_t rows = std::clamp<int64_t>(nc - c0, 0, 16);
        for (int64_t c = rows; c < 16; ++c) std::fill(dq[c], dq[c] + kChunk, 0.0f);  // outputs past nc: 0
        const unsigned char* src = reinterpret_cast<const unsigned char*>(W.data) + static_cast<size_t>(o0 + c0) * row_bytes;
        for (int64_t i0 = 0; i0 < n_in; i0 += kChunk) {
            const int64_t n = std::min(kChunk, n_in - i0);  // a multiple of 32
            const size_t at = static_cast<size_t>(i0 / block) * block_bytes;
            ask_chunk_ahead(src, rows, row_bytes, i0, n_in, block, block_bytes);
            for (int64_t c = 0; c < rows; ++c)
                dequantize_blocks_avx512(W.dtype, src + static_cast<size_t>(c) * row_bytes + at, dq[c], n / block);
            store_transposed(panel, dq, n, i0, c0);
        }
    }
}

void pack_panel_fast(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    switch (W.dtype) {
        case DType::F32: return pack_panel<DType::F32>(panel, W, o0, nc);
        case DType::F16: return pack_panel<DType::F16>(panel, W, o0, nc);
        case DType::BF16: return pack_panel<DType::BF16>(panel, W, o0, nc);
        default: return pack_panel_quant(panel, W, o0, nc);
    }
}

// out[t, c] for MR tokens from x (row stride ldx) and c < nc, over the packed panel's n_in inputs.
template <int MR>
JOURNEY_AVX512 void tile(float* out, int64_t ldo, const float* x, int64_t ldx, const float* panel, int64_t n_in, int64_t nc) {
    __m512 acc[MR][4];
    for (int t = 0; t < MR; ++t)
        for (int j = 0; j < 4; ++j)
            acc[t][j] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n_in; ++i) {
        const float* p = panel + i * kNB;
        const __m512 w0 = _mm512_loadu_ps(p), w1 = _mm512_loadu_ps(p + 16);
        const __m512 w2 = _mm512_loadu_ps(p + 32), w3 = _mm512_loadu_ps(p + 48);
        for (int t = 0; t < MR; ++t) {
            const __m512 xv = _mm512_set1_ps(x[t * ldx + i]);
            acc[t][0] = _mm512_fmadd_ps(xv, w0, acc[t][0]);
            acc[t][1] = _mm512_fmadd_ps(xv, w1, acc[t][1]);
            acc[t][2] = _mm512_fmadd_ps(xv, w2, acc[t][2]);
            acc[t][3] = _mm512_fmadd_ps(xv, w3, acc[t][3]);
        }
    }
    for (int t = 0; t < MR; ++t)
        for (int j = 0; j < 4; ++j) _mm512_mask_storeu_ps(out + t * ldo + 16 * j, tail_mask(nc - 16 * j), acc[t][j]);
}

template <int MR>
void tile_fn(float* out, int64_t ldo, const float* x, int64_t ldx, const float* panel, int64_t n_in, int64_t nc) {
    tile<MR>(out, ldo, x, ldx, panel, n_in, nc);
}

JOURNEY_AVX512 void gemm_avx512(float* out, const float* x, const Matrix& W, int T, int64_t o0, int64_t o1) {
    using Tile = void (*)(float*, int64_t, const float*, int64_t, const float*, int64_t, int64_t);
    static constexpr Tile tiles[kMR + 1] = {nullptr, tile_fn<1>, tile_fn<2>, tile_fn<3>, tile_fn<4>, tile_fn<5>, tile_fn<6>};
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    thread_local std::vector<float> panel;
    panel.resize(static_cast<size_t>(n_in * kNB));
    for (int64_t c0 = o0; c0 < o1; c0 += kNB) {
        const int64_t nc = std::min(kNB, o1 - c0);
        pack_panel_fast(panel.data(), W, c0, nc);
        // Each tile runs over the whole panel (from L2, or L3 past 4096 inputs; the hardware
        // prefetcher keeps up with one stream). Slicing n_in into 128-input passes that stay
        // in L1 was slower: every pass reloads and stores the tiles' 24 sums from out, whose
        // rows lie n_out floats apart (a page each); Llama 3.2 1B's shapes, 512 tokens, one
        // thread: 2048 -> 8192 at 90 GFLOP/s with 128-input slices, 97-100 with 256, 103 with
        // 512, 105 without; 8192 -> 2048 at 81-83 with 128, 101-103 without.
        for (int t = 0; t < T; t += kMR)
            tiles[std::min(kMR, T - t)](out + t * n_out + c0, n_out, x + t * n_in, n_in, panel.data(), n_in, nc);
    }
}

// ---- AVX2 (no AVX-512: avx2_lanes.h) -------------------------------------------------------
// The same panels of 64 output columns, but AVX2 has 16 registers of 8 floats, so the
// micro-kernel is 6 tokens x 16 columns: 12 accumulators, 2 weight vectors, 1 broadcast x (the
// 6 x 16 shape of BLIS's Haswell kernel). Each (t, o) is still one fma chain over i in order
// from 0: the portable bits. The panel is packed as four strips of 16 columns, each [n_in][16]
// contiguous (panel + s * n_in * 16), so a tile streams one strip with unit stride.
// Measured on this session's AMD EPYC (AVX2, FMA, F16C; one thread, CPU time, a shared host):
// 128 tokens x 768 -> 3072 F16 70-74 GFLOP/s, 3072 -> 768 67-80, 2048 -> 8192 74-79, packing
// and conversion included; OpenBLAS's Zen sgemm on the same F32 shapes 69-75. GPT-2 small pp128
// (journey bench -p 128 -n 0 -t 1, runs of the old and new binary alternating, 7 Dec): F16
// 85-111 -> 388-403 tok/s, Q8_0 110-129 -> 309-334, Q6_K 102 -> 297-319 against the portable
// loop. In the F16 profile the tiles take 54% of the time and packing 7% (its 16 rows are read
// from memory once per prompt).
constexpr int64_t kStrip = 16;  // columns per strip: two vectors of 8

// r[j][k] becomes r[k][j]: pairs, then quads within 128-bit lanes, then the lanes.
JOURNEY_AVX2 inline void transpose8(__m256 r[8]) {
    __m256 t[8], s[8];
    for (int i = 0; i < 8; i += 2) {  // t[i]: rows i, i+1 interleaved at columns 0, 1 (4, 5); t[i+1] at 2, 3 (6, 7)
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int g = 0; g < 8; g += 4) {  // s[g+k]: rows g .. g+3 at column k (low lane), k + 4 (high)
        s[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
        s[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xee);
        s[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
        s[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xee);
    }
    for (int k = 0; k < 4; ++k) {
        r[k] = _mm256_permute2f128_ps(s[k], s[4 + k], 0x20);
        r[4 + k] = _mm256_permute2f128_ps(s[k], s[4 + k], 0x31);
    }
}

// min(n, 8) elements at p as float, the rest 0 (a function: a lambda would not inherit the
// target attribute).
template <DType D>
JOURNEY_AVX2 inline __m256 load8_upto(const std::byte* p, int64_t n) {
    return n >= 8 ? avx2::load8<D>(p) : n > 0 ? avx2::load8_part<D>(p, n) : _mm256_setzero_ps();
}

// strip[i][c] = w[i, c0 + c] for c < 16 as float: Conv1D rows hold the strip's columns side by
// side; Linear rows are read 16 outputs x 8 inputs at a time and transposed in registers (two
// 8 x 8), so both halves of a strip row (one cache line) are written together. Columns past nc are 0.
template <DType D>
JOURNEY_AVX2 void pack_panel_avx2(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    constexpr size_t es = D == DType::F32 ? 4 : 2;
    const int64_t n_in = W.n_in(), strips = (nc + kStrip - 1) / kStrip;
    if (W.layout == Layout::Conv1D) {
        const size_t stride = static_cast<size_t>(W.cols) * es;
        for (int64_t i = 0; i < n_in; ++i) {
            const std::byte* row = W.data + static_cast<size_t>(i * W.cols + o0) * es;
            // Rows are far apart: without asking ahead, each one waits for memory in turn.
            if (i + kAhead < n_in)
                for (size_t b = 0; b < static_cast<size_t>(nc) * es; b += 64) avx2::prefetch(row + kAhead * stride + b);
            for (int64_t s = 0; s < strips; ++s)
                for (int64_t h = 0; h < 2; ++h) {
                    const int64_t c = kStrip * s + 8 * h;
                    _mm256_storeu_ps(panel + (s * n_in + i) * kStrip + 8 * h, load8_upto<D>(row + static_cast<size_t>(c) * es, nc - c));
                }
        }
        return;
    }
    for (int64_t s = 0; s < strips; ++s) {
        float* strip = panel + s * n_in * kStrip;
        for (int64_t i = 0; i < n_in; i += 8) {
            const int64_t n = std::min<int64_t>(8, n_in - i);
            for (int64_t h = 0; h < 2; ++h) {
                __m256 r[8];
                for (int64_t k = 0; k < 8; ++k) {
                    const int64_t c = kStrip * s + 8 * h + k;
                    r[k] = c < nc ? load8_upto<D>(W.data + static_cast<size_t>((o0 + c) * n_in + i) * es, n) : _mm256_setzero_ps();
                }
                transpose8(r);
                for (int64_t j = 0; j < n; ++j) _mm256_storeu_ps(strip + (i + j) * kStrip + 8 * h, r[j]);
            }
        }
    }
}

// strip[i0 + i][c] = dq[c][i] for i < n (a multiple of 8), c < 16: 8 x 8 at a time.
JOURNEY_AVX2 inline void store_transposed_avx2(float* strip, const float (*dq)[256], int64_t n, int64_t i0) {
    for (int64_t i = 0; i < n; i += 8)
        for (int h = 0; h < 2; ++h) {
            __m256 r[8];
            for (int k = 0; k < 8; ++k) r[k] = _mm256_load_ps(dq[8 * h + k] + i);
            transpose8(r);
            for (int j = 0; j < 8; ++j) _mm256_storeu_ps(strip + (i0 + i + j) * kStrip + 8 * h, r[j]);
        }
}

// Block-quantized (Linear) W: per strip of 16 outputs, 256 inputs of each row at a time (whole
// blocks: every block type holds 32 or 256, n_in is whole blocks) dequantized into 16 KiB that
// stay in L1, then transposed: Q8_0, Q4_0, Q6_K on AVX2 (blocks/dequantize_avx2.cpp), the
// others by the scalar reference (dequantize_block); the same bits either way. Q4_K/Q6_K regrouped 16 rows (pack_rows16): each group super-block put back into
// its 16 blocks as stored (unpack_rows16_block), the same values.
JOURNEY_AVX2 void pack_panel_quant_avx2(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    constexpr int64_t kChunk = kQuantChunk;
    constexpr size_t kStride = 256;  // room for one Q4_K or Q6_K block
    const int64_t n_in = W.n_in(), block = int64_t(dtype_block(W.dtype)), strips = (nc + kStrip - 1) / kStrip;
    const size_t row_bytes = dtype_bytes(W.dtype, static_cast<uint64_t>(n_in)), block_bytes = dtype_bytes(W.dtype, uint64_t(block));
    alignas(32) float dq[16][kChunk];
    alignas(64) std::byte blocks[16 * kStride];
    for (int64_t s = 0; s < strips; ++s) {
        float* strip = panel + s * n_in * kStrip;
        const int64_t rows = std::min<int64_t>(nc - kStrip * s, 16);
        for (int64_t c = rows; c < 16; ++c) std::fill(dq[c], dq[c] + kChunk, 0.0f);  // outputs past nc: 0
        if (W.rows16) {  // whole groups of 16 rows, super-blocks of 256
            const size_t group_block = 16 * block_bytes;
            const std::byte* group = W.rows16 + static_cast<size_t>((o0 + kStrip * s) / 16 * (n_in / kChunk)) * group_block;
            for (int64_t k = 0; k < n_in / kChunk; ++k) {
                unpack_rows16_block(W.dtype, group + static_cast<size_t>(k) * group_block, blocks, kStride);
                for (int64_t c = 0; c < rows; ++c)
                    dequantize_blocks_avx2(W.dtype, reinterpret_cast<const unsigned char*>(blocks + c * kStride), dq[c], 1);
                store_transposed_avx2(strip, dq, kChunk, k * kChunk);
            }
            continue;
        }
        const unsigned char* src = reinterpret_cast<const unsigned char*>(W.data) + static_cast<size_t>(o0 + kStrip * s) * row_bytes;
        for (int64_t i0 = 0; i0 < n_in; i0 += kChunk) {
            const int64_t n = std::min(kChunk, n_in - i0);  // a multiple of 32
            const size_t at = static_cast<size_t>(i0 / block) * block_bytes;
            ask_chunk_ahead(src, rows, row_bytes, i0, n_in, block, block_bytes);
            for (int64_t c = 0; c < rows; ++c)
                dequantize_blocks_avx2(W.dtype, src + static_cast<size_t>(c) * row_bytes + at, dq[c], n / block);
            store_transposed_avx2(strip, dq, n, i0);
        }
    }
}

void pack_panel_avx2_any(float* panel, const Matrix& W, int64_t o0, int64_t nc) {
    switch (W.dtype) {
        case DType::F32: return pack_panel_avx2<DType::F32>(panel, W, o0, nc);
        case DType::F16: return pack_panel_avx2<DType::F16>(panel, W, o0, nc);
        case DType::BF16: return pack_panel_avx2<DType::BF16>(panel, W, o0, nc);
        default: return pack_panel_quant_avx2(panel, W, o0, nc);
    }
}

// The lanes k < n (n clamped to 0 .. 8) of a vector of 8, as a maskstore mask.
JOURNEY_AVX2 inline __m256i lanes_below(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp<int64_t>(n, 0, 8))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// out[t, c] for MR tokens from x (row stride ldx) and c < nc (<= 16), over a strip's n_in rows.
template <int MR>
JOURNEY_AVX2 void tile_avx2(float* out, int64_t ldo, const float* x, int64_t ldx, const float* strip, int64_t n_in, int64_t nc) {
    __m256 acc[MR][2];
    for (int t = 0; t < MR; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n_in; ++i) {
        const __m256 w0 = _mm256_loadu_ps(strip + i * kStrip), w1 = _mm256_loadu_ps(strip + i * kStrip + 8);
        for (int t = 0; t < MR; ++t) {
            // set1 of a plain read, not _mm256_broadcast_ss: GCC 12 takes that intrinsic's
            // pointer as a read of any memory, acc's too, and then stores all 12 sums to the
            // stack every step (12 stores against 12 fmas).
            const __m256 xv = _mm256_set1_ps(x[t * ldx + i]);
            acc[t][0] = _mm256_fmadd_ps(xv, w0, acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(xv, w1, acc[t][1]);
        }
    }
    if (nc == kStrip) {
        for (int t = 0; t < MR; ++t) {
            _mm256_storeu_ps(out + t * ldo, acc[t][0]);
            _mm256_storeu_ps(out + t * ldo + 8, acc[t][1]);
        }
        return;
    }
    const __m256i m0 = lanes_below(nc), m1 = lanes_below(nc - 8);
    for (int t = 0; t < MR; ++t) {
        _mm256_maskstore_ps(out + t * ldo, m0, acc[t][0]);
        _mm256_maskstore_ps(out + t * ldo + 8, m1, acc[t][1]);
    }
}

template <int MR>
void tile_avx2_fn(float* out, int64_t ldo, const float* x, int64_t ldx, const float* strip, int64_t n_in, int64_t nc) {
    tile_avx2<MR>(out, ldo, x, ldx, strip, n_in, nc);
}

void gemm_avx2(float* out, const float* x, const Matrix& W, int T, int64_t o0, int64_t o1) {
    using Tile = void (*)(float*, int64_t, const float*, int64_t, const float*, int64_t, int64_t);
    static constexpr Tile tiles[kMR + 1] = {nullptr, tile_avx2_fn<1>, tile_avx2_fn<2>, tile_avx2_fn<3>, tile_avx2_fn<4>, tile_avx2_fn<5>, tile_avx2_fn<6>};
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    thread_local std::vector<float> panel;
    panel.resize(static_cast<size_t>(n_in * kNB));
    for (int64_t c0 = o0; c0 < o1; c0 += kNB) {
        const int64_t nc = std::min(kNB, o1 - c0);
        pack_panel_avx2_any(panel.data(), W, c0, nc);
        for (int64_t s = 0; s * kStrip < nc; ++s) {
            const float* strip = panel.data() + s * n_in * kStrip;
            const int64_t ns = std::min(kStrip, nc - s * kStrip);
            for (int t = 0; t < T; t += kMR)
                tiles[std::min(kMR, T - t)](out + t * n_out + c0 + s * kStrip, n_out, x + t * n_in, n_in, strip, n_in, ns);
        }
    }
}

}  // namespace

void gemm_outputs(float* out, const float* x, const Matrix& W, int T, int64_t o0, int64_t o1) {
    if (gemm_fast_available()) gemm_avx512(out, x, W, T, o0, o1);
    else if (avx2_kernels()) gemm_avx2(out, x, W, T, o0, o1);
    else gemm_portable(out, x, W, T, o0, o1);
}

void gemm(float* out, const float* x, const Matrix& W, int T) {
    const int64_t n_out = W.n_out();
    const int64_t blocks = (n_out + kNB - 1) / kNB;
    const bool fast = gemm_fast_available(), avx2 = !fast && avx2_kernels();
    // Threads take whole panels as they come, not fixed shares, so a thread that is preempted
    // on a shared machine leaves its panels to the others. A panel's sums do not depend on
    // which thread computes it.
    std::atomic<int64_t> next{0};
    thread_pool().run([&](int, int) {
        for (int64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
            const int64_t o0 = b * kNB, o1 = std::min(n_out, o0 + kNB);
            if (fast) gemm_avx512(out, x, W, T, o0, o1);
            else if (avx2) gemm_avx2(out, x, W, T, o0, o1);
            else gemm_portable(out, x, W, T, o0, o1);
        }
    });
}

}  // namespace journey
