// Matrix-vector products (one token) over F32, F16 and BF16 weights read in place.
// Each kernel comes twice: portable C++ (the definition of the arithmetic) and AVX-512 (the
// same arithmetic, 16 lanes at a time), compiled with function-level target attributes so the
// binary runs on any x86-64; the choice is made at run time.
#include "journey/kernels/gemv.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cpuid.h>
#include <cstring>
#include <immintrin.h>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "journey/kernels/aligned.h"
#include "journey/kernels/half.h"
#include "journey/kernels/thread_pool.h"
#include "avx2_lanes.h"
#include "avx512_loads.h"
#include "lanes.h"
#include "journey/kernels/lookahead.h"

namespace journey {
namespace {

using namespace avx512;

bool env_portable() {
    const char* e = std::getenv("JOURNEY_PORTABLE_KERNELS");
    return e && *e && std::string_view(e) != "0";
}
bool g_force_portable = env_portable();
bool g_force_avx2 = [] {
    const char* e = std::getenv("JOURNEY_KERNELS");
    return e && std::string_view(e) == "avx2";
}();

bool cpu_avx512() {
    static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl");
    return ok;
}
// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_avx2() {
    static const bool ok = [] {
        unsigned a, b, c, d;
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    }();
    return ok;
}
bool use_avx512() { return !g_force_portable && !g_force_avx2 && cpu_avx512(); }

std::optional<StreamShape> g_forced_shape = [] () -> std::optional<StreamShape> {
    const char* e = std::getenv("JOURNEY_STREAM_SHAPE");
    if (!e) return std::nullopt;
    if (std::string_view(e) == "interleaved") return StreamShape::interleaved;
    if (std::string_view(e) == "sequential") return StreamShape::sequential;
    return std::nullopt;
}();

// ---- portable -------------------------------------------------------------------------------

template <DType D>
float element(const std::byte* p, int64_t i) {
    if constexpr (D == DType::F32) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        return f;
    } else {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        return D == DType::F16 ? fp16_to_fp32(h) : bf16_to_fp32(h);
    }
}

constexpr size_t esize(DType d) { return d == DType::F32 ? 4 : 2; }

// Conv1D over input rows i0 .. i1 (one slab): y[o] = chain of fmas over those rows.
template <DType D>
void conv1d_portable(float* y, const float* x, const std::byte* w, int64_t i0, int64_t i1, int64_t n_out) {
    std::fill(y, y + n_out, 0.0f);
    for (int64_t i = i0; i < i1; ++i) {
        const std::byte* row = w + static_cast<size_t>(i * n_out) * esize(D);
        for (int64_t o = 0; o < n_out; ++o) y[o] = std::fma(x[i], element<D>(row, o), y[o]);
    }
}

// A Linear row: 64 fma chains, input i into chain i % 64 (four registers of 16 lanes on AVX-512,
// so four independent chains hide the fma latency), then lane l of the four added as
// (c0 + c1) + (c2 + c3), then reduce16.
template <DType D>
void linear_portable(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
        const std::byte* row = w + static_cast<size_t>(o * n_in) * esize(D);
        float acc[64] = {};
        for (int64_t i = 0; i < n_in; ++i) acc[i % 64] = std::fma(element<D>(row, i), x[i], acc[i % 64]);
        float lanes[16];
        for (int l = 0; l < 16; ++l) lanes[l] = (acc[l] + acc[l + 16]) + (acc[l + 32] + acc[l + 48]);
        y[o] = reduce16(lanes);
    }
}

// ---- AVX-512 --------------------------------------------------------------------------------

// One sweep of exactly R rows (R known at compile time: x's R values stay in registers, and
// whole 16-column steps need no mask) over all n_out columns, continuing y's sums.
// Rows that start A floats (1..15) into a cache line, every one of them (the stride whole lines):
// as realigned_f32 below, whole lines shifted into place, the first read masked and none past a
// row's end; returns the columns done (the caller's loop continues from there, same sums).
template <int64_t R, int A>
JOURNEY_AVX512 int64_t conv1d_realigned_f32(float* y, const __m512* xv, const std::byte* rows, size_t stride, int64_t n_out) {
    if (n_out < 32 - A) return 0;  // not one whole step: the first line may reach past the row
    const float* line[R];
    __m512 lo[R];
    for (int64_t k = 0; k < R; ++k) {
        line[k] = reinterpret_cast<const float*>(rows + k * stride) - A;
        lo[k] = _mm512_maskz_load_ps(__mmask16(0xffff << A), line[k]);
    }
    int64_t o = 0;
    for (; o + 32 - A <= n_out; o += 16) {
        __m512 acc = _mm512_loadu_ps(y + o);
        for (int64_t k = 0; k < R; ++k) {
            const __m512 hi = _mm512_load_ps(line[k] + o + 16);
            const __m512 w = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(hi), _mm512_castps_si512(lo[k]), A));
            acc = _mm512_fmadd_ps(xv[k], w, acc);
            lo[k] = hi;
        }
        _mm512_storeu_ps(y + o, acc);
    }
    return o;
}

// Calls f(std::integral_constant<int, A>) for the run-time offset a, A in 1..15 (the realigned
// paths' template argument), and returns what it returns; 0 for any other a.
template <class F, int... A>
int64_t with_offset(int a, F f, std::integer_sequence<int, A...>) {
    int64_t done = 0;
    ((a == A + 1 ? (done = f(std::integral_constant<int, A + 1>{})) : 0), ...);
    return done;
}
template <class F>
int64_t with_offset(int a, F f) {
    return with_offset(a, f, std::make_integer_sequence<int, 15>());
}

