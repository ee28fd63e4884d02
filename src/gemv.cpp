// Matrix-vector products over weights read in place, and the BF16 matrix-matrix product.
// Each kernel comes twice: portable C++ (the definition of the arithmetic) and AVX-512 (the
// same arithmetic, 16 lanes at a time), compiled with function-level target attributes so the
// binary runs on any x86-64; the choice is made at run time.
#include "journey/gemv.h"

#include <algorithm>
#include <cmath>
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <string_view>
#include <vector>

#include "journey/convert.h"
#include "journey/quant.h"
#include "journey/thread_pool.h"

namespace journey {
namespace {

bool env_portable() {
    const char* e = std::getenv("JOURNEY_PORTABLE_KERNELS");
    return e && *e && std::string_view(e) != "0";
}
bool g_force_portable = env_portable();

bool cpu_avx512() {
    static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl");
    return ok;
}
bool cpu_avx512bf16() {  // CPUID.(EAX=7, ECX=1):EAX bit 5
    static const bool ok = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return cpu_avx512() && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
    }();
    return ok;
}
bool use_avx512() { return !g_force_portable && cpu_avx512(); }

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
        return D == DType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
}

constexpr size_t esize(DType d) { return d == DType::F32 ? 4 : 2; }

// Lane l += lane l+8, +4, +2, +1: the fixed order both paths use.
float reduce16(float* a) {
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) a[l] += a[l + s];
    return a[0];
}

template <DType D>
void conv1d_portable(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t n_out, int64_t o0, int64_t o1) {
    std::fill(y + o0, y + o1, 0.0f);
    for (int64_t i = 0; i < n_in; ++i) {
        const std::byte* row = w + static_cast<size_t>(i * n_out) * esize(D);
        for (int64_t o = o0; o < o1; ++o) y[o] = std::fma(x[i], element<D>(row, o), y[o]);
    }
}

template <DType D>
void linear_portable(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
        const std::byte* row = w + static_cast<size_t>(o * n_in) * esize(D);
        float acc[16] = {};
        for (int64_t i = 0; i < n_in; ++i) acc[i % 16] = std::fma(element<D>(row, i), x[i], acc[i % 16]);
        y[o] = reduce16(acc);
    }
}

// ---- AVX-512 --------------------------------------------------------------------------------
#define JOURNEY_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c")))

// 16 consecutive elements (those in mask m; the others 0) widened to float.
template <DType D>
JOURNEY_AVX512 inline __m512 load16(const std::byte* p, __mmask16 m) {
    if constexpr (D == DType::F32) {
        return _mm512_maskz_loadu_ps(m, p);
    } else {
        const __m256i h = _mm256_maskz_loadu_epi16(m, p);
        // maskz forms with a full mask: the plain ones start from _mm512_undefined_*, which
        // GCC 12 reports as maybe-uninitialized.
        if constexpr (D == DType::F16) return _mm512_maskz_cvtph_ps(0xffff, h);
        else return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xffff, _mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
    }
}

// One thread streaming a matrix from memory keeps too few loads in flight to reach the memory
// bandwidth on its own (the hardware prefetcher stops at 4 KiB pages, and the Conv1D sweeps read
// eight rows at once); asking for the next block's lines while this one is multiplied lifted
// F16 one-token decoding from ~74 to ~100 tok/s on 2 threads in our measurements.
inline void prefetch(const std::byte* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }

JOURNEY_AVX512 inline __mmask16 tail_mask(int64_t left) {
    return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1);
}

template <DType D>
JOURNEY_AVX512 void conv1d_avx512(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t n_out, int64_t o0, int64_t o1) {
    constexpr int64_t R = 8;  // rows per sweep over y: y stays in L1, W streams row by row
    std::fill(y + o0, y + o1, 0.0f);
    for (int64_t i0 = 0; i0 < n_in; i0 += R) {
        const int64_t r = std::min(R, n_in - i0);
        const std::byte* rows = w + static_cast<size_t>(i0 * n_out) * esize(D);
        const size_t stride = static_cast<size_t>(n_out) * esize(D);
        for (int64_t o = o0; o < o1; o += 16) {
            const __mmask16 m = tail_mask(o1 - o);
            __m512 acc = _mm512_maskz_loadu_ps(m, y + o);
            if (i0 + 2 * R <= n_in)  // the same columns of the next sweep's rows: more loads in flight
                for (int64_t k = R; k < 2 * R; ++k) prefetch(rows + k * stride + o * esize(D));
            for (int64_t k = 0; k < r; ++k)
                acc = _mm512_fmadd_ps(_mm512_set1_ps(x[i0 + k]), load16<D>(rows + k * stride + o * esize(D), m), acc);
            _mm512_mask_storeu_ps(y + o, m, acc);
        }
    }
}

