// Q8_0, Q4_0 and MXFP4 rows · Q8_0-quantized activations (see include/journey/kernels/blocks/dot.h
// for the arithmetic). The portable loop is the definition; the AVX-512 VNNI kernel does the same
// operations, 16 lanes (two blocks) at a time, for several rows at once so they share the
// activation loads, or for several tokens at once so they share the weights' unpacking.
#include "journey/kernels/blocks/dot.h"

#include <algorithm>
#include <cmath>
#include <cpuid.h>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "journey/kernels/blocks/layout.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/half.h"
#include "../avx2_lanes.h"
#include "../avx512_loads.h"
#include "../lanes.h"
#include "dot_kinds.h"
#include "iq_grids.h"

namespace journey {
namespace {

constexpr int64_t kPair = 2 * kQK;  // elements per pair of blocks: one 64-byte vector

uint16_t load_u16(const std::byte* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

// The weight formats, all int8 per element: Q8_0 stores w after its half scale; Q4_0 stores
// w + 8 in a nibble (element j < 16 in the low nibble of byte j, element j + 16 in its high
// nibble) after its half scale; MXFP4 stores an E8M0 exponent e, then nibbles as Q4_0 that index
// the doubled E2M1 values (kMxfp4Values, -12 .. 12), its scale 2^(e-128) (e8m0_half), exactly as
// ggml_vec_dot_mxfp4_q8_0 reads it.
template <DType D>
constexpr int64_t kBlockBytes = D == DType::Q8_0 ? int64_t(sizeof(BlockQ8_0)) : D == DType::Q4_0 ? int64_t(sizeof(BlockQ4_0)) : 17;
template <DType D>
constexpr int64_t kQuantsAt = D == DType::MXFP4 ? 1 : 2;  // where the quants start in a block

// e8m0_half of every exponent byte, looked up by both paths (the same floats).
struct E8m0Table {
    float half[256];
    E8m0Table() {
        for (int e = 0; e < 256; ++e) half[e] = e8m0_half(uint8_t(e));
    }
};
const E8m0Table kE8m0;

template <DType D>
float block_scale(const std::byte* blk) {
    if constexpr (D == DType::MXFP4) return kE8m0.half[uint8_t(blk[0])];
    else return fp16_to_fp32(load_u16(blk));
}

// ---- portable ------------------------------------------------------------------------------

template <DType D>
void unpack_block(const std::byte* blk, int8_t* w) {
    if constexpr (D == DType::Q8_0) {
        std::memcpy(w, blk + 2, kQK);
    } else if constexpr (D == DType::Q4_0) {
        const auto* nibbles = reinterpret_cast<const uint8_t*>(blk + 2);  // char types may alias
        for (int j = 0; j < kQK / 2; ++j) w[j] = static_cast<int8_t>((nibbles[j] & 0x0f) - 8);
        for (int j = 0; j < kQK / 2; ++j) w[j + kQK / 2] = static_cast<int8_t>((nibbles[j] >> 4) - 8);
    } else {
        const auto* nibbles = reinterpret_cast<const uint8_t*>(blk + 1);
        for (int j = 0; j < kQK / 2; ++j) w[j] = kMxfp4Values[nibbles[j] & 0x0f];
        for (int j = 0; j < kQK / 2; ++j) w[j + kQK / 2] = kMxfp4Values[nibbles[j] >> 4];
    }
}

template <DType D>
float dot_row_portable(const std::byte* row, const QuantizedActivations& x) {
    const int64_t nb = x.n / kQK;
    float acc[16] = {};
    for (int64_t c = 0; c < (nb + 1) / 2; ++c) {
        for (int h = 0; h < 2; ++h) {  // the pair's blocks 2c and 2c+1: lanes 8h .. 8h+7
            const int64_t b = 2 * c + h;
            int32_t isum[8] = {};
            float scale = 0.0f;
            if (b < nb) {
                const std::byte* blk = row + b * kBlockBytes<D>;
                int8_t w[kQK];
                unpack_block<D>(blk, w);
                const int8_t* q = x.q.data() + b * kQK;
                // spelled out per group of 4 so that compilers vectorize it (2x faster than a
                // loop over j accumulating into isum[j / 4])
                for (int g = 0; g < 8; ++g)
                    isum[g] = int32_t(w[4 * g]) * q[4 * g] + int32_t(w[4 * g + 1]) * q[4 * g + 1] +
                              int32_t(w[4 * g + 2]) * q[4 * g + 2] + int32_t(w[4 * g + 3]) * q[4 * g + 3];
                scale = block_scale<D>(blk) * x.d[size_t(b)];
            }
            for (int g = 0; g < 8; ++g) acc[8 * h + g] = std::fma(float(isum[g]), scale, acc[8 * h + g]);
        }
    }
    return reduce16(acc);
}

// ---- AVX-512 VNNI ----------------------------------------------------------------------------

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_f16c() {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}

bool cpu_avx512vnni() {
    static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") && cpu_f16c();
    return ok;
}

// vpdpbusd multiplies unsigned by signed bytes, so the kernels feed it w + k as u8 (Q8_0:
// k = 128, the top bit flipped, exact for every int8 including -128; Q4_0: k = 8, the nibble
// as stored; MXFP4: k = 128, looked up by vpshufb in a table of the values + 128). The dot then holds k · Σq too, which x's bias (-k · Σq per lane) removes:
// seeding the accumulator with it leaves Σ w·q.
//
// One pair of blocks (2c, 2c+1) of one row: acc += float(Σ w·q per lane) · (d_w · d_x). With
// pair false only block 2c exists: the upper half of w is zero instead of read (it may lie
// past the end of the matrix), and with x's zero padding its lanes add fma(0, 0, acc).
// (The zero-masked forms spell out what the plain ones do without GCC 12's false "may be used
// uninitialized" warnings.)
// MXFP4's 16 values + 128 as unsigned bytes (vpshufb's table).
struct Mxfp4U8 {
    alignas(16) uint8_t v[16];
    constexpr Mxfp4U8() : v() {
        for (int i = 0; i < 16; ++i) v[i] = uint8_t(kMxfp4Values[i] + 128);
    }
};
constexpr Mxfp4U8 kMxfp4U8;
__attribute__((target("avx512f,avx512bw,avx512vl"), always_inline)) inline __m128i mxfp4_u8() {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(kMxfp4U8.v));
}

// A pair of blocks' weights as vpdpbusd's unsigned bytes (u) and their two scales in lanes (dw).
template <DType D>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c"), always_inline)) inline void
unpack_pair_vnni(const std::byte* blk, bool pair, __m512i& u, __m512& dw) {
    if constexpr (D == DType::Q8_0) {
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
        const __m256i w1 = pair ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 36)) : _mm256_setzero_si256();
        const __m512i w = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(w0), w1, 1);
        u = _mm512_xor_si512(w, _mm512_set1_epi8(static_cast<char>(0x80)));
    } else {
        constexpr int64_t at = kQuantsAt<D>;
        const __m128i n0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + at));
        const __m128i n1 = pair ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kBlockBytes<D> + at)) : _mm_setzero_si128();
        const __m256i nn0 = _mm256_inserti128_si256(_mm256_castsi128_si256(n0), n0, 1);
        const __m256i nn1 = _mm256_inserti128_si256(_mm256_castsi128_si256(n1), n1, 1);
        __m512i z = _mm512_maskz_inserti64x4(0xFF, _mm512_castsi256_si512(nn0), nn1, 1);  // 16-byte lanes n0 n0 n1 n1
        z = _mm512_mask_srli_epi16(z, 0xFF00FF00, z, 4);  // lanes 1 and 3: the high nibbles
        u = _mm512_and_si512(z, _mm512_set1_epi8(0x0f));
        // MXFP4: the nibble indexes the values + 128 (a missing second block's zero nibbles
        // give 128, which x's zero padding multiplies by 0 and its zero bias leaves alone)
        if constexpr (D == DType::MXFP4) u = _mm512_shuffle_epi8(_mm512_maskz_broadcast_i32x4(0xFFFF, mxfp4_u8()), u);
    }
    if constexpr (D == DType::MXFP4) {
        const __m512 d0 = _mm512_set1_ps(kE8m0.half[uint8_t(blk[0])]);
        dw = _mm512_mask_broadcastss_ps(d0, 0xFF00, _mm_set_ss(pair ? kE8m0.half[uint8_t(blk[kBlockBytes<D>])] : 0.0f));
    } else {
        const __m128i h0 = _mm_set1_epi16(static_cast<short>(load_u16(blk)));
        const __m128i h1 = _mm_set1_epi16(pair ? static_cast<short>(load_u16(blk + kBlockBytes<D>)) : 0);
        dw = _mm512_maskz_cvtph_ps(0xFFFF, _mm256_inserti128_si256(_mm256_castsi128_si256(h0), h1, 1));
    }
}