template <int64_t R>
JOURNEY_AVX512 void conv1d_sweep_f32(float* y, const float* x, const std::byte* rows, size_t stride, int64_t n_out) {
    __m512 xv[R];
    for (int64_t k = 0; k < R; ++k) xv[k] = _mm512_set1_ps(x[k]);
    int64_t o = 0;
    const auto off = reinterpret_cast<uintptr_t>(rows) % 64;
    if (off != 0 && off % 4 == 0 && (R == 1 || stride % 64 == 0))
        o = with_offset(int(off / 4), [&](auto A) JOURNEY_AVX512 { return conv1d_realigned_f32<R, A()>(y, xv, rows, stride, n_out); });
    for (; o + 16 <= n_out; o += 16) {
        __m512 acc = _mm512_loadu_ps(y + o);
        for (int64_t k = 0; k < R; ++k) acc = _mm512_fmadd_ps(xv[k], _mm512_loadu_ps(rows + k * stride + 4 * o), acc);
        _mm512_storeu_ps(y + o, acc);
    }
    if (o < n_out) {
        const __mmask16 m = tail_mask(n_out - o);
        __m512 acc = _mm512_maskz_loadu_ps(m, y + o);
        for (int64_t k = 0; k < R; ++k) acc = _mm512_fmadd_ps(xv[k], _mm512_maskz_loadu_ps(m, rows + k * stride + 4 * o), acc);
        _mm512_mask_storeu_ps(y + o, m, acc);
    }
}

// Prefetching: the Linear kernel asks for the next four rows' lines while it multiplies these
// (it reads four long rows at once, which the hardware prefetcher follows less well). The Conv1D
// sweep reads eight rows side by side; at F32 (a whole cache line per row and step) the hardware
// follows it and asking as well was slower (tg 57.7 against 51-53 tok/s), while at F16/BF16 (half
// a line) asking for the next eight rows' columns is worth ~15% (tg 103-110 against 88-95).
template <DType D>
JOURNEY_AVX512 void conv1d_avx512(float* y, const float* x, const std::byte* w, int64_t first, int64_t last, int64_t n_out) {
    constexpr int64_t R = 8;  // rows per sweep over y: y stays in L1, W streams row by row
    std::fill(y, y + n_out, 0.0f);
    if constexpr (D == DType::F32) {
        // Sweeps of exactly R rows (conv1d_sweep_f32), the rest one row at a time: the same fma
        // chains. At F32 this is ~5% faster than the loop below (tg 57.7 against 54.8 tok/s, six
        // interleaved rounds); at F16/BF16 it was ~14% slower, so they keep the loop.
        const size_t stride = static_cast<size_t>(n_out) * 4;
        int64_t i = first;
        for (; i + R <= last; i += R) conv1d_sweep_f32<R>(y, x + i, w + static_cast<size_t>(i) * stride, stride, n_out);
        for (; i < last; ++i) conv1d_sweep_f32<1>(y, x + i, w + static_cast<size_t>(i) * stride, stride, n_out);
        return;
    }
    for (int64_t i0 = first; i0 < last; i0 += R) {
        const int64_t r = std::min(R, last - i0);
        const std::byte* rows = w + static_cast<size_t>(i0 * n_out) * esize(D);
        const size_t stride = static_cast<size_t>(n_out) * esize(D);
        for (int64_t o = 0; o < n_out; o += 16) {
            const __mmask16 m = tail_mask(n_out - o);
            __m512 acc = _mm512_maskz_loadu_ps(m, y + o);
            if (i0 + 2 * R <= last)  // the next sweep's rows, these columns
                for (int64_t k = R; k < 2 * R; ++k) prefetch(rows + k * stride + o * esize(D));
            for (int64_t k = 0; k < r; ++k)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(x[i0 + k]), load16<D>(rows + k * stride + o * esize(D), m), acc);
            _mm512_mask_storeu_ps(y + o, m, acc);
        }
    }
}

// Linear rows, two shapes of the same arithmetic (linear_portable's: each row four registers of
// fma chains, step j of 16 inputs into register j % 4, then (c0 + c1) + (c2 + c3) and hsum16),
// so they give the same bits. One register per row, as before 4 Dec, left each row a single
// chain at the fma's latency (4 cycles per 16 inputs, ~28 GB/s of F16 on a 3.5 GHz core): one
// thread reading 8192 x 2048 F16 rows (a token's short rows) made 19-27 GB/s with one chain,
// 33-36 with four; 2048 x 8192 25 against 28 (2 threads: 39-41 against 55, and 37-39 against
// 41-42; alternating, 15:15 UTC 4 Dec, this host's Zen 4).
// - interleaved: four rows at once (sixteen independent chains), asking for the next four rows'
//   lines while multiplying these. Tuned on Intel (Sapphire Rapids), whose prefetchers follow
//   four long rows poorly;
// - sequential: one row after the other, asking for the line kStreamAheadL2 bytes on in the
//   stream, into L2 only (gemv.h says why). On AMD Zen 4 four interleaved rows (with or without
//   prefetching) read slower: GPT-2 small's F16 token pattern on one core ran at 68 tok/s against
//   42 for the interleaved shape (13:17 UTC 3 Dec, thread CPU time, load ~17), F32 at 40
//   against 25; so did four rows without prefetching, as llama.cpp's tinyBLAS walks them
//   (Llama 3.2 1B F16, -t 1: 6.1-6.4 tok/s against 8.5, 07:50 UTC 4 Dec). F32 rows (a whole
//   line per step, as for Conv1D below) stream faster without asking: GPT-2 small F32 GGUF tg64
//   -t 1 54-60 tok/s against 48-50, -t 2 77-96 against 71-79; F16 rows still want it (Llama 3.2
//   1B F16 -t 1 8.2, 9.6 against 7.5, 8.4; alternating, 15:30 UTC 4 Dec).
//
// F32 rows that do not start on a 64-byte line (safetensors places each tensor at any multiple of
// 8 bytes, so a whole F32 directory can be misaligned) would make every 64-byte load span two
// lines: one thread reading 3072 x 768 F32 rows made 25-27 GB/s at offsets 8 and 32 against 34-40
// aligned (16:15 UTC 4 Dec). realigned_f32 reads them in whole lines instead and shifts each
// pair of lines into place (valignd): the same elements in the same lanes and chains, so the
// same bits. A is the row's offset within its line in floats (1..15); the first line is read
// masked (nothing before the row is touched) and the loop stops where the next line would run
// past the row's end; the caller's loops take the rest. Returns how many inputs were done.
template <int A>
JOURNEY_AVX512 int64_t realigned_f32(__m512* c, const float* x, const float* row, int64_t n_in) {
    if (n_in < 80 - A) return 0;  // not one whole step: the first line may reach past the row
    const float* line = row - A;
    __m512 lo = _mm512_maskz_load_ps(__mmask16(0xffff << A), line);
    int64_t i = 0;
    for (; i + 80 - A <= n_in; i += 64)
        for (int k = 0; k < 4; ++k) {
            const __m512 hi = _mm512_load_ps(line + i + 16 * (k + 1));
            const __m512 w = _mm512_castsi512_ps(_mm512_maskz_alignr_epi32(0xffff, _mm512_castps_si512(hi), _mm512_castps_si512(lo), A));
            c[k] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + i + 16 * k), c[k]);
            lo = hi;
        }
    return i;
}

