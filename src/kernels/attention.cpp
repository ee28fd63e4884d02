// Attention: softmax(q·kᵀ · scale + causal mask) · v, one head at a time. A prompt (T > 1)
// computes each head's scores and weighted sum as two BLAS products over all L keys (masked
// probabilities are 0, so the future adds nothing). One token (T = 1) reads the whole cache for
// each head, a dot per key and a weighted sum of the values; that is its own kernel, portable
// and AVX-512 with the same arithmetic:
//   score j = reduce16 over 16 lanes, lane l a chain of fmas over d = l, l + 16, ... (in d
//             order), times scale;
//   z[d]    = a chain of fmas p_j · v_j[d] over the visible keys j in order, from 0.
// So the fast path gives the portable path's bits, on any thread count. The cache may be F16
// (binary16 bits, attention_f16_cache): each element is converted to float exactly as it is
// read, so the result is attention()'s on the converted cache.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <immintrin.h>
#include <type_traits>

#include <cblas.h>

#include "journey/kernels/half.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/thread_pool.h"
#include "avx2_lanes.h"
#include "avx512_loads.h"
#include "lanes.h"

namespace journey {
namespace {

using namespace avx512;

// A cache element as float: an F16 cache's widened (exactly, half.h), a float cache's as it is.
template <class E>
inline float cache_float(E e) {
    if constexpr (std::is_same_v<E, uint16_t>) return fp16_to_fp32(e);
    else return e;
}

// ---- portable -------------------------------------------------------------------------------

template <class E>
void scores_portable(float* p, const float* q, const E* k, int64_t kv_stride, int first, int visible, int D, float scale) {
    for (int j = first; j < visible; ++j) {
        const E* kj = k + j * kv_stride;
        float acc[16] = {};
        for (int d = 0; d < D; ++d) acc[d % 16] = std::fma(q[d], cache_float(kj[d]), acc[d % 16]);
        p[j] = reduce16(acc) * scale;
    }
}

template <class E>
void weighted_sum_portable(float* z, const float* p, const E* v, int64_t kv_stride, int first, int visible, int D) {
    std::fill(z, z + D, 0.0f);
    for (int j = first; j < visible; ++j) {
        const E* vj = v + j * kv_stride;
        for (int d = 0; d < D; ++d) z[d] = std::fma(p[j], cache_float(vj[d]), z[d]);
    }
}

// ---- AVX-512 --------------------------------------------------------------------------------

// 16 cache elements (those in m; the others 0) as float.
template <class E>
JOURNEY_AVX512 inline __m512 load16e(const E* p, __mmask16 m) {
    if constexpr (std::is_same_v<E, float>) return _mm512_maskz_loadu_ps(m, p);
    else return _mm512_maskz_cvtph_ps(0xffff, _mm256_maskz_loadu_epi16(m, p));
}

// Four keys at a time: four independent chains, so the fma's latency is hidden.
template <class E>
JOURNEY_AVX512 void scores_avx512(float* p, const float* q, const E* k, int64_t kv_stride, int first, int visible, int D,
                                  float scale) {
    int j = first;
    if (D % 16 == 0)
        for (; j + 4 <= visible; j += 4) {
            const E* kj = k + j * kv_stride;
            __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
            for (int d = 0; d < D; d += 16) {
                const __m512 qd = _mm512_loadu_ps(q + d);
                a0 = _mm512_fmadd_ps(qd, load16e(kj + d, 0xffff), a0);
                a1 = _mm512_fmadd_ps(qd, load16e(kj + kv_stride + d, 0xffff), a1);
                a2 = _mm512_fmadd_ps(qd, load16e(kj + 2 * kv_stride + d, 0xffff), a2);
                a3 = _mm512_fmadd_ps(qd, load16e(kj + 3 * kv_stride + d, 0xffff), a3);
            }
            p[j] = hsum16(a0) * scale;
            p[j + 1] = hsum16(a1) * scale;
            p[j + 2] = hsum16(a2) * scale;
            p[j + 3] = hsum16(a3) * scale;
        }
    for (; j < visible; ++j) {
        const E* kj = k + j * kv_stride;
        __m512 acc = _mm512_setzero_ps();
        for (int d = 0; d < D; d += 16) {
            const __mmask16 m = tail_mask(D - d);
            acc = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(m, q + d), load16e(kj + d, m), acc, m);
        }
        p[j] = hsum16(acc) * scale;
    }
}

// Up to four registers of z (64 of its elements) at a time, each a chain over the keys.
template <class E>
JOURNEY_AVX512 void weighted_sum_avx512(float* z, const float* p, const E* v, int64_t kv_stride, int first, int visible,
                                        int D) {
    for (int d0 = 0; d0 < D; d0 += 64) {
        const __mmask16 m0 = tail_mask(D - d0), m1 = tail_mask(D - d0 - 16), m2 = tail_mask(D - d0 - 32),
                        m3 = tail_mask(D - d0 - 48);
        __m512 z0 = _mm512_setzero_ps(), z1 = z0, z2 = z0, z3 = z0;
        for (int j = first; j < visible; ++j) {
            const E* vj = v + j * kv_stride + d0;
            const __m512 pj = _mm512_set1_ps(p[j]);
            z0 = _mm512_fmadd_ps(pj, load16e(vj, m0), z0);
            if (m1) z1 = _mm512_fmadd_ps(pj, load16e(vj + 16, m1), z1);
            if (m2) z2 = _mm512_fmadd_ps(pj, load16e(vj + 32, m2), z2);
            if (m3) z3 = _mm512_fmadd_ps(pj, load16e(vj + 48, m3), z3);
        }
        _mm512_mask_storeu_ps(z + d0, m0, z0);
        _mm512_mask_storeu_ps(z + d0 + 16, m1, z1);
        _mm512_mask_storeu_ps(z + d0 + 32, m2, z2);
        _mm512_mask_storeu_ps(z + d0 + 48, m3, z3);
    }
}

// ---- AVX2 (no AVX-512) ----------------------------------------------------------------------

// 8 cache elements as float; the first n (0..8) with zeros after them (nothing past them read).
template <class E>
JOURNEY_AVX2 inline __m256 load8e(const E* p) {
    if constexpr (std::is_same_v<E, float>) return _mm256_loadu_ps(p);
    else return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
template <class E>
JOURNEY_AVX2 inline __m256 load8e_part(const E* p, int n) {
    alignas(32) E buf[8] = {};
    if (n > 0) std::memcpy(buf, p, sizeof(E) * size_t(n < 8 ? n : 8));
    return load8e(buf);
}

// scores_portable's 16 lanes (d % 16) as two registers: lanes 0..7 (lo) and 8..15 (hi) of each
// 16 dimensions, reduce16's order at the end; four keys at a time when D is a multiple of 16.
template <class E>
JOURNEY_AVX2 void scores_avx2(float* p, const float* q, const E* k, int64_t kv_stride, int first, int visible, int D, float scale) {
    int j = first;
    if (D % 16 == 0)
        for (; j + 4 <= visible; j += 4) {
            const E* kj = k + j * kv_stride;
            __m256 lo[4], hi[4];
            for (int r = 0; r < 4; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
            for (int d = 0; d < D; d += 16) {
                const __m256 q0 = _mm256_loadu_ps(q + d), q1 = _mm256_loadu_ps(q + d + 8);
                for (int r = 0; r < 4; ++r) {
                    lo[r] = _mm256_fmadd_ps(q0, load8e(kj + r * kv_stride + d), lo[r]);
                    hi[r] = _mm256_fmadd_ps(q1, load8e(kj + r * kv_stride + d + 8), hi[r]);
                }
            }
            for (int r = 0; r < 4; ++r) p[j + r] = avx2::hsum16(lo[r], hi[r]) * scale;
        }
    for (; j < visible; ++j) {
        const E* kj = k + j * kv_stride;
        __m256 lo = _mm256_setzero_ps(), hi = lo;
        for (int d = 0; d < D; d += 16) {
            lo = _mm256_fmadd_ps(avx2::loadf_part(q + d, D - d), load8e_part(kj + d, D - d), lo);
            if (D - d > 8) hi = _mm256_fmadd_ps(avx2::loadf_part(q + d + 8, D - d - 8), load8e_part(kj + d + 8, D - d - 8), hi);
        }
        p[j] = avx2::hsum16(lo, hi) * scale;
    }
}

// weighted_sum_portable's chains (z[d] = fma over the keys in order), 32 elements of z at a time.
template <class E>
JOURNEY_AVX2 void weighted_sum_avx2(float* z, const float* p, const E* v, int64_t kv_stride, int first, int visible, int D) {
    int d0 = 0;
    for (; d0 + 32 <= D; d0 += 32) {
        __m256 a[4];
        for (auto& r : a) r = _mm256_setzero_ps();
        for (int j = first; j < visible; ++j) {
            const E* vj = v + j * kv_stride + d0;
            const __m256 pj = _mm256_set1_ps(p[j]);
            for (int r = 0; r < 4; ++r) a[r] = _mm256_fmadd_ps(pj, load8e(vj + 8 * r), a[r]);
        }
        for (int r = 0; r < 4; ++r) _mm256_storeu_ps(z + d0 + 8 * r, a[r]);
    }
    if (d0 < D) weighted_sum_portable(z + d0, p, v + d0, kv_stride, first, visible, D - d0);
}

// softmax over head h's visible scores; with sinks, the head's sink logit joins the denominator
// (as llama.cpp's soft_max with sinks: the maximum taken over the scores and the sink).
void scores_softmax(float* p, int n, const AttentionOptions& o, int h) {
    if (!o.sinks) return softmax(p, n);
    const float sink = o.sinks[h];
    float max = sink;
    for (int i = 0; i < n; ++i) max = std::max(max, p[i]);
    double sum = std::exp(double(sink) - max);
    for (int i = 0; i < n; ++i) sum += (p[i] = std::exp(p[i] - max));
    const float inv = float(1.0 / sum);
    for (int i = 0; i < n; ++i) p[i] *= inv;
}

// One new token at position n_past: every head over keys 0 .. n_past.
template <class E>
void one_token(float* z, float* pattern, const float* q, const E* k, const E* v, int n_past, int H, int Hkv, int D,
               const AttentionOptions& o) {
    const int L = n_past + 1;
    const int64_t kv_stride = int64_t{Hkv} * D;
    const int group = H / Hkv;
    const float scale = o.scale > 0.0f ? o.scale : 1.0f / std::sqrt(static_cast<float>(D));
    const int first = o.window > 0 ? std::max(0, L - o.window) : 0;  // the window's oldest key
    const bool fast = gemm_fast_available(), avx2 = !fast && avx2_kernels();
    auto head = [&](int h) {
        const int64_t kv_off = int64_t{h / group} * D;
        const float* qh = q + int64_t{h} * D;
        float* p = pattern + int64_t{h} * L;
        if (fast) scores_avx512(p, qh, k + kv_off, kv_stride, first, L, D, scale);
        else if (avx2) scores_avx2(p, qh, k + kv_off, kv_stride, first, L, D, scale);
        else scores_portable(p, qh, k + kv_off, kv_stride, first, L, D, scale);
        if (o.softcap > 0.0f) softcap(p + first, L - first, o.softcap);
        scores_softmax(p + first, L - first, o, h);
        std::fill(p, p + first, 0.0f);  // masked: slid out of the window
        if (fast) weighted_sum_avx512(z + int64_t{h} * D, p, v + kv_off, kv_stride, first, L, D);
        else if (avx2) weighted_sum_avx2(z + int64_t{h} * D, p, v + kv_off, kv_stride, first, L, D);
        else weighted_sum_portable(z + int64_t{h} * D, p, v + kv_off, kv_stride, first, L, D);
    };
    // Heads over a short context are a few microseconds each, not worth waking a thread; over a
    // long one they go to the pool's threads (each head is computed the same way on any thread,
    // so the result does not depend on -t).
    if (L < 256) {
        for (int h = 0; h < H; ++h) head(h);
        return;
    }
    thread_pool().run([&](int i, int n) {
        for (int h = i; h < H; h += n) head(h);
    });
}

}  // namespace

void attention(float* z, float* pattern, const float* q, const float* k, const float* v,
               int T, int n_past, int H, int Hkv, int D, const AttentionOptions& o) {
    if (T == 1) return one_token(z, pattern, q, k, v, n_past, H, Hkv, D, o);
    const int L = n_past + T;                  // keys visible to the last query
    const int64_t q_stride = int64_t{H} * D;   // floats per position in q and z
    const int64_t kv_stride = int64_t{Hkv} * D;
    const int group = H / Hkv;
    const float scale = o.scale > 0.0f ? o.scale : 1.0f / std::sqrt(static_cast<float>(D));
    auto head = [&](int h) {
        const int64_t kv_off = int64_t{h / group} * D;
        float* ph = pattern + int64_t{h} * T * L;
        // scores[T, L] = scale * q_h · k_hᵀ
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, L, D, scale, q + int64_t{h} * D,
                    static_cast<int>(q_stride), k + kv_off, static_cast<int>(kv_stride), 0.0f, ph, L);
        for (int t = 0; t < T; ++t) {
            float* p = ph + int64_t{t} * L;
            const int visible = n_past + t + 1;  // keys 0 .. n_past+t
            const int first = o.window > 0 ? std::max(0, visible - o.window) : 0;  // the window's oldest key
            if (o.softcap > 0.0f) softcap(p + first, visible - first, o.softcap);
            scores_softmax(p + first, visible - first, o, h);
            std::fill(p, p + first, 0.0f);        // masked: slid out of the window
            std::fill(p + visible, p + L, 0.0f);  // masked: the future
        }
        // z_h[T, D] = pattern_h[T, L] · v_h[L, D]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, D, L, 1.0f, ph, L, v + kv_off,
                    static_cast<int>(kv_stride), 0.0f, z + int64_t{h} * D, static_cast<int>(q_stride));
    };
    thread_pool().run([&](int i, int n) {
        for (int h = i; h < H; h += n) head(h);
    });
}

void attention_f16_cache(float* z, float* pattern, const float* q, const uint16_t* k, const uint16_t* v, int n_past,
                         int H, int Hkv, int D, const AttentionOptions& o) {
    one_token(z, pattern, q, k, v, n_past, H, Hkv, D, o);
}

}  // namespace journey