// acc += float(Σ w·q per lane) · (d_w · d_x), for the pair unpacked as u, dw.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c"), always_inline)) inline __m512
apply_pair_vnni(__m512 acc, __m512i u, __m512 dw, __m512i xq, __m512i bias, __m512 dx) {
    const __m512i isum = _mm512_dpbusd_epi32(bias, u, xq);
    return _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, isum), _mm512_mul_ps(dw, dx), acc);
}

template <DType D>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c"), always_inline)) inline __m512
pair_vnni(__m512 acc, const std::byte* blk, __m512i xq, __m512i bias, __m512 dx, bool pair) {
    __m512i u;  // w + k, 64 bytes: block 2c in the low half, 2c+1 in the high half
    __m512 dw;
    unpack_pair_vnni<D>(blk, pair, u, dw);
    return apply_pair_vnni(acc, u, dw, xq, bias, dx);
}

// Rows are R at a time; each 64-element step loads x's quants, bias and scales once for all R.
// The weights come from L3 or DRAM, read once per token: the hardware prefetcher alone keeps
// too few lines in flight for R interleaved streams, so each step also prefetches the two
// lines `ahead` bytes on (the same place some groups of rows later; 0 near the end), into L1
// (_MM_HINT_T0) or, with IntoL2, only into L2 (_MM_HINT_T1, the sequential shape: gemv.h).
// (A bool, not the hint itself: g++ types the hints as enum _mm_hint, clang as int; the two
// calls are avx512_loads.h's prefetch and prefetch_l2.)
template <DType D, int R, bool IntoL2 = false>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))
void dot_rows_vnni(float* out, const std::byte* row0, size_t row_bytes, const QuantizedActivations& x, size_t ahead) {
    const int64_t nb = x.n / kQK;
    constexpr int64_t pair_bytes = 2 * kBlockBytes<D>;
    const int32_t* bias_k = D == DType::Q4_0 ? x.bias_q4_0.data() : x.bias_q8_0.data();
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    int64_t c = 0;
    for (; 2 * c + 1 < nb; ++c) {
        const __m512i xq = _mm512_loadu_si512(x.q.data() + c * kPair);
        const __m512i bias = _mm512_loadu_si512(bias_k + c * 16);
        const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + c * 16);
        for (int r = 0; r < R; ++r) {
            const std::byte* blk = row0 + size_t(r) * row_bytes + c * pair_bytes;
            constexpr auto ask = IntoL2 ? avx512::prefetch_l2 : avx512::prefetch;
            ask(blk + ahead);
            if constexpr (pair_bytes > 64) ask(blk + ahead + 64);
            acc[r] = pair_vnni<D>(acc[r], blk, xq, bias, dx, true);
        }
    }
    if (2 * c < nb) {  // an odd number of blocks: the last one alone
        const __m512i xq = _mm512_loadu_si512(x.q.data() + c * kPair);
        const __m512i bias = _mm512_loadu_si512(bias_k + c * 16);
        const __m512 dx = _mm512_loadu_ps(x.d_lanes.data() + c * 16);
        for (int r = 0; r < R; ++r)
            acc[r] = pair_vnni<D>(acc[r], row0 + size_t(r) * row_bytes + c * pair_bytes, xq, bias, dx, false);
    }
    for (int r = 0; r < R; ++r) out[r] = avx512::hsum16(acc[r]);
}