template <DType D>
JOURNEY_AVX512 void linear_avx512(float* y, const float* x, const std::byte* w, int64_t n_in, int64_t o0, int64_t o1) {
    const size_t stride = static_cast<size_t>(n_in) * esize(D);
    int64_t o = o0;
    for (; o + 4 <= o1; o += 4) {  // four rows at once: four independent chains
        const std::byte* row = w + static_cast<size_t>(o) * stride;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t i = 0; i < n_in; i += 16) {
            const __mmask16 m = tail_mask(n_in - i);
            const __m512 xv = _mm512_maskz_loadu_ps(m, x + i);
            const size_t off = static_cast<size_t>(i) * esize(D);
            if (o + 8 <= o1 && off % 64 == 0)  // the next four rows, a cache line at a time
                for (int k = 4; k < 8; ++k) prefetch(row + k * stride + off);
            a0 = _mm512_mask3_fmadd_ps(load16<D>(row + off, m), xv, a0, m);
            a1 = _mm512_mask3_fmadd_ps(load16<D>(row + stride + off, m), xv, a1, m);
            a2 = _mm512_mask3_fmadd_ps(load16<D>(row + 2 * stride + off, m), xv, a2, m);
            a3 = _mm512_mask3_fmadd_ps(load16<D>(row + 3 * stride + off, m), xv, a3, m);
        }
        alignas(64) float lanes[4][16];
        _mm512_store_ps(lanes[0], a0);
        _mm512_store_ps(lanes[1], a1);
        _mm512_store_ps(lanes[2], a2);
        _mm512_store_ps(lanes[3], a3);
        for (int k = 0; k < 4; ++k) y[o + k] = reduce16(lanes[k]);
    }
    for (; o < o1; ++o) {
        const std::byte* row = w + static_cast<size_t>(o) * stride;
        __m512 a = _mm512_setzero_ps();
        for (int64_t i = 0; i < n_in; i += 16) {
            const __mmask16 m = tail_mask(n_in - i);
            a = _mm512_mask3_fmadd_ps(load16<D>(row + static_cast<size_t>(i) * esize(D), m), _mm512_maskz_loadu_ps(m, x + i), a, m);
        }
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, a);
        y[o] = reduce16(lanes);
    }
}

template <DType D>
void gemv_typed(float* y, const float* x, const Matrix& W, int64_t o0, int64_t o1) {
    const bool fast = use_avx512();
    if (W.layout == Layout::Conv1D) {
        if (fast) conv1d_avx512<D>(y, x, W.data, W.rows, W.cols, o0, o1);
        else conv1d_portable<D>(y, x, W.data, W.rows, W.cols, o0, o1);
    } else {
        if (fast) linear_avx512<D>(y, x, W.data, W.cols, o0, o1);
        else linear_portable<D>(y, x, W.data, W.cols, o0, o1);
    }
}

// Splits [0, n) into `parts` ranges aligned to 16 (whole cache lines of y); part i of them.
std::pair<int64_t, int64_t> part(int64_t n, int i, int parts) {
    const int64_t chunk = ((n + parts - 1) / parts + 15) / 16 * 16;
    return {std::min(n, i * chunk), std::min(n, (i + 1) * chunk)};
}

}  // namespace

void force_portable_kernels(bool on) { g_force_portable = on; }

const char* kernel_isa() {
    if (!use_avx512()) return "portable";
    return cpu_avx512bf16() ? "avx512+bf16" : "avx512";
}