template <DType D>
JOURNEY_AVX512 void linear_row_avx512(float* y, const float* x, const std::byte* row, int64_t n_in) {
    __m512 c[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    int64_t i = 0;
    if constexpr (D == DType::F32) {
        const auto off = reinterpret_cast<uintptr_t>(row) % 64;
        if (off != 0 && off % 4 == 0)
            i = with_offset(int(off / 4), [&](auto A) JOURNEY_AVX512 {
                return realigned_f32<A()>(c, x, reinterpret_cast<const float*>(row), n_in);
            });
    }
    for (; i + 64 <= n_in; i += 64) {
        const std::byte* p = row + static_cast<size_t>(i) * esize(D);
        if constexpr (D != DType::F32)  // F32 rows: the hardware prefetcher alone (see above)
            for (size_t b = 0; b < 64 * esize(D); b += 64) prefetch_l2(p + b + kStreamAheadL2);  // past the end: a no-op
        for (int k = 0; k < 4; ++k)
            c[k] = _mm512_fmadd_ps(load16<D>(p + 16 * k * esize(D), 0xffff), _mm512_loadu_ps(x + i + 16 * k), c[k]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k, i += 16) {  // the last 1..63 inputs continue chains 0, 1, 2, 3
        if (i >= n_in) break;
        const __mmask16 m = tail_mask(n_in - i);
        c[k] = _mm512_mask3_fmadd_ps(load16<D>(row + static_cast<size_t>(i) * esize(D), m), _mm512_maskz_loadu_ps(m, x + i), c[k], m);
    }
    *y = hsum16(_mm512_add_ps(_mm512_add_ps(c[0], c[1]), _mm512_add_ps(c[2], c[3])));
}

// R rows against N tokens (sequences decoded together, gemv_tokens): each 16 inputs of a row are
// loaded and converted once for the N tokens, each 16 of a token's x once for the R rows; every
// (row, token) keeps linear_row_avx512's four chains (step j of 16 inputs into chain j % 4, the
// last 1..63 inputs continuing chains 0, 1, 2, 3), so it has the bits of that token alone. F16
// and BF16 only (F32 rows take linear_row_avx512's realigned reads).
// R rows against N tokens (sequences decoded together, gemv_tokens): each 16 inputs of a row are
// loaded and converted once for the N tokens, each 16 of a token's x once for the R rows; every
// (row, token) keeps linear_row_avx512's four chains (step j of 16 inputs into chain j % 4, the
// last 1..63 inputs continuing chains 0, 1, 2, 3), so it has the bits of that token alone. F16
// and BF16 only (F32 rows take linear_row_avx512's realigned reads).
template <DType D, int R, int N>
JOURNEY_AVX512 void linear_tile_avx512(float* y, int64_t y_stride, const float* x, int64_t x_stride, const std::byte* rows,
                                       size_t stride, int64_t n_in, bool ahead) {
    __m512 c[4][R][N];
    for (auto& k : c)
        for (auto& r : k)
            for (auto& v : r) v = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n_in; i += 64) {
        if (ahead)  // the rows' lines kStreamAheadL2 on, into L2 (the sequential shape's reading, gemv.h)
            for (int r = 0; r < R; ++r)
                for (size_t b = 0; b < 64 * esize(D); b += 64) prefetch_l2(rows + r * stride + static_cast<size_t>(i) * esize(D) + b + kStreamAheadL2);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
            __m512 w[R];
            for (int r = 0; r < R; ++r) w[r] = load16_full<D>(rows + r * stride + static_cast<size_t>(i + 16 * k) * esize(D));
            for (int t = 0; t < N; ++t) {
                __m512 xv = _mm512_loadu_ps(x + t * x_stride + i + 16 * k);
                asm("" : "+v"(xv));  // one load for the R rows (GCC folds it into each fma otherwise)
                for (int r = 0; r < R; ++r) c[k][r][t] = _mm512_fmadd_ps(w[r], xv, c[k][r][t]);
            }
        }
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k, i += 16) {  // the last 1..63 inputs continue chains 0, 1, 2, 3
        if (i >= n_in) break;
        const __mmask16 m = tail_mask(n_in - i);
        __m512 w[R];
        for (int r = 0; r < R; ++r) w[r] = load16<D>(rows + r * stride + static_cast<size_t>(i) * esize(D), m);
        for (int t = 0; t < N; ++t) {
            const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * x_stride + i);
            for (int r = 0; r < R; ++r) c[k][r][t] = _mm512_mask3_fmadd_ps(w[r], xv, c[k][r][t], m);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < N; ++t)
            y[t * y_stride + r] = hsum16(_mm512_add_ps(_mm512_add_ps(c[0][r][t], c[1][r][t]), _mm512_add_ps(c[2][r][t], c[3][r][t])));
}