// R rows against N tokens' activations (sequences decoded together): each pair of the R rows'
// weight blocks is loaded and unpacked once for the N tokens, and each token's quants, bias and
// scales once for the R rows (from `tile`, pack_tokens' layout); every (row, token) takes
// exactly pair_vnni's operations in the same order (the same bits as dot_rows_vnni<D, 1> on
// that token alone). `ahead` (0: none): the R rows' lines that far on are asked for from memory
// while these are computed (a no-op past the end).
// The empty asm makes the token's quants and scales opaque values in registers: GCC otherwise
// folds their loads into the R multiplications as memory operands, and at R = 4 the loads
// (2.25 a pair and token) bound the loop (1.3 against 0.9 pairs x tokens a ns at 8 tokens, this host).
template <DType D, int R, int N>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,fma,f16c")))
void dot_tile_vnni(float* out, int64_t out_stride, const std::byte* row0, size_t row_bytes, const std::byte* tile, int64_t nb,
                   size_t ahead) {
    constexpr int64_t pair_bytes = 2 * kBlockBytes<D>;
    __m512 acc[R][N];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < N; ++t) acc[r][t] = _mm512_setzero_ps();
    for (int64_t c = 0; 2 * c < nb; ++c) {
        const bool pair = 2 * c + 1 < nb;  // false: an odd number of blocks, the last one alone
        __m512i u[R];
        __m512 dw[R];
        for (int r = 0; r < R; ++r) {
            const std::byte* blk = row0 + size_t(r) * row_bytes + c * pair_bytes;
            if (ahead) {
                avx512::prefetch(blk + ahead);
                if constexpr (pair_bytes > 64) avx512::prefetch(blk + ahead + 64);
            }
            unpack_pair_vnni<D>(blk, pair, u[r], dw[r]);
        }
        const std::byte* a = tile + c * N * 192;
        for (int t = 0; t < N; ++t) {
            __m512i xq = _mm512_loadu_si512(a + t * 192);
            const __m512i bias = _mm512_loadu_si512(a + t * 192 + 64);
            __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(a + t * 192 + 128));
            asm("" : "+v"(xq), "+v"(dx));
            for (int r = 0; r < R; ++r) acc[r][t] = apply_pair_vnni(acc[r][t], u[r], dw[r], xq, bias, dx);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < N; ++t) out[t * out_stride + r] = avx512::hsum16(acc[r][t]);
}

// 4 rows x 8 tokens (32 accumulators; GCC keeps some of the rows' unpacked pairs on the stack):
// one core, 64 rows of 2048 in L2, ns a pair and token at 8 tokens 0.53-0.59 against 4 x 4's
// 0.60-0.62 (whose second token tile unpacks the rows again), and 16 tokens 0.52-0.56 against
// 0.57-0.58; 2 x 8 (0.80), 3 x 6 (0.70), 4 x 5 (0.61) ran slower (alternating, this host at load
// average ~25, 7 Dec 02:20 UTC).
constexpr int kTileRows = 4, kTileTokens = 8;

// The tile for n (1 .. N) tokens.
template <DType D, int R, int N = kTileTokens>
void dot_tile_upto(int n, float* o, int64_t out_stride, const std::byte* rows, size_t row_bytes, const std::byte* tile, int64_t nb,
                   size_t a) {
    if constexpr (N == 1) {
        dot_tile_vnni<D, R, 1>(o, out_stride, rows, row_bytes, tile, nb, a);
    } else {
        if (n == N) return dot_tile_vnni<D, R, N>(o, out_stride, rows, row_bytes, tile, nb, a);
        dot_tile_upto<D, R, N - 1>(n, o, out_stride, rows, row_bytes, tile, nb, a);
    }
}

// One row tile (R rows) against every token tile; its weights come from memory for the first
// token tile and from cache for the others.
template <DType D, int R>
void dot_row_tile_tokens(float* out, int64_t out_stride, const std::byte* rows, size_t row_bytes, const PackedTokens& p,
                         int64_t nb, size_t ahead) {
    for (int t = 0; t < p.T; t += kTileTokens) {
        const std::byte* tile = p.bytes.data() + size_t(t) * size_t(p.pairs) * 192;
        const size_t a = t == 0 ? ahead : 0;
        dot_tile_upto<D, R>(std::min(kTileTokens, p.T - t), out + t * out_stride, out_stride, rows, row_bytes, tile, nb, a);
    }
}

// Rows r0 .. r1 in tiles of kTileRows (the last rows one at a time), each asking for the rows
// two tiles on. (On AMD Zen the one-token rows' sequential shape, each row's lines 8 KiB on into
// L2, ran slower here: 2 tokens 1.4-1.5 against 1.0 ns a pair and token, 8192 rows of 2048.)
template <DType D>
void dot_rows_tokens_vnni(float* out, int64_t out_stride, const Matrix& W, const PackedTokens& p, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    const int64_t nb = W.cols / kQK;
    int64_t r = r0;
    for (; r + kTileRows <= r1; r += kTileRows) {
        const size_t ahead = r + 3 * kTileRows <= W.rows ? 2 * kTileRows * row_bytes : 0;
        dot_row_tile_tokens<D, kTileRows>(out + r, out_stride, W.data + size_t(r) * row_bytes, row_bytes, p, nb, ahead);
    }
    for (; r < r1; ++r) dot_row_tile_tokens<D, 1>(out + r, out_stride, W.data + size_t(r) * row_bytes, row_bytes, p, nb, 0);
}

// ---- AVX2 (no AVX-512 VNNI: avx2_lanes.h) ---------------------------------------------------

// One block's 32 weights as int8 (unpack_block's values), in a register.
template <DType D>
JOURNEY_AVX2 inline __m256i block_i8_avx2(const std::byte* blk) {
    if constexpr (D == DType::Q8_0) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
    } else {
        const __m128i n = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQuantsAt<D>));
        const __m128i m = _mm_set1_epi8(0x0f);
        // elements 0..15: the low nibbles, 16..31: the high ones
        const __m256i nib = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(n, 4), m), _mm_and_si128(n, m));
        if constexpr (D == DType::Q4_0) {
            return _mm256_sub_epi8(nib, _mm256_set1_epi8(8));
        } else {
            const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kMxfp4Values));
            return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), nib);
        }
    }
}