void gemv_range(float* y, const float* x, const Matrix& W, int64_t o0, int64_t o1) {
    switch (W.dtype) {
        case DType::F32: return gemv_typed<DType::F32>(y, x, W, o0, o1);
        case DType::F16: return gemv_typed<DType::F16>(y, x, W, o0, o1);
        case DType::BF16: return gemv_typed<DType::BF16>(y, x, W, o0, o1);
        default: break;
    }
    std::abort();  // matmul() only sends float dtypes here
}

void gemv(float* y, const float* x, const Matrix& W) {
    const int64_t n_out = W.n_out();
    thread_pool().run([&](int i, int n) {
        const auto [o0, o1] = part(n_out, i, n);
        if (o0 < o1) gemv_range(y, x, W, o0, o1);
    });
}

// ---- BF16 gemm ------------------------------------------------------------------------------
namespace {

// x rounded to bfloat16, row-major [T, n_in]: consecutive pairs form the dwords vdpbf16ps reads.
void round_to_bf16(uint16_t* xb, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) xb[i] = fp32_to_bf16(x[i]);
}

// Where element (input i, output o) of W lives: W.data + 2 * (i * in_stride + o * out_stride).
struct Strides {
    int64_t in, out;
    explicit Strides(const Matrix& W)
        : in(W.layout == Layout::Conv1D ? W.cols : 1), out(W.layout == Layout::Conv1D ? 1 : W.cols) {}
};

uint16_t bf16_at(const std::byte* w, Strides s, int64_t i, int64_t o) {
    uint16_t h;
    std::memcpy(&h, w + 2 * (i * s.in + o * s.out), 2);
    return h;
}

void gemm_bf16_portable(float* out, const uint16_t* xb, const Matrix& W, int T, int64_t o0, int64_t o1) {
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    const Strides s(W);
    for (int t = 0; t < T; ++t)
        for (int64_t o = o0; o < o1; ++o) {
            const uint16_t* xt = xb + t * n_in;
            float acc = 0.0f;
            for (int64_t k = 0; k < n_in; k += 2) {
                acc += bf16_to_f32(xt[k + 1]) * bf16_to_f32(bf16_at(W.data, s, k + 1, o));
                acc += bf16_to_f32(xt[k]) * bf16_to_f32(bf16_at(W.data, s, k, o));
            }
            out[t * n_out + o] = acc;
        }
}

#define JOURNEY_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

constexpr int64_t kNB = 64;  // output columns per panel: four vectors of 16
constexpr int kMR = 6;       // tokens per micro-tile: 6 x 4 accumulators