// Rows o0 .. o1 against T tokens in tiles of kTileRows x kTileTokens (smaller at the ends); a
// row tile comes from memory for its first token tile (which asks for the lines ahead) and from
// L1 for the others. 3 x 2 ran the fmas fastest of 2 x 2, 2 x 3 and 3 x 2 (8192 x 2048 F16 rows,
// one thread, 16 tokens: 2.25 against 1.9-1.95 fmas a ns, and the row-at-a-time loop 1.5; 8
// tokens 2.1 against 1.9-2.0 and 1.7; this host under load, 6 Dec).
constexpr int kTileRows = 3, kTileTokens = 2;

template <DType D, int R>
JOURNEY_AVX512 void linear_row_tile_tokens(float* y, int64_t n_out, const float* x, int64_t n_in, const std::byte* rows, size_t stride,
                                           int T) {
    int t = 0;
    for (; t + kTileTokens <= T; t += kTileTokens)
        linear_tile_avx512<D, R, kTileTokens>(y + t * n_out, n_out, x + t * n_in, n_in, rows, stride, n_in, t == 0);
    if (t < T) linear_tile_avx512<D, R, 1>(y + t * n_out, n_out, x + t * n_in, n_in, rows, stride, n_in, t == 0);
}

template <DType D>
JOURNEY_AVX512 void linear_tokens_avx512(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t n_out, int T, int64_t o0,
                                         int64_t o1) {
    const size_t stride = static_cast<size_t>(n_in) * esize(D);
    int64_t o = o0;
    for (; o + kTileRows <= o1; o += kTileRows)
        linear_row_tile_tokens<D, kTileRows>(y + o, n_out, x, n_in, w + static_cast<size_t>(o) * stride, stride, T);
    for (; o < o1; ++o) linear_row_tile_tokens<D, 1>(y + o, n_out, x, n_in, w + static_cast<size_t>(o) * stride, stride, T);
}

template <DType D>
JOURNEY_AVX512 void linear_avx512(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t o0, int64_t o1) {
    const size_t stride = static_cast<size_t>(n_in) * esize(D);
    int64_t o = o0;
    if (stream_shape() == StreamShape::interleaved) {
        for (; o + 4 <= o1; o += 4) {  // four rows at once: sixteen independent chains
            const std::byte* row = w + static_cast<size_t>(o) * stride;
            __m512 c[4][4];
            for (auto& r : c)
                for (auto& v : r) v = _mm512_setzero_ps();
            // steps of 16 inputs, step j into chain j % 4 (whole 64 first, then the last 1..63)
            const auto step = [&](int64_t i, int k, __mmask16 m) JOURNEY_AVX512 {
                const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
                const size_t off = static_cast<size_t>(i) * esize(D);
                if (o + 8 <= o1 && off % 64 == 0)  // the next four rows, a cache line at a time
                    for (int r = 4; r < 8; ++r) prefetch(row + r * stride + off);
                for (int r = 0; r < 4; ++r)
                    c[r][k] = _mm512_mask3_fmadd_ps(load16<D>(row + r * stride + off, m), xv, c[r][k], m);
            };
            int64_t i = 0;
            for (; i + 64 <= n_in; i += 64)
#pragma GCC unroll 4
                for (int k = 0; k < 4; ++k) step(i + 16 * k, k, 0xffff);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k, i += 16)
                if (i < n_in) step(i, k, tail_mask(n_in - i));
            for (int r = 0; r < 4; ++r)
                y[o + r] = hsum16(_mm512_add_ps(_mm512_add_ps(c[r][0], c[r][1]), _mm512_add_ps(c[r][2], c[r][3])));
        }
    }
    for (; o < o1; ++o) linear_row_avx512<D>(y + o, x, w + static_cast<size_t>(o) * stride, n_in);
}

// ---- AVX2 (no AVX-512: avx2_lanes.h) -------------------------------------------------------

// A Linear row as linear_portable sums it: chain k (0..3) of 16 lanes as two registers c[k][0]
// (lanes 0..7) and c[k][1] (8..15); step j of 16 inputs into chain j % 4, the last 1..63 inputs
// continuing chains 0, 1, 2, 3 with zeros past the row (fma(0, 0, a) is a: a sum is never -0).
// One row after another, asking for the lines kStreamAheadL2 on into L2 (F16/BF16; F32 rows
// stream without it), as linear_row_avx512's sequential shape.
template <DType D>
JOURNEY_AVX2 void linear_row_avx2(float* y, const float* x, const std::byte* row, int64_t n_in) {
    __m256 c[4][2];
    for (auto& k : c) k[0] = k[1] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n_in; i += 64) {
        const std::byte* p = row + static_cast<size_t>(i) * esize(D);
        if constexpr (D != DType::F32)
            for (size_t b = 0; b < 64 * esize(D); b += 64) avx2::prefetch_l2(p + b + kStreamAheadL2);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k)
            for (int h = 0; h < 2; ++h)
                c[k][h] = _mm256_fmadd_ps(avx2::load8<D>(p + (16 * k + 8 * h) * esize(D)), _mm256_loadu_ps(x + i + 16 * k + 8 * h), c[k][h]);
    }
    for (int k = 0; k < 4 && i < n_in; ++k)
        for (int h = 0; h < 2; ++h, i += 8) {
            if (i >= n_in) break;
            const int64_t n = n_in - i;
            const __m256 w = n >= 8 ? avx2::load8<D>(row + static_cast<size_t>(i) * esize(D)) : avx2::load8_part<D>(row + static_cast<size_t>(i) * esize(D), n);
            const __m256 xv = n >= 8 ? _mm256_loadu_ps(x + i) : avx2::loadf_part(x + i, n);
            c[k][h] = _mm256_fmadd_ps(w, xv, c[k][h]);
        }
    *y = avx2::hsum16(_mm256_add_ps(_mm256_add_ps(c[0][0], c[1][0]), _mm256_add_ps(c[2][0], c[3][0])),
                      _mm256_add_ps(_mm256_add_ps(c[0][1], c[1][1]), _mm256_add_ps(c[2][1], c[3][1])));
}