// acc += float(Σ w·q per group of 4) · (d_w · d_x) for one block (dot_row_portable's lanes 8h ..
// 8h+7). The integer sums are exact: vpmaddubsw takes |w| (unsigned, at most 128) against q with
// w's sign (|q| <= 127: quantize_activations), so a pair's sum is at most 32512 and never
// saturates; vpmaddwd adds the pairs into each group's int32.
template <DType D>
JOURNEY_AVX2 inline __m256 block_avx2(__m256 acc, const std::byte* blk, const int8_t* q, float dx) {
    const __m256i w = block_i8_avx2<D>(blk);
    const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(xq, w));
    const __m256i isum = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
    // d_w by F16C (exact, as fp16_to_fp32, without its branches: they were a fifth of the time)
    float dw;
    if constexpr (D == DType::MXFP4) dw = block_scale<D>(blk);
    else dw = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(load_u16(blk))));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dw * dx), acc);
}

// One row after another (a token's dot is bound by memory), each asking for the lines
// kStreamAheadL2 on in the stream into L2 as the AVX-512 sequential shape does.
template <DType D>
JOURNEY_AVX2 void dot_rows_avx2(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(D, uint64_t(W.cols));
    const int64_t nb = x.n / kQK;
    constexpr int64_t bb = kBlockBytes<D>;
    for (int64_t r = r0; r < r1; ++r) {
        const std::byte* row = W.data + size_t(r) * row_bytes;
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
        int64_t b = 0;
        for (; b + 1 < nb; b += 2) {
            const std::byte* blk = row + b * bb;
            avx2::prefetch_l2(blk + kStreamAheadL2);
            if constexpr (2 * bb > 64) avx2::prefetch_l2(blk + kStreamAheadL2 + 64);
            lo = block_avx2<D>(lo, blk, x.q.data() + b * kQK, x.d[size_t(b)]);
            hi = block_avx2<D>(hi, blk + bb, x.q.data() + (b + 1) * kQK, x.d[size_t(b + 1)]);
        }
        if (b < nb) lo = block_avx2<D>(lo, row + b * bb, x.q.data() + b * kQK, x.d[size_t(b)]);  // the last block alone
        out[r] = avx2::hsum16(lo, hi);
    }
}

// Several tokens on AVX2 (sequences decoded together). dot_rows_avx2's row is two chains of 8
// lanes, lo taking the even blocks and hi the odd ones. A tile of R rows x N tokens takes lo's
// blocks of a chunk for its R x N (row, token) pairs, then hi's (R x N accumulators in
// registers, kept in memory between chunks); each block of the R rows is loaded and decoded
// once for the N tokens, each token's block once for the R rows, and every (row, token) takes
// block_avx2's operations in its order: the same exact integer sums, then float(isum) ·
// (d_w · d_x) (the product of the same two floats) into its chain, so every output has the bits
// of dot_rows_avx2 on that token alone.
//
// The tokens come packed (pack_tokens, `avx2`): in tiles of dot_token_tile's counts, per block
// the tile's n tokens' 32 quants side by side, then their n scales d_x (8 floats, the rest 0):
// n · 32 + 32 bytes a block. Each row's d_w times the tile's d_x is one multiplication, stored;
// a (row, token) pair then takes its product as a broadcast load rather than a multiplication.

// The bytes of a block of a packed tile of n tokens.
constexpr size_t tile_block_bytes(int n) { return size_t(n) * 32 + 32; }

template <int R, int N>
using DotChainsAvx2 = __m256[2][R][N];  // [lo, hi][row][token]

// Blocks b0 .. b1 (b0 even) of R rows (`rows`, row_bytes apart) against the packed tile `xt` of N
// tokens, into c: lo's blocks in order, then hi's. Each of lo and hi tells `ahead` the weight
// bytes it reads (it asks for the next block of rows in turn, avx2_lanes.h).
template <DType D, int R, int N>
JOURNEY_AVX2 inline void dot_chunk_avx2(DotChainsAvx2<R, N>& c, const std::byte* rows, size_t row_bytes, const std::byte* xt, int64_t b0,
                                        int64_t b1, avx2::Ahead& ahead) {
    constexpr int64_t bb = kBlockBytes<D>;
    constexpr size_t xb = tile_block_bytes(N);
    const __m256i ones = _mm256_set1_epi16(1);
    for (int h = 0; h < 2; ++h) {
        ahead.read(size_t(R) * bb * size_t((b1 - b0 - h + 1) / 2));
        __m256 acc[R][N];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < N; ++t) acc[r][t] = c[h][r][t];
        for (int64_t b = b0 + h; b < b1; b += 2) {
            const std::byte* xq = xt + size_t(b) * xb;
            const __m256 dx = _mm256_load_ps(reinterpret_cast<const float*>(xq + N * 32));
            __m256i w[R], aw[R];
            alignas(32) float scale[R][8];
            for (int r = 0; r < R; ++r) {
                const std::byte* blk = rows + size_t(r) * row_bytes + b * bb;
                w[r] = block_i8_avx2<D>(blk);
                aw[r] = _mm256_sign_epi8(w[r], w[r]);
                __m256 dw;
                if constexpr (D == DType::MXFP4) dw = _mm256_set1_ps(block_scale<D>(blk));
                else dw = _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(load_u16(blk))));
                _mm256_store_ps(scale[r], _mm256_mul_ps(dw, dx));
            }
            for (int t = 0; t < N; ++t) {
                const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq + t * 32));
                for (int r = 0; r < R; ++r) {
                    const __m256i isum = _mm256_madd_epi16(_mm256_maddubs_epi16(aw[r], _mm256_sign_epi8(q, w[r])), ones);
                    acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_broadcast_ss(&scale[r][t]), acc[r][t]);
                }
            }
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < N; ++t) c[h][r][t] = acc[r][t];
    }
}