// panel[kp][c] (dword) = W[2kp, o0+c] | W[2kp+1, o0+c] << 16, for c < 64 (0 beyond n_out).
JOURNEY_AVX512BF16 void pack_panel(uint32_t* panel, const Matrix& W, int64_t o0) {
    const int64_t n_in = W.n_in(), n_out = W.n_out(), nc = std::min(kNB, n_out - o0);
    if (W.layout == Layout::Conv1D && nc == kNB) {
        alignas(64) static const uint16_t lo_idx[32] = {0, 32, 1, 33, 2, 34, 3, 35, 4, 36, 5, 37, 6, 38, 7, 39,
                                                        8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
        const __m512i lo = _mm512_load_si512(lo_idx);
        const __m512i hi = _mm512_add_epi16(lo, _mm512_set1_epi16(16));
        for (int64_t kp = 0; kp < n_in / 2; ++kp) {
            const std::byte* r0 = W.data + 2 * (2 * kp * n_out + o0);
            const std::byte* r1 = r0 + 2 * n_out;
            uint32_t* dst = panel + kp * kNB;
            for (int h = 0; h < 2; ++h) {  // columns 32h .. 32h+31
                const __m512i a = _mm512_loadu_si512(r0 + 64 * h), b = _mm512_loadu_si512(r1 + 64 * h);
                _mm512_storeu_si512(dst + 32 * h, _mm512_permutex2var_epi16(a, lo, b));
                _mm512_storeu_si512(dst + 32 * h + 16, _mm512_permutex2var_epi16(a, hi, b));
            }
        }
        return;
    }
    const Strides s(W);
    for (int64_t kp = 0; kp < n_in / 2; ++kp)
        for (int64_t c = 0; c < kNB; ++c)
            panel[kp * kNB + c] = c < nc ? uint32_t(bf16_at(W.data, s, 2 * kp, o0 + c)) |
                                               uint32_t(bf16_at(W.data, s, 2 * kp + 1, o0 + c)) << 16
                                         : 0;
}

// out[t, o0 + c] for MR tokens starting at xb, c < nc.
template <int MR>
JOURNEY_AVX512BF16 void micro_tile(float* out, int64_t ldo, const uint16_t* xb, int64_t n_in, const uint32_t* panel, int64_t nc) {
    __m512 acc[MR][4];
    for (int t = 0; t < MR; ++t)
        for (int j = 0; j < 4; ++j) acc[t][j] = _mm512_setzero_ps();
    for (int64_t kp = 0; kp < n_in / 2; ++kp) {
        const uint32_t* p = panel + kp * kNB;
        const __m512bh w0 = (__m512bh)_mm512_loadu_si512(p), w1 = (__m512bh)_mm512_loadu_si512(p + 16);
        const __m512bh w2 = (__m512bh)_mm512_loadu_si512(p + 32), w3 = (__m512bh)_mm512_loadu_si512(p + 48);
        for (int t = 0; t < MR; ++t) {
            uint32_t pair;
            std::memcpy(&pair, xb + t * n_in + 2 * kp, 4);
            const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
            acc[t][0] = _mm512_dpbf16_ps(acc[t][0], xv, w0);
            acc[t][1] = _mm512_dpbf16_ps(acc[t][1], xv, w1);
            acc[t][2] = _mm512_dpbf16_ps(acc[t][2], xv, w2);
            acc[t][3] = _mm512_dpbf16_ps(acc[t][3], xv, w3);
        }
    }
    for (int t = 0; t < MR; ++t)
        for (int j = 0; j < 4; ++j) {
            const int64_t c = 16 * j;
            if (c < nc) _mm512_mask_storeu_ps(out + t * ldo + c, tail_mask(nc - c), acc[t][j]);
        }
}

JOURNEY_AVX512BF16 void gemm_bf16_avx512(float* out, const uint16_t* xb, const Matrix& W, int T, int64_t o0, int64_t o1) {
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    thread_local std::vector<uint32_t> panel;
    panel.resize(static_cast<size_t>(n_in / 2 * kNB));
    for (int64_t c0 = o0; c0 < o1; c0 += kNB) {
        const int64_t nc = std::min(kNB, o1 - c0);
        pack_panel(panel.data(), W, c0);
        int t = 0;
        for (; t + kMR <= T; t += kMR)
            micro_tile<kMR>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc);
        switch (T - t) {
            case 5: micro_tile<5>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc); break;
            case 4: micro_tile<4>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc); break;
            case 3: micro_tile<3>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc); break;
            case 2: micro_tile<2>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc); break;
            case 1: micro_tile<1>(out + t * n_out + c0, n_out, xb + t * n_in, n_in, panel.data(), nc); break;
            default: break;
        }
    }
}

}  // namespace

bool gemm_bf16_fast_available() { return !g_force_portable && cpu_avx512bf16(); }

void gemm_bf16(float* out, const float* x, const Matrix& W, int T) {
    const int64_t n_in = W.n_in(), n_out = W.n_out();
    thread_local std::vector<uint16_t> xb;
    xb.resize(static_cast<size_t>(T * n_in));
    round_to_bf16(xb.data(), x, T * n_in);
    const uint16_t* xbp = xb.data();  // a thread_local named inside the lambda would be the worker's
    const bool fast = gemm_bf16_fast_available();
    const int64_t blocks = (n_out + kNB - 1) / kNB;  // threads split whole panels
    thread_pool().run([&](int i, int n) {
        const int64_t o0 = std::min(n_out, blocks * i / n * kNB), o1 = std::min(n_out, blocks * (i + 1) / n * kNB);
        if (o0 >= o1) return;
        if (fast) gemm_bf16_avx512(out, xbp, W, T, o0, o1);
        else gemm_bf16_portable(out, xbp, W, T, o0, o1);
    });
}

}  // namespace journey