template <DType D>
JOURNEY_AVX2 void linear_avx2(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t o0, int64_t o1) {
    const size_t stride = static_cast<size_t>(n_in) * esize(D);
    for (int64_t o = o0; o < o1; ++o) linear_row_avx2<D>(y + o, x, w + static_cast<size_t>(o) * stride, n_in);
}

// Several tokens on AVX2 (sequences decoded together, gemv_tokens). linear_row_avx2's row is
// eight independent chains of 8 lanes: inputs 8s .. 8s+7 of each 64 go into chain s (its
// c[s / 2][s % 2]), and the last 1..63 inputs continue chains 0 .. 7 in the same way. Eight
// chains for each (row, token) of a tile do not fit in 16 registers, so a tile of R rows x N
// tokens takes one chain at a time over kChunkAvx2 inputs (R x N accumulators in registers, kept
// in memory between chunks); every (row, token, chain) gets the fmas of the token alone in the
// same order, so every output has the bits of linear_row_avx2 on its token.
//
// The tokens' x come packed (pack_x_avx2): in tiles of avx2::token_tile's counts, each 8 inputs
// of a tile's n tokens side by side (inputs 8g .. 8g+7 of token t at (g · n + t) · 8 floats from
// the tile's start), zeros up to a whole 64 inputs. One chain's step then reads its tokens' x as
// one run of n · 32 bytes; read in place, a token's x lies n_in floats from the next (4 KiB or a
// multiple of 1 KiB for the models' widths), so the N tokens' lines shared L1 sets and pushed
// each other out (a 2 x 4 tile in L1, 2048 inputs: 24.6 against 34.4 MACs a ns).
int64_t x_groups_avx2(int64_t n_in) { return (n_in + 63) / 64 * 8; }  // 8-input groups a packed token

void pack_x_avx2(const float* x, int64_t n_in, int T, LineVector<float>& out) {
    const int64_t G = x_groups_avx2(n_in);
    out.assign(static_cast<size_t>(T * G * 8), 0.0f);
    for (int t0 = 0, n; t0 < T; t0 += n) {
        n = avx2::token_tile(T, t0);
        float* tile = out.data() + t0 * G * 8;
        for (int t = 0; t < n; ++t)
            for (int64_t g = 0; g < G && 8 * g < n_in; ++g)
                std::copy_n(x + (t0 + t) * n_in + 8 * g, std::min<int64_t>(8, n_in - 8 * g), tile + (g * n + t) * 8);
    }
}

// Chains of R rows x N tokens, x packed (`xp`: the token tile's start): c[s][r][t] is chain s of
// row r and token t.
template <int R, int N>
using ChainsAvx2 = __m256[8][R][N];

// Inputs i0 .. i1 (whole 64s) into the chains, one chain at a time, each in order; each chain
// tells `ahead` the weight bytes it reads (it asks for the next block's lines in turn). The
// empty asm keeps each token's x a register for the R rows (GCC folds its load into each fma
// otherwise: 15 loads for 12 fmas at 3 x 4).
template <DType D, int R, int N>
JOURNEY_AVX2 inline void chunk_avx2(ChainsAvx2<R, N>& c, const float* xp, const std::byte* rows, size_t stride, int64_t i0, int64_t i1,
                                    avx2::Ahead& ahead) {
    for (int s = 0; s < 8; ++s) {
        ahead.read(size_t(R) * 8 * esize(D) * size_t((i1 - i0) / 64));
        __m256 a[R][N];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < N; ++t) a[r][t] = c[s][r][t];
        for (int64_t i = i0 + 8 * s; i < i1; i += 64) {
            __m256 w[R];
            for (int r = 0; r < R; ++r) w[r] = avx2::load8<D>(rows + r * stride + static_cast<size_t>(i) * esize(D));
            const float* xg = xp + i * N;  // group i / 8
            for (int t = 0; t < N; ++t) {
                __m256 xv = _mm256_load_ps(xg + 8 * t);
                asm("" : "+x"(xv));
                for (int r = 0; r < R; ++r) a[r][t] = _mm256_fmadd_ps(w[r], xv, a[r][t]);
            }
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < N; ++t) c[s][r][t] = a[r][t];
    }
}