// dot_chunk_avx2's tile of 1 row x 8 tokens, its eight chains named (GCC kept the array's in
// memory, a store a step): the same operations for every (row, token), in the same order.
template <DType D>
JOURNEY_AVX2 inline void dot_chunk8_avx2(DotChainsAvx2<1, 8>& c, const std::byte* row, const std::byte* xt, int64_t b0, int64_t b1,
                                         avx2::Ahead& ahead) {
    constexpr int64_t bb = kBlockBytes<D>;
    constexpr size_t xb = tile_block_bytes(8);
    const __m256i ones = _mm256_set1_epi16(1);
    for (int h = 0; h < 2; ++h) {
        ahead.read(size_t(bb) * size_t((b1 - b0 - h + 1) / 2));
        __m256 a0 = c[h][0][0], a1 = c[h][0][1], a2 = c[h][0][2], a3 = c[h][0][3];
        __m256 a4 = c[h][0][4], a5 = c[h][0][5], a6 = c[h][0][6], a7 = c[h][0][7];
        for (int64_t b = b0 + h; b < b1; b += 2) {
            const std::byte* xq = xt + size_t(b) * xb;
            const std::byte* blk = row + b * bb;
            const __m256i w = block_i8_avx2<D>(blk);
            const __m256i aw = _mm256_sign_epi8(w, w);
            __m256 dw;
            if constexpr (D == DType::MXFP4) dw = _mm256_set1_ps(block_scale<D>(blk));
            else dw = _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(load_u16(blk))));
            alignas(32) float scale[8];
            _mm256_store_ps(scale, _mm256_mul_ps(dw, _mm256_load_ps(reinterpret_cast<const float*>(xq + 8 * 32))));
            auto step = [&](__m256& a, int t) {
                const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq + t * 32));
                const __m256i isum = _mm256_madd_epi16(_mm256_maddubs_epi16(aw, _mm256_sign_epi8(q, w)), ones);
                a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_broadcast_ss(&scale[t]), a);
            };
            step(a0, 0), step(a1, 1), step(a2, 2), step(a3, 3), step(a4, 4), step(a5, 5), step(a6, 6), step(a7, 7);
        }
        c[h][0][0] = a0, c[h][0][1] = a1, c[h][0][2] = a2, c[h][0][3] = a3;
        c[h][0][4] = a4, c[h][0][5] = a5, c[h][0][6] = a6, c[h][0][7] = a7;
    }
}

// Rows per tile for N tokens, each dividing kDotBlockRowsAvx2: R x N of 4 to 9 accumulators, with
// the R rows' w and |w| in 16 registers. Q8_0 in L1 (12 rows of 768 or 2048 inputs, one thread):
// 2 x 4 0.93-0.98 ns a block and token (34 MACs a ns; the instructions alone, in registers:
// 0.6), 3 x 3 1.04-1.14, 4 x 2 1.12-1.19, 4 x 1 1.36-1.47; the dots of one token at a time 1.9.
// 1 x 8 (the row's block decoded once for 8 tokens, its scales' product all 8 lanes): 2048
// inputs from memory, 8 alternating runs, 8 tokens 0.96-1.27 against 2 x 4's 1.03-1.30, 16
// tokens 0.93-1.21 against 0.98-1.27 (docs/speed.md, "AVX2 several-token tiles").
template <int N>
constexpr int kDotRowsAvx2 = N == 1 ? 4 : N == 2 ? 4 : N == 3 ? 3 : N == 8 ? 1 : 2;

// The token tiles of these kernels: 8 tokens while 8 are left (one row x 8 tokens), then
// avx2::token_tile's 4, 3, 2, 1.
inline int dot_token_tile(int T, int t0) { return T - t0 >= 8 ? 8 : avx2::token_tile(T, t0); }
inline int dot_token_tiles(int T) {
    int k = 0;
    for (int t = 0; t < T; t += dot_token_tile(T, t)) ++k;
    return k;
}
// Blocks a chunk (even), rows a block. 12 rows of 768 to 8192 inputs in L1, one thread, medians of
// 4 alternating runs: 32 blocks a chunk 25-34 MACs a ns, 16 22-33 (768 inputs a row: one chunk,
// not two), 64 alike.
constexpr int64_t kDotChunkAvx2 = 32, kDotBlockRowsAvx2 = 12;

// A block of n_rows rows (at most kDotBlockRowsAvx2) against the packed tile xt of N tokens:
// kDotChunkAvx2 blocks at a time, each taken by the block's tiles of kDotRowsAvx2<N> rows in turn
// (the last n_rows % R rows alone), so that the tokens' chunk stays in L1 for the block's rows.
// `ahead`: the next block of rows, asked for into L2 as this one is read (avx2_lanes.h).
template <DType D, int N>
JOURNEY_AVX2 void dot_block_avx2(float* out, int64_t out_stride, const std::byte* rows, size_t row_bytes, const std::byte* xt, int64_t nb,
                                 int64_t n_rows, avx2::Ahead& ahead) {
    constexpr int R = kDotRowsAvx2<N>;
    const int64_t tiles = n_rows / R, alone = n_rows % R;
    DotChainsAvx2<R, N> c[kDotBlockRowsAvx2 / R];
    DotChainsAvx2<1, N> c1[R];
    for (int64_t k = 0; k < tiles; ++k)
        for (auto& h : c[k])
            for (auto& r : h)
                for (auto& z : r) z = _mm256_setzero_ps();
    for (int64_t k = 0; k < alone; ++k)
        for (auto& h : c1[k])
            for (auto& r : h)
                for (auto& z : r) z = _mm256_setzero_ps();
    for (int64_t b0 = 0; b0 < nb; b0 += kDotChunkAvx2) {
        const int64_t b1 = std::min(nb, b0 + kDotChunkAvx2);
        for (int64_t k = 0; k < tiles; ++k)
            if constexpr (N == 8) dot_chunk8_avx2<D>(c[k], rows + size_t(k) * row_bytes, xt, b0, b1, ahead);
            else dot_chunk_avx2<D, R, N>(c[k], rows + size_t(k * R) * row_bytes, row_bytes, xt, b0, b1, ahead);
        for (int64_t k = 0; k < alone; ++k)
            dot_chunk_avx2<D, 1, N>(c1[k], rows + size_t(tiles * R + k) * row_bytes, row_bytes, xt, b0, b1, ahead);
    }
    for (int64_t k = 0; k < tiles; ++k)
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < N; ++t) out[t * out_stride + k * R + r] = avx2::hsum16(c[k][0][r][t], c[k][1][r][t]);
    for (int64_t k = 0; k < alone; ++k)
        for (int t = 0; t < N; ++t) out[t * out_stride + tiles * R + k] = avx2::hsum16(c1[k][0][0][t], c1[k][1][0][t]);
}

// Rows r0 .. r1 against every token (p: pack_tokens' AVX2 layout), kDotBlockRowsAvx2 rows at a
// time against every token tile: the rows come from L2 (asked for while the block before was
// read) or memory for the first, from L1 or L2 for the others.
template <DType D>
JOURNEY_AVX2 void dot_rows_tokens_avx2(float* out, int64_t out_stride, const Matrix& W, const PackedTokens& p, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
    const int64_t nb = W.cols / kQK;
    const int tiles = dot_token_tiles(p.T);
    for (int64_t o = r0; o < r1; o += kDotBlockRowsAvx2) {
        const int64_t n_rows = std::min(kDotBlockRowsAvx2, r1 - o);
        const std::byte* rows = W.data + size_t(o) * row_bytes;
        avx2::Ahead ahead(rows, size_t(n_rows) * row_bytes, tiles);
        const std::byte* xt = p.bytes.data();
        for (int t = 0, n; t < p.T; t += n, xt += size_t(nb) * tile_block_bytes(n)) {
            n = dot_token_tile(p.T, t);
            float* ot = out + t * out_stride + o;
            switch (n) {
                case 8: dot_block_avx2<D, 8>(ot, out_stride, rows, row_bytes, xt, nb, n_rows, ahead); break;
                case 1: dot_block_avx2<D, 1>(ot, out_stride, rows, row_bytes, xt, nb, n_rows, ahead); break;
                case 2: dot_block_avx2<D, 2>(ot, out_stride, rows, row_bytes, xt, nb, n_rows, ahead); break;
                case 3: dot_block_avx2<D, 3>(ot, out_stride, rows, row_bytes, xt, nb, n_rows, ahead); break;
                default: dot_block_avx2<D, 4>(ot, out_stride, rows, row_bytes, xt, nb, n_rows, ahead); break;
            }
        }
    }
}

template <DType D>
void dot_rows_of(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    const size_t row_bytes = dtype_bytes(D, uint64_t(W.cols));
    if (!quant_dot_fast_available()) {
        if (quant_dot_avx2_available()) return dot_rows_avx2<D>(out, W, x, r0, r1);
        for (int64_t r = r0; r < r1; ++r) out[r] = dot_row_portable<D>(W.data + size_t(r) * row_bytes, x);
        return;
    }
    // The sequential shape (AMD Zen, gemv.h): one row after another, asking for the lines
    // kStreamAheadL2 bytes on in the stream, into L2 (past the matrix's end a prefetch is a
    // no-op); each row's sums are the same as in a group of R.
    if (stream_shape() == StreamShape::sequential) {
        for (int64_t r = r0; r < r1; ++r)
            dot_rows_vnni<D, 1, true>(out + r, W.data + size_t(r) * row_bytes, row_bytes, x, kStreamAheadL2);
        return;
    }
    // Interleaved (Intel): prefetch whole groups of 4 rows ahead, at least 8 KiB (measured on
    // the 130 MB GPT-2 small in Q8_0: memory-bound, ~2x the rate of no prefetching; 3 KiB ahead
    // was slower), past r1 too (the caller's next rows, or another thread's) but not past the matrix.
    constexpr int64_t R = 4;
    const int64_t groups_ahead = std::max<int64_t>(1, (8192 + R * int64_t(row_bytes) - 1) / (R * int64_t(row_bytes)));
    int64_t r = r0;
    for (; r + R <= r1; r += R) {
        const size_t ahead = r + (groups_ahead + 1) * R <= W.rows ? size_t(groups_ahead * R) * row_bytes : 0;
        dot_rows_vnni<D, R>(out + r, W.data + size_t(r) * row_bytes, row_bytes, x, ahead);
    }
    for (; r < r1; ++r) dot_rows_vnni<D, 1>(out + r, W.data + size_t(r) * row_bytes, row_bytes, x, 0);
}

}  // namespace

// ---- activations -----------------------------------------------------------------------------

namespace {

// llama.cpp's Q8_K (quantize_row_q8_K_ref), one block of 256; non-finite x: d NaN, q zero.
void quantize_block_q8_k(const float* x, int8_t* q, float& d) {
    float max = 0.0f, amax = 0.0f;
    bool finite = true;
    for (int j = 0; j < 256; ++j) {
        finite = finite && std::isfinite(x[j]);
        if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
    }
    if (!finite) {
        d = std::numeric_limits<float>::quiet_NaN();
        return;
    }
    if (amax == 0.0f) return;
    const float iscale = -127.0f / max;
    if (std::isfinite(iscale)) {
        // nearbyintf rounds to nearest, ties to even, as ggml's nearest_int does for |v| < 2^22
        for (int j = 0; j < 256; ++j) q[j] = static_cast<int8_t>(std::min(127.0f, std::nearbyint(iscale * x[j])));
        d = 1.0f / iscale;
    } else {  // |max| below 127 / FLT_MAX (where ggml's float scale overflows): in double
        const double s = -127.0 / double(max);
        for (int j = 0; j < 256; ++j) q[j] = static_cast<int8_t>(std::min(127.0, std::nearbyint(s * double(x[j]))));
        d = float(1.0 / s);
    }
}

void quantize_activations_q8_k(const float* x, int64_t n, QuantizedActivations& out) {
    out.q.assign(size_t(n), 0);
    out.d.assign(size_t(n / 256), 0.0f);
    out.sum16.assign(size_t(n / 16), 0);
    out.sum32.assign(size_t(n / 32), 0);
    out.d_lanes.clear();
    for (auto* v : {&out.bias_q8_0, &out.bias_q4_0, &out.sum4}) v->clear();
    for (int64_t b = 0; b < n / 256; ++b) quantize_block_q8_k(x + 256 * b, out.q.data() + 256 * b, out.d[size_t(b)]);
    for (int64_t g = 0; g < n / 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += out.q[size_t(16 * g + j)];
        out.sum16[size_t(g)] = int16_t(s);
        out.sum32[size_t(g / 2)] = int16_t(out.sum32[size_t(g / 2)] + s);
    }
}

}  // namespace