// The last 1..63 inputs (from `whole`, n_in's whole 64s): chain s takes whole + 8s .. (zeros
// past the row), then each output: linear_row_avx2's (c0 + c1) + (c2 + c3) of each half, that is
// chains (0 + 2) + (4 + 6) and (1 + 3) + (5 + 7), and hsum16.
template <DType D, int R, int N>
JOURNEY_AVX2 inline void finish_avx2(ChainsAvx2<R, N>& c, float* y, int64_t y_stride, const float* xp, const std::byte* rows, size_t stride,
                                     int64_t whole, int64_t n_in) {
    for (int s = 0; s < 8; ++s) {
        const int64_t i = whole + 8 * s;
        if (i >= n_in) break;
        const int64_t n = n_in - i;
        for (int r = 0; r < R; ++r) {
            const std::byte* p = rows + r * stride + static_cast<size_t>(i) * esize(D);
            const __m256 w = n >= 8 ? avx2::load8<D>(p) : avx2::load8_part<D>(p, n);
            for (int t = 0; t < N; ++t) c[s][r][t] = _mm256_fmadd_ps(w, _mm256_load_ps(xp + i * N + 8 * t), c[s][r][t]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < N; ++t)
            y[t * y_stride + r] = avx2::hsum16(_mm256_add_ps(_mm256_add_ps(c[0][r][t], c[2][r][t]), _mm256_add_ps(c[4][r][t], c[6][r][t])),
                                               _mm256_add_ps(_mm256_add_ps(c[1][r][t], c[3][r][t]), _mm256_add_ps(c[5][r][t], c[7][r][t])));
}

// Inputs a chunk (whole 64s). In L1, one thread, medians of 5 alternating runs: 512 inputs 27-33
// MACs a ns, 1024 29-34 (768 inputs a row: one chunk, not two).
constexpr int64_t kChunkAvx2 = 1024;

// Rows per tile for N tokens: R x N of 6 to 9 accumulators (the fmas' latency hidden, with the R
// rows' converted inputs and a token's x in 16 registers). In L1, 768 or 2048 inputs a row, one
// thread: 2 x 4, 3 x 3 and 4 x 2 ran at 33-38 MACs a ns (an fma-only loop: 46), 6 x 1 at 25-29,
// 3 x 4 (12 accumulators) at 28-32.
template <int N>
constexpr int kTileRowsAvx2 = N == 1 ? 6 : N == 2 ? 4 : N == 3 ? 3 : 2;

// Rows a block: every token tile takes a block's rows (the first from L2, asked for during the
// block before, or memory; the others from L1 or L2) before the next block's. A token tile takes them kSubRowsAvx2<N> at a time (a
// multiple of its tiles' rows) a chunk at a time, so that the sub-block's chunk of rows, the
// token tile's chunk of x and the sub-block's sums (kept in memory between chunks) stay in L1.
// GPT-2 small's and 4 of Llama 3.2 1B's layers' F16 products in turn, 2 threads, medians of 3
// or 4 alternating runs on the shared host: 12 rows at a time for every token tile, 18.6, 27.4,
// 38.4, 71.5 ms for 2, 4, 8, 16 tokens (Llama: 30.3, 47.4, 76.8, 135.8); 8 rows for 2 tokens and
// 6 for the others, 17.6, 21.7, 34.7, 60.8 (30.6, 43.0, 70.6, 124.9); 6 rows for 2 tokens too
// (as 3 x 2 tiles) was slower at 2 tokens, 4 rows for 4 tokens slower at 8 and 16.
constexpr int64_t kBlockRowsAvx2 = 12;
template <int N>
constexpr int64_t kSubRowsAvx2 = N == 2 ? 8 : 6;

// A sub-block of n_rows rows (at most kSubRowsAvx2<N>) against one token tile of N tokens:
// kChunkAvx2 inputs at a time, each taken by the sub-block's tiles of kTileRowsAvx2<N> rows in
// turn (the last n_rows % R rows alone). `ahead`: the next block's rows, asked for into L2 as
// this block is read (avx2_lanes.h).
template <DType D, int N>
JOURNEY_AVX2 void linear_sub_avx2(float* y, int64_t y_stride, const float* xp, const std::byte* rows, size_t stride, int64_t n_in,
                                  int64_t n_rows, avx2::Ahead& ahead) {
    constexpr int R = kTileRowsAvx2<N>;
    static_assert(kSubRowsAvx2<N> % R == 0 && kBlockRowsAvx2 % kSubRowsAvx2<N> % R == 0);  // a whole block: no rows alone
    const int64_t tiles = n_rows / R, alone = n_rows % R, whole = n_in / 64 * 64;
    ChainsAvx2<R, N> c[kSubRowsAvx2<N> / R];
    ChainsAvx2<1, N> c1[R];
    for (int64_t k = 0; k < tiles; ++k)
        for (auto& v : c[k])
            for (auto& r : v)
                for (auto& z : r) z = _mm256_setzero_ps();
    for (int64_t k = 0; k < alone; ++k)
        for (auto& v : c1[k])
            for (auto& r : v)
                for (auto& z : r) z = _mm256_setzero_ps();
    for (int64_t i0 = 0; i0 < whole; i0 += kChunkAvx2) {
        const int64_t i1 = std::min(whole, i0 + kChunkAvx2);
        for (int64_t k = 0; k < tiles; ++k) chunk_avx2<D, R, N>(c[k], xp, rows + k * R * stride, stride, i0, i1, ahead);
        for (int64_t k = 0; k < alone; ++k)
            chunk_avx2<D, 1, N>(c1[k], xp, rows + (tiles * R + k) * stride, stride, i0, i1, ahead);
    }
    for (int64_t k = 0; k < tiles; ++k) finish_avx2<D, R, N>(c[k], y + k * R, y_stride, xp, rows + k * R * stride, stride, whole, n_in);
    for (int64_t k = 0; k < alone; ++k)
        finish_avx2<D, 1, N>(c1[k], y + tiles * R + k, y_stride, xp, rows + (tiles * R + k) * stride, stride, whole, n_in);
}

// A block of n_rows rows (at most kBlockRowsAvx2) against one token tile, a sub-block at a time.
template <DType D, int N>
JOURNEY_AVX2 void linear_block_avx2(float* y, int64_t y_stride, const float* xp, const std::byte* rows, size_t stride, int64_t n_in,
                                    int64_t n_rows, avx2::Ahead& ahead) {
    for (int64_t r = 0; r < n_rows; r += kSubRowsAvx2<N>)
        linear_sub_avx2<D, N>(y + r, y_stride, xp, rows + r * stride, stride, n_in, std::min(kSubRowsAvx2<N>, n_rows - r), ahead);
}

// Rows o0 .. o1 against T tokens (x packed by pack_x_avx2), kBlockRowsAvx2 rows at a time against
// every token tile: the rows come from L2 (asked for while the block before was read) or from
// memory for the first, from L1 or L2 for the others.
template <DType D>
JOURNEY_AVX2 void linear_tokens_avx2(float* y, const float* xp, const std::byte* w, int64_t n_in, int64_t n_out, int T, int64_t o0,
                                     int64_t o1) {
    const size_t stride = static_cast<size_t>(n_in) * esize(D);
    const int64_t G = x_groups_avx2(n_in);
    const int tiles = avx2::token_tiles(T);
    for (int64_t o = o0; o < o1; o += kBlockRowsAvx2) {
        const int64_t n_rows = std::min(kBlockRowsAvx2, o1 - o);
        const std::byte* rows = w + static_cast<size_t>(o) * stride;
        avx2::Ahead ahead(rows, static_cast<size_t>(n_rows) * stride, tiles);
        for (int t = 0, n; t < T; t += n) {
            n = avx2::token_tile(T, t);
            float* yt = y + t * n_out + o;
            const float* xt = xp + t * G * 8;
            switch (n) {
                case 1: linear_block_avx2<D, 1>(yt, n_out, xt, rows, stride, n_in, n_rows, ahead); break;
                case 2: linear_block_avx2<D, 2>(yt, n_out, xt, rows, stride, n_in, n_rows, ahead); break;
                case 3: linear_block_avx2<D, 3>(yt, n_out, xt, rows, stride, n_in, n_rows, ahead); break;
                default: linear_block_avx2<D, 4>(yt, n_out, xt, rows, stride, n_in, n_rows, ahead); break;
            }
        }
    }
}

// conv1d_portable's chains (y[o] = fma over the slab's rows in order), 8 rows a sweep over y
// (which stays in L1), 8 outputs at a time; the next sweep's rows asked for at F16/BF16.
template <DType D>
JOURNEY_AVX2 void conv1d_avx2(float* y, const float* x, const std::byte* w, int64_t first, int64_t last, int64_t n_out) {
    constexpr int64_t R = 8;
    std::fill(y, y + n_out, 0.0f);
    const size_t stride = static_cast<size_t>(n_out) * esize(D);
    for (int64_t i0 = first; i0 < last; i0 += R) {
        const int64_t r = std::min(R, last - i0);
        const std::byte* rows = w + static_cast<size_t>(i0) * stride;
        __m256 xv[R];
        for (int64_t k = 0; k < r; ++k) xv[k] = _mm256_set1_ps(x[i0 + k]);
        int64_t o = 0;
        for (; o + 8 <= n_out; o += 8) {
            __m256 acc = _mm256_loadu_ps(y + o);
            if (D != DType::F32 && o % 32 == 0 && i0 + 2 * R <= last)
                for (int64_t k = R; k < 2 * R; ++k) avx2::prefetch(rows + k * stride + o * esize(D));
            for (int64_t k = 0; k < r; ++k) acc = _mm256_fmadd_ps(xv[k], avx2::load8<D>(rows + k * stride + o * esize(D)), acc);
            _mm256_storeu_ps(y + o, acc);
        }
        if (o < n_out) {
            const int64_t n = n_out - o;
            __m256 acc = avx2::loadf_part(y + o, n);
            for (int64_t k = 0; k < r; ++k) acc = _mm256_fmadd_ps(xv[k], avx2::load8_part<D>(rows + k * stride + o * esize(D), n), acc);
            alignas(32) float out[8];
            _mm256_store_ps(out, acc);
            std::memcpy(y + o, out, static_cast<size_t>(n) * 4);
        }
    }
}

// Conv1D rows are summed in slabs of kSlab: each slab's chain of fmas into its own partial sum,
// then the partial sums added in slab order. Threads take whole slabs, so each streams its own
// contiguous part of W (as for Linear rows), and the result does not depend on the thread count.
constexpr int64_t kSlab = 128;

int64_t n_slabs(const Matrix& W) { return (W.rows + kSlab - 1) / kSlab; }

// Slab s of a Conv1D W: its partial sums for every output.
template <DType D>
void conv1d_slab(float* partial, const float* x, const Matrix& W, int64_t s) {
    const int64_t i0 = s * kSlab, i1 = std::min(W.rows, i0 + kSlab);
    if (use_avx512()) conv1d_avx512<D>(partial, x, W.data, i0, i1, W.cols);
    else if (avx2_kernels()) conv1d_avx2<D>(partial, x, W.data, i0, i1, W.cols);
    else conv1d_portable<D>(partial, x, W.data, i0, i1, W.cols);
}

template <DType D>
void linear_rows(float* y, const float* x, const Matrix& W, int64_t o0, int64_t o1) {
    if (use_avx512()) linear_avx512<D>(y, x, W.data, W.cols, o0, o1);
    else if (avx2_kernels()) linear_avx2<D>(y, x, W.data, W.cols, o0, o1);
    else linear_portable<D>(y, x, W.data, W.cols, o0, o1);
}

// The threaded Conv1D product: thread i of n computes slabs [S i / n, S (i+1) / n) into their
// partial sums, then the caller adds them up in order.
template <DType D>
void conv1d_threaded(float* y, const float* x, const Matrix& W) {
    note_product(W);
    const int64_t S = n_slabs(W), n_out = W.cols;
    thread_local std::vector<float> partials;
    partials.resize(static_cast<size_t>(S * n_out));
    float* p = partials.data();
    thread_pool().run([&](int i, int n) {
        for (int64_t s = S * i / n; s < S * (i + 1) / n; ++s) conv1d_slab<D>(p + s * n_out, x, W, s);
    });
    std::copy(p, p + n_out, y);
    for (int64_t s = 1; s < S; ++s)  // elementwise: the same on every path
        for (int64_t o = 0; o < n_out; ++o) y[o] += p[s * n_out + o];
}

// Linear: threads take ranges of outputs (whole rows of W). Conv1D: threads take slabs.
template <DType D>
void gemv_typed(float* y, const float* x, const Matrix& W) {
    if (W.layout == Layout::Conv1D) return conv1d_threaded<D>(y, x, W);
    thread_local LineVector<float> aligned_x;
    if (reinterpret_cast<uintptr_t>(x) % 64 != 0) {
        aligned_x.assign(x, x + W.cols);
        x = aligned_x.data();
    }
    const Matrix* next = note_product(W);
    thread_pool().run([&](int i, int n) {
        const auto [o0, o1] = linear_part(W.n_out(), i, n);
        if (o0 < o1) linear_rows<D>(y, x, W, o0, o1);
        warm_next(next, i, n);
    });
}

// T tokens at once (sequences decoded together): each output row has the bits of gemv on that
// token alone (the same row kernels), but W is read from memory once per group of rows and
// then from cache for every token. Linear: threads take ranges of outputs, in groups of about
// 64 KiB of W. Conv1D: threads take slabs, every token's partials per slab; the caller adds
// each token's partials in slab order, as conv1d_threaded does.
template <DType D>
void gemv_tokens_typed(float* y, const float* x, const Matrix& W, int T) {
    const int64_t n_in = W.layout == Layout::Conv1D ? W.rows : W.cols;
    const int64_t n_out = W.n_out();
    if (W.layout == Layout::Conv1D) {
        const int64_t S = n_slabs(W);
        thread_local std::vector<float> partials;
        partials.resize(static_cast<size_t>(S * n_out) * static_cast<size_t>(T));
        float* p = partials.data();
        thread_pool().run([&](int i, int n) {
            for (int64_t s = S * i / n; s < S * (i + 1) / n; ++s)
                for (int t = 0; t < T; ++t) conv1d_slab<D>(p + (int64_t{t} * S + s) * n_out, x + int64_t{t} * n_in, W, s);
        });
        for (int t = 0; t < T; ++t) {
            float* yt = y + int64_t{t} * n_out;
            const float* pt = p + int64_t{t} * S * n_out;
            std::copy(pt, pt + n_out, yt);
            for (int64_t s = 1; s < S; ++s)
                for (int64_t o = 0; o < n_out; ++o) yt[o] += pt[s * n_out + o];
        }
        return;
    }
    if constexpr (D != DType::F32) {
        if (use_avx512()) {  // row tiles against token tiles (linear_tokens_avx512)
            thread_pool().run([&](int i, int n) {
                const auto [o0, o1] = linear_part(n_out, i, n);
                if (o0 < o1) linear_tokens_avx512<D>(y, x, W.data, n_in, n_out, T, o0, o1);
            });
            return;
        }
    }
    if (avx2_kernels()) {  // row tiles against token tiles (linear_tokens_avx2), x packed once
        thread_local LineVector<float> packed;
        pack_x_avx2(x, n_in, T, packed);
        const float* xp = packed.data();  // the caller's (a worker's `packed` is its own)
        thread_pool().run([&](int i, int n) {
            const auto [o0, o1] = linear_part(n_out, i, n);
            if (o0 < o1) linear_tokens_avx2<D>(y, xp, W.data, n_in, n_out, T, o0, o1);
        });
        return;
    }
    const int64_t group = std::max<int64_t>(4, int64_t{65536} / std::max<int64_t>(1, n_in * int64_t(esize(D))) / 4 * 4);
    thread_pool().run([&](int i, int n) {
        const auto [o0, o1] = linear_part(n_out, i, n);
        for (int64_t o = o0; o < o1; o += group)
            for (int t = 0; t < T; ++t)
                linear_rows<D>(y + int64_t{t} * n_out, x + int64_t{t} * n_in, W, o, std::min(o1, o + group));
    });
}

}  // namespace

void force_portable_kernels(bool on) { g_force_portable = on; }
void force_avx2_kernels(bool on) { g_force_avx2 = on; }
bool avx2_kernels() { return !g_force_portable && !use_avx512() && cpu_avx2(); }

// AMD's Zen cores stream one row after another best; Intel's (and by default any other) four
// interleaved rows with software prefetching.
StreamShape stream_shape() {
    static const StreamShape detected = __builtin_cpu_is("amd") ? StreamShape::sequential : StreamShape::interleaved;
    return g_forced_shape ? *g_forced_shape : detected;
}
void force_stream_shape(std::optional<StreamShape> shape) { g_forced_shape = shape; }
const char* stream_shape_name() { return stream_shape() == StreamShape::sequential ? "sequential" : "interleaved"; }

bool gemm_fast_available() { return use_avx512(); }

const char* kernel_isa() {
    if (use_avx512()) return "avx512";
    return avx2_kernels() ? "avx2" : "portable";
}

void gemv(float* y, const float* x, const Matrix& W) {
    switch (W.dtype) {
        case DType::F32: return gemv_typed<DType::F32>(y, x, W);
        case DType::F16: return gemv_typed<DType::F16>(y, x, W);
        case DType::BF16: return gemv_typed<DType::BF16>(y, x, W);
        default: std::abort();  // matmul() only sends float dtypes here
    }
}

void gemv_tokens(float* y, const float* x, const Matrix& W, int T) {
    switch (W.dtype) {
        case DType::F32: return gemv_tokens_typed<DType::F32>(y, x, W, T);
        case DType::F16: return gemv_tokens_typed<DType::F16>(y, x, W, T);
        case DType::BF16: return gemv_tokens_typed<DType::BF16>(y, x, W, T);
        default: std::abort();  // matmul_tokens() only sends float dtypes here
    }
}

}  // namespace journey