int activation_block(DType w) { return has_k_dot(w) || has_iq_dot(w) ? 256 : kQK; }

void quantize_activations(const float* x, int64_t n, QuantizedActivations& out, int block) {
    if (block != kQK && block != 256)
        throw std::invalid_argument("quantize_activations: block " + std::to_string(block) + " is not 32 or 256");
    if (n < 0 || n % block != 0)
        throw std::invalid_argument("quantize_activations: length " + std::to_string(n) + " is not a multiple of " +
                                    std::to_string(block));
    out.block = block;
    out.n = n;
    if (block == 256) return quantize_activations_q8_k(x, n, out);
    out.sum16.clear();
    out.sum32.clear();
    const int64_t nb = n / kQK, n_pad = (n + kPair - 1) / kPair * kPair;
    out.q.assign(size_t(n_pad), 0);
    out.d.assign(size_t(n_pad / kQK), 0.0f);
    out.d_lanes.assign(size_t(n_pad / 4), 0.0f);
    out.bias_q8_0.assign(size_t(n_pad / 4), 0);
    out.bias_q4_0.assign(size_t(n_pad / 4), 0);
    out.sum4.assign(size_t(n_pad / 4), 0);
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * kQK;
        float amax = 0.0f;
        bool finite = true;
        for (int j = 0; j < kQK; ++j) {
            finite = finite && std::isfinite(xb[j]);
            amax = std::max(amax, std::fabs(xb[j]));
        }
        int8_t* q = out.q.data() + b * kQK;
        if (!finite) {
            out.d[size_t(b)] = std::numeric_limits<float>::quiet_NaN();
        } else if (amax > 0.0f) {
            out.d[size_t(b)] = amax / 127.0f;
            // In double, so that a tiny amax (below 127 / FLT_MAX) cannot make inv infinite;
            // |x·inv| <= 127 up to rounding, so the quants fit.
            const double inv = 127.0 / double(amax);
            // nearbyint (ties to even in the default mode) is one instruction; std::round
            // (ties away) is a libm call, 1% of a token's time.
            for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(std::nearbyint(double(xb[j]) * inv));
        }
    }
    for (int64_t g = 0; g < n_pad / 4; ++g) {
        int32_t s = 0;
        for (int k = 0; k < 4; ++k) s += out.q[size_t(4 * g + k)];
        out.bias_q8_0[size_t(g)] = -128 * s;
        out.bias_q4_0[size_t(g)] = -8 * s;
        out.sum4[size_t(g)] = s;
        out.d_lanes[size_t(g)] = out.d[size_t(g / 8)];  // group g of 4 lies in block g / 8
    }
}

void pack_tokens(const QuantizedActivations* xs, int T, DType w, PackedTokens& out) {
    if (w != DType::Q8_0 && w != DType::Q4_0 && w != DType::MXFP4)
        throw std::invalid_argument("pack_tokens: Q8_0, Q4_0 or MXFP4 weights only");
    out.w = w;
    out.T = T;
    out.pairs = T > 0 ? (xs[0].n + kPair - 1) / kPair : 0;
    out.avx2 = !quant_dot_fast_available();
    for (int t = 0; t < T; ++t)
        if (xs[t].block != kQK || (xs[t].n + kPair - 1) / kPair != out.pairs)
            throw std::invalid_argument("pack_tokens: every token in blocks of 32, of one length");
    if (out.avx2) {  // dot_rows_tokens_avx2's layout
        const int64_t nb = T > 0 ? xs[0].n / kQK : 0;
        size_t bytes = 0;
        for (int t0 = 0, n; t0 < T; t0 += n) bytes += size_t(nb) * tile_block_bytes(n = dot_token_tile(T, t0));
        out.bytes.assign(bytes, std::byte{0});
        std::byte* tile = out.bytes.data();
        for (int t0 = 0, n; t0 < T; t0 += n, tile += size_t(nb) * tile_block_bytes(n)) {
            n = dot_token_tile(T, t0);
            for (int64_t b = 0; b < nb; ++b) {
                std::byte* d = tile + size_t(b) * tile_block_bytes(n);
                for (int t = 0; t < n; ++t) {
                    std::memcpy(d + t * 32, xs[t0 + t].q.data() + b * kQK, 32);
                    std::memcpy(d + n * 32 + t * 4, &xs[t0 + t].d[size_t(b)], 4);
                }
            }
        }
        return;
    }
    out.bytes.resize(size_t(T) * size_t(out.pairs) * 192);
    for (int t0 = 0; t0 < T; t0 += kTileTokens) {
        const int n = std::min(kTileTokens, T - t0);
        std::byte* tile = out.bytes.data() + size_t(t0) * size_t(out.pairs) * 192;
        for (int t = 0; t < n; ++t) {
            const QuantizedActivations& x = xs[t0 + t];
            // MXFP4's unpacked codes are value + 128, as Q8_0's quants: Q8_0's bias
            const int32_t* bias = w == DType::Q4_0 ? x.bias_q4_0.data() : x.bias_q8_0.data();
            for (int64_t c = 0; c < out.pairs; ++c) {
                std::byte* d = tile + (c * n + t) * 192;
                std::memcpy(d, x.q.data() + c * kPair, 64);
                std::memcpy(d + 64, bias + c * 16, 64);
                std::memcpy(d + 128, x.d_lanes.data() + c * 16, 64);
            }
        }
    }
}

void dot_rows_tokens(float* out, int64_t out_stride, const Matrix& W, const QuantizedActivations* xs, int T, int64_t r0,
                     int64_t r1, const PackedTokens* packed) {
    const bool shared = tokens_packed(W.dtype);
    if (!shared) {
        if ((has_k_dot(W.dtype) || has_iq_dot(W.dtype)) && W.layout == Layout::Linear && r0 >= 0 &&
            r1 <= W.rows) {
            bool fits = true;
            for (int t = 0; t < T; ++t) fits = fits && xs[t].n == W.cols && xs[t].block == 256;
            if (fits && has_iq_dot(W.dtype)) return dot_rows_iq_tokens(out, out_stride, W, xs, T, r0, r1, quant_dot_fast_available());
            if (fits && dot_rows_k_tokens(out, out_stride, W, xs, T, r0, r1, quant_dot_fast_available())) return;
        }
        // Q2_K, Q3_K, IQ4_XS, IQ4_NL on AVX2: each super-block decoded once for up to 4 tokens.
        if (has_direct_dot(W.dtype) && quant_dot_avx2_available() && W.layout == Layout::Linear && r0 >= 0 && r1 <= W.rows) {
            bool fits = true;
            for (int t = 0; t < T; ++t) fits = fits && xs[t].n == W.cols && xs[t].block == kQK;
            if (fits) return dot_rows_direct_avx2(out, out_stride, W, xs, T, r0, r1);
        }
        // One token at a time over groups of rows of about 64 KiB: the group comes from memory
        // for the first token and from L2 for the others (each row's dot is the same on its own).
        const size_t row_bytes = dtype_bytes(W.dtype, uint64_t(W.cols));
        const int64_t group = std::max<int64_t>(1, int64_t(65536 / std::max<size_t>(1, row_bytes)));
        for (int64_t g = r0; g < r1; g += group)
            for (int t = 0; t < T; ++t) dot_rows(out + t * out_stride, W, xs[t], g, std::min(r1, g + group));
        return;
    }
    if (W.layout != Layout::Linear || r0 < 0 || r1 > W.rows)
        throw std::invalid_argument("dot_rows_tokens: W must be Linear, and rows within it");
    for (int t = 0; t < T; ++t)
        if (xs[t].n != W.cols || xs[t].block != kQK)
            throw std::invalid_argument("dot_rows_tokens: x must have W's columns in blocks of 32");
    thread_local PackedTokens own;
    if (!packed || packed->w != W.dtype || packed->T != T || packed->pairs != (W.cols + kPair - 1) / kPair ||
        packed->avx2 == quant_dot_fast_available()) {
        pack_tokens(xs, T, W.dtype, own);
        packed = &own;
    }
    if (!quant_dot_fast_available()) {
        switch (W.dtype) {
            case DType::Q8_0: return dot_rows_tokens_avx2<DType::Q8_0>(out, out_stride, W, *packed, r0, r1);
            case DType::Q4_0: return dot_rows_tokens_avx2<DType::Q4_0>(out, out_stride, W, *packed, r0, r1);
            default: return dot_rows_tokens_avx2<DType::MXFP4>(out, out_stride, W, *packed, r0, r1);
        }
    }
    switch (W.dtype) {
        case DType::Q8_0: return dot_rows_tokens_vnni<DType::Q8_0>(out, out_stride, W, *packed, r0, r1);
        case DType::Q4_0: return dot_rows_tokens_vnni<DType::Q4_0>(out, out_stride, W, *packed, r0, r1);
        default: return dot_rows_tokens_vnni<DType::MXFP4>(out, out_stride, W, *packed, r0, r1);
    }
}

bool tokens_packed(DType w) {
    return (w == DType::Q8_0 || w == DType::Q4_0 || w == DType::MXFP4) && (quant_dot_fast_available() || quant_dot_avx2_available());
}

bool quant_dot_fast_available() { return cpu_avx512vnni() && std::string_view(kernel_isa()) == "avx512"; }

// AVX2, FMA and F16C where the VNNI kernels do not run and the portable ones are not forced:
// CPUs without AVX-512 (or with it limited away, force_avx2_kernels), and AVX-512 without VNNI.
bool quant_dot_avx2_available() {
    static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_f16c();
    const std::string_view isa = kernel_isa();
    return cpu && !quant_dot_fast_available() && (isa == "avx2" || isa == "avx512");
}

void dot_rows(float* out, const Matrix& W, const QuantizedActivations& x, int64_t r0, int64_t r1) {
    if (W.layout != Layout::Linear || W.cols != x.n || r0 < 0 || r1 > W.rows)
        throw std::invalid_argument("dot_rows: W must be Linear with x.n columns, and rows within it");
    if (x.block != activation_block(W.dtype))
        throw std::invalid_argument("dot_rows: " + std::string(dtype_name(W.dtype)) + " needs x in blocks of " +
                                    std::to_string(activation_block(W.dtype)));
    switch (W.dtype) {
        case DType::Q8_0: return dot_rows_of<DType::Q8_0>(out, W, x, r0, r1);
        case DType::Q4_0: return dot_rows_of<DType::Q4_0>(out, W, x, r0, r1);
        case DType::MXFP4: return dot_rows_of<DType::MXFP4>(out, W, x, r0, r1);
        default: {
            const bool fast = quant_dot_fast_available();
            const DotPath path = fast ? DotPath::vnni : quant_dot_avx2_available() ? DotPath::avx2 : DotPath::portable;
            if (has_k_dot(W.dtype)) return dot_rows_k(out, W, x, r0, r1, path);
            if (has_iq_dot(W.dtype)) return dot_rows_iq(out, W, x, r0, r1, path);
            if (has_unpacked_dot(W.dtype)) return dot_rows_unpacked(out, W, x, r0, r1, path);
            throw std::invalid_argument("dot_rows: no kernel for " + std::string(dtype_name(W.dtype)));
        }
    }
}

}  // namespace journey
