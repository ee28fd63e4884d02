// The block encoders (see blocks/quantize.h). The arithmetic follows ggml's reference quantizers
// (ggml-quants.c, quantize_row_*_ref) operation by operation, in float, in the same order: the
// point is identical bytes, so nothing here may be "simplified". This file is compiled with
// -ffp-contract=off (CMakeLists.txt): a fused multiply-add would round differently from ggml's
// separate multiply and add.
#include "journey/kernels/blocks/quantize.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "journey/kernels/half.h"
#include "iq_grids.h"
#include "quantize_iq.h"

namespace journey {
namespace {

constexpr int QK_K = 256;
constexpr float kGroupMaxEps = 1e-15f;

float f16_round(float v) { return fp16_to_fp32(fp32_to_fp16(v)); }

// ---- 32-element blocks -------------------------------------------------------------------------

// Q4_1 (20 bytes: d, m, 16 nibbles) and Q5_1 (24 bytes: d, m, u32 fifth bits, 16 nibbles).
template <int Bits>
void quantize_min_max(const float* x, unsigned char* out, int64_t nb) {
    constexpr int qk = 32, nmax = (1 << Bits) - 1;
    constexpr size_t block = Bits == 4 ? 20 : 24;
    for (int64_t i = 0; i < nb; ++i, x += qk, out += block) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < qk; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / nmax;
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        put_f16(out + 2, min);
        unsigned char* qs = out + (Bits == 4 ? 4 : 8);
        uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[qk / 2 + j] - min) * id;
            uint8_t q0, q1;
            if constexpr (Bits == 4) {
                q0 = uint8_t(std::min(15, int(int8_t(x0 + 0.5f))));
                q1 = uint8_t(std::min(15, int(int8_t(x1 + 0.5f))));
            } else {  // ggml does not clamp Q5_1
                q0 = uint8_t(x0 + 0.5f);
                q1 = uint8_t(x1 + 0.5f);
            }
            qs[j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= uint32_t((q0 & 0x10u) >> 4) << j;
            qh |= uint32_t((q1 & 0x10u) >> 4) << (j + qk / 2);
        }
        if constexpr (Bits == 5) std::memcpy(out + 4, &qh, 4);
    }
}

// Q8_0 (34 bytes: d, 32 x int8) and Q4_0 (18 bytes: d, 16 nibbles).
void quantize_q8_0(const float* x, unsigned char* out, int64_t nb) {
    constexpr int qk = 32;
    for (int64_t i = 0; i < nb; ++i, x += qk, out += 34) {
        float amax = 0.0f;
        for (int j = 0; j < qk; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (int j = 0; j < qk; ++j) out[2 + j] = static_cast<unsigned char>(int8_t(std::round(x[j] * id)));
    }
}

// The element of largest magnitude, with its sign (the first such, as ggml keeps it).
float signed_absmax(const float* x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

// MXFP4 (17 bytes: E8M0 exponent e, then 16 bytes, element j in the low nibble and j + 16 in the
// high one): e = floor(log2(amax)) - 2 + 127, so the largest doubled E2M1 value (12) times
// 2^(e - 128) reaches amax; each element the nearest of the 16 values (the first on a tie), as
// quantize_row_mxfp4_ref.
int mxfp4_index(float x, float d) {
    int best = 0;
    float best_err = std::fabs(float(kMxfp4Values[0]) * d - x);
    for (int i = 1; i < 16; ++i) {
        const float err = std::fabs(float(kMxfp4Values[i]) * d - x);
        if (err < best_err) best = i, best_err = err;
    }
    return best;
}
void quantize_mxfp4(const float* x, unsigned char* out, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, x += 32, out += 17) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j)
            if (amax < std::fabs(x[j])) amax = std::fabs(x[j]);
        const uint8_t e = amax > 0.0f ? uint8_t(std::floor(std::log2(amax)) - 2 + 127) : 0;
        const float d = e8m0_half(e);
        out[0] = e;
        for (int j = 0; j < 16; ++j) out[1 + j] = uint8_t(mxfp4_index(x[j], d) | (mxfp4_index(x[16 + j], d) << 4));
    }
}

void quantize_q4_0(const float* x, unsigned char* out, int64_t nb) {
    constexpr int qk = 32;
    for (int64_t i = 0; i < nb; ++i, x += qk, out += 18) {
        const float max = signed_absmax(x, qk);
        const float d = max / -8;
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[qk / 2 + j] * id;
            const uint8_t q0 = uint8_t(std::min(15, int(int8_t(x0 + 8.5f))));
            const uint8_t q1 = uint8_t(std::min(15, int(int8_t(x1 + 8.5f))));
            out[2 + j] = uint8_t(q0 | (q1 << 4));
        }
    }
}

// Q5_0 (22 bytes: d, u32 fifth bits, 16 nibbles): d from the element of largest magnitude.
void quantize_q5_0(const float* x, unsigned char* out, int64_t nb) {
    constexpr int qk = 32;
    for (int64_t i = 0; i < nb; ++i, x += qk, out += 22) {
        const float max = signed_absmax(x, qk);
        const float d = max / -16;
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out, d);
        uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[qk / 2 + j] * id;
            const uint8_t q0 = uint8_t(std::min(31, int(int8_t(x0 + 16.5f))));
            const uint8_t q1 = uint8_t(std::min(31, int(int8_t(x1 + 16.5f))));
            out[6 + j] = uint8_t((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= uint32_t((q0 & 0x10u) >> 4) << j;
            qh |= uint32_t((q1 & 0x10u) >> 4) << (j + qk / 2);
        }
        std::memcpy(out + 2, &qh, 4);
    }
}

// ---- helpers of the K-quants ---------------------------------------------------------------------

// Symmetric quants in [-nmax, nmax) with a weighted least-squares scale search (rmse_type 1:
// weights x^2, or qw when given: an importance matrix). L receives q + nmax. Returns the scale.
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw = nullptr) {
    const float max = signed_absmax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = int8_t(l + nmax);
        const float w = qw ? qw[i] : x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            const float w = qw ? qw[i] : x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// Q3_K's sub-block quants: symmetric in [-nmax, nmax), refined coordinate by coordinate.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L) {
    const float max = signed_absmax(x, n);
    if (std::fabs(max) < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    const float iscale = -nmax / max;
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = int8_t(l);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                int new_l = nearest_int(x[i] * sl2 / slx);
                new_l = std::max(-nmax, std::min(nmax - 1, new_l));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = int8_t(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = int8_t(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Asymmetric quants in [0, nmax] with a min, searching scales around nmax / (max - min) for the
// least weighted error (squared, or absolute when use_mad). *the_min receives -min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = uint8_t(std::max(0, std::min(nmax, l)));
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = uint8_t(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = use_mad ? std::fabs(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// The 6-bit scale and min of sub-block j in the 12 packed bytes of Q4_K / Q5_K.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

// ---- super-blocks of 256 -----------------------------------------------------------------------

// Q2_K (84 bytes): scales[16] (4-bit scale | 4-bit min), qs[64], f16 d, f16 dmin.
void quantize_q2_k(const float* x, unsigned char* out, int64_t nb) {
    uint8_t L[QK_K], Laux[16];
    float weights[16], mins[QK_K / 16], scales[QK_K / 16];
    const float q4scale = 15.f;
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += 84) {
        uint8_t* sc = out;
        uint8_t* qs = out + 16;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        float d, dmin;
        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) sc[j] = uint8_t(nearest_int(iscale * scales[j]));
            d = max_scale / q4scale;
        } else {
            for (int j = 0; j < QK_K / 16; ++j) sc[j] = 0;
            d = 0.f;
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j) sc[j] = uint8_t(sc[j] | (nearest_int(iscale * mins[j]) << 4));
            dmin = max_min / q4scale;
        } else {
            dmin = 0.f;
        }
        put_f16(out + 80, d);
        put_f16(out + 82, dmin);
        const float dh = f16_round(d), dminh = f16_round(dmin);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float dd = dh * (sc[j] & 0xF);
            if (!dd) continue;
            const float dm = dminh * (sc[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int((x[16 * j + ii] + dm) / dd);
                L[16 * j + ii] = uint8_t(std::max(0, std::min(3, l)));
            }
        }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
}

// Q3_K (110 bytes): hmask[32], qs[64], scales[12] (16 x 6 bits), f16 d.
// Sub-block j's 6-bit scale l (biased by 32) into the 12 scale bytes (zeroed before).
void put_q3_k_scale(uint8_t* sc, int j, int l) {
    if (j < 8) sc[j] = uint8_t(l & 0xF);
    else sc[j - 8] = uint8_t(sc[j - 8] | ((l & 0xF) << 4));
    l >>= 4;
    sc[j % 4 + 8] = uint8_t(sc[j % 4 + 8] | (l << (2 * (j / 4))));
}

// The rest of a Q3_K block once its scales are packed: d, the quants of x at the stored scales
// (L keeps make_*_quants' values where a scale is 0), hmask and qs.
void finish_q3_k(const float* x, int8_t* L, float d, unsigned char* out) {
    uint8_t* hmask = out;
    uint8_t* qs = out + 32;
    const uint8_t* sc = out + 96;
    put_f16(out + 108, d);
    const float dh = f16_round(d);
    for (int j = 0; j < QK_K / 16; ++j) {
        int8_t s = int8_t(j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4);
        s = int8_t((s | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
        const float dd = dh * s;
        if (!dd) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int(x[16 * j + ii] / dd);
            L[16 * j + ii] = int8_t(std::max(-4, std::min(3, l)) + 4);
        }
    }
    std::memset(hmask, 0, QK_K / 8);
    int m = 0;
    uint8_t hm = 1;
    for (int j = 0; j < QK_K; ++j) {
        if (L[j] > 3) {
            hmask[m] = uint8_t(hmask[m] | hm);
            L[j] = int8_t(L[j] - 4);
        }
        if (++m == QK_K / 8) {
            m = 0;
            hm = uint8_t(hm << 1);
        }
    }
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

void quantize_q3_k(const float* x, unsigned char* out, int64_t nb) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += 110) {
        uint8_t* sc = out + 96;
        float max_scale = 0, amax = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }
        std::memset(sc, 0, 12);
        float d;
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                const int8_t l = int8_t(nearest_int(iscale * scales[j]));
                put_q3_k_scale(sc, j, int8_t(std::max(-32, std::min(31, int(l))) + 32));
            }
            d = 1 / iscale;
        } else {
            d = 0.f;
        }
        finish_q3_k(x, L, d, out);
    }
}

// The quants L of a Q4_K / Q5_K block into its bytes (qs; Q5_K: qh, then qs).
template <int Bits>
void pack_qk_k(const uint8_t* L, unsigned char* out) {
    if constexpr (Bits == 4) {
        uint8_t* q = out + 16;
        for (int j = 0; j < QK_K; j += 64, q += 32)
            for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
    } else {
        uint8_t* qh = out + 16;
        uint8_t* ql = out + 48;
        std::memset(qh, 0, QK_K / 8);
        uint8_t m1 = 1, m2 = 2;
        for (int n = 0; n < QK_K; n += 64, ql += 32) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] = uint8_t(qh[j] | m1);
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] = uint8_t(qh[j] | m2);
                }
                ql[j] = uint8_t(l1 | (l2 << 4));
            }
            m1 = uint8_t(m1 << 2);
            m2 = uint8_t(m2 << 2);
        }
    }
}

// Q4_K (144 bytes: d, dmin, scales[12], qs[128]) and Q5_K (176 bytes: d, dmin, scales[12],
// qh[32], qs[128]): 8 sub-blocks of 32 with a 6-bit scale and min each.
template <int Bits>
void quantize_qk_k(const float* x, unsigned char* out, int64_t nb) {
    constexpr int nmax = (1 << Bits) - 1;
    constexpr size_t block = Bits == 4 ? 144 : 176;
    constexpr float rmin = Bits == 4 ? -1.f : -0.5f;
    constexpr int nstep = Bits == 4 ? 20 : 15;
    uint8_t L[QK_K], Laux[32];
    float weights[32], mins[QK_K / 32], scales[QK_K / 32];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += block) {
        uint8_t* sc = out + 4;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < QK_K / 32; ++j) {
            float sum_x2 = 0;
            for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
            const float av_x = std::sqrt(sum_x2 / 32);
            for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
            scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, 0.1f, nstep, false);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
        const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
        std::memset(sc, 0, 12);
        for (int j = 0; j < QK_K / 32; ++j) {
            uint8_t ls = uint8_t(nearest_int(inv_scale * scales[j]));
            uint8_t lm = uint8_t(nearest_int(inv_min * mins[j]));
            ls = std::min<uint8_t>(63, ls);
            lm = std::min<uint8_t>(63, lm);
            if (j < 4) {
                sc[j] = ls;
                sc[j + 4] = lm;
            } else {
                sc[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
                sc[j - 4] = uint8_t(sc[j - 4] | ((ls >> 4) << 6));
                sc[j - 0] = uint8_t(sc[j - 0] | ((lm >> 4) << 6));
            }
        }
        put_f16(out, max_scale / 63.f);
        put_f16(out + 2, max_min / 63.f);
        const float dh = f16_round(max_scale / 63.f), dminh = f16_round(max_min / 63.f);
        for (int j = 0; j < QK_K / 32; ++j) {
            uint8_t s, m;
            get_scale_min_k4(j, sc, &s, &m);
            const float d = dh * s;
            if (!d) continue;
            const float dm = dminh * m;
            for (int ii = 0; ii < 32; ++ii) {
                const int l = nearest_int((x[32 * j + ii] + dm) / d);
                L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, l)));
            }
        }
        pack_qk_k<Bits>(L, out);
    }
}

// Q6_K (210 bytes): ql[128], qh[64], int8 scales[16], f16 d.
void quantize_q6_k(const float* x, unsigned char* out, int64_t nb, const float* qw = nullptr) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += 210) {
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, qw ? qw + QK_K * i + 16 * ib : nullptr);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(out, 0, 210);
            continue;
        }
        auto* sc = reinterpret_cast<int8_t*>(out + 192);
        const float iscale = -128.f / max_scale;
        put_f16(out + 208, 1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ++ib) sc[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
        const float dh = f16_round(1 / iscale);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dh * sc[j];
            if (!d) continue;
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int(x[16 * j + ii] / d);
                L[16 * j + ii] = int8_t(std::max(-32, std::min(31, l)) + 32);
            }
        }
        uint8_t* ql = out;
        uint8_t* qh = out + 128;
        for (int j = 0; j < QK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t q1 = L[j + l + 0] & 0xF, q2 = L[j + l + 32] & 0xF;
                const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
                ql[l + 0] = uint8_t(q1 | (q3 << 4));
                ql[l + 32] = uint8_t(q2 | (q4 << 4));
                qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                ((L[j + l + 96] >> 4) << 6));
            }
        }
    }
}

// ---- with an importance matrix (ggml's quantize_row_*_impl) ----------------------------------------

// make_qkx2_quants with the weights' fallback x^2 and a scale search of nstep steps (ggml's
// make_qkx3_quants; weights are never null here).
float make_qkx3_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min, uint8_t* Laux,
                       float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max <= min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_mad = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = uint8_t(std::max(0, std::min(nmax, l)));
        float diff = scale * L[i] + min - x[i];
        diff = diff * diff;
        best_mad += weights[i] * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = uint8_t(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float mad = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = diff * diff;
                mad += weights[i] * diff;
            }
            if (mad < best_mad) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_mad = mad;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// Non-negative quants in [0, nmax] of the sub-block scales, weighted by w (ggml's make_qp_quants).
float make_qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* w) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = std::max(max, x[i]);
    if (max < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i) L[i] = uint8_t(nearest_int(iscale * x[i]));
    const float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = x[i] - scale * L[i];
        best_mse += w[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        const float iscale_is = (0.1f * is + nmax) / max;
        const float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale_is * x[i]);
            l = std::min(nmax, l);
            const float diff = x[i] - scale_is * l;
            mse += w[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::min(nmax, l);
        L[i] = uint8_t(l);
        sumlx += w[i] * x[i] * l;
        suml2 += w[i] * l * l;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int n_changed = 0;
        for (int i = 0; i < n; ++i) {
            float slx = sumlx - w[i] * x[i] * L[i];
            float sl2 = suml2 - w[i] * L[i] * L[i];
            if (slx > 0 && sl2 > 0) {
                int new_l = nearest_int(x[i] * sl2 / slx);
                new_l = std::min(nmax, new_l);
                if (new_l != L[i]) {
                    slx += w[i] * x[i] * new_l;
                    sl2 += w[i] * new_l * new_l;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = uint8_t(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++n_changed;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Q2_K with an importance matrix qw (one weight per column of the row).
void quantize_q2_k_w(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    uint8_t L[QK_K], Laux[16], Ls[QK_K / 16], Lm[QK_K / 16];
    float mins[QK_K / 16], scales[QK_K / 16], sw[QK_K / 16], weight[16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += 84) {
        for (float& v : sw) v = 0;
        float sumx2 = 0;
        for (int j = 0; j < QK_K; ++j) sumx2 += x[j] * x[j];
        const float sigma2 = sumx2 / QK_K;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float* qw = quant_weights + QK_K * i + 16 * j;
            for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            for (int l = 0; l < QK_K / 16; ++l) sw[j] += weight[l];
            scales[j] = make_qkx3_quants(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36);
        }
        const float dm0 = make_qp_quants(QK_K / 16, 15, scales, Ls, sw);
        const float mm0 = make_qp_quants(QK_K / 16, 15, mins, Lm, sw);
        put_f16(out + 80, dm0);
        put_f16(out + 82, mm0);
        const float dm = f16_round(dm0), mm = f16_round(mm0);
        uint8_t* sc = out;
        uint8_t* qs = out + 16;
        for (int j = 0; j < QK_K / 16; ++j) sc[j] = uint8_t(Ls[j] | (Lm[j] << 4));
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = dm * (sc[j] & 0xF);
            if (!d) continue;
            const float m = mm * (sc[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                const int l = nearest_int((x[16 * j + ii] + m) / d);
                L[16 * j + ii] = uint8_t(std::max(0, std::min(3, l)));
            }
        }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
    }
}

// Q4_K / Q5_K with an importance matrix.
template <int Bits>
void quantize_qk_k_w(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    constexpr int nmax = (1 << Bits) - 1;
    constexpr size_t block = Bits == 4 ? 144 : 176;
    uint8_t L[QK_K], Laux[32], Ls[QK_K / 32], Lm[QK_K / 32];
    float weights[32], sw[QK_K / 32], mins[QK_K / 32], scales[QK_K / 32];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += block) {
        float sum_x2 = 0;
        for (int l = 0; l < QK_K; ++l) sum_x2 += x[l] * x[l];
        const float sigma2 = 2 * sum_x2 / QK_K;
        for (int j = 0; j < QK_K / 32; ++j) {
            const float* qw = quant_weights + QK_K * i + 32 * j;
            for (int l = 0; l < 32; ++l) weights[l] = qw[l] * std::sqrt(sigma2 + x[32 * j + l] * x[32 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 32; ++l) sumw += weights[l];
            sw[j] = sumw;
            scales[j] = make_qkx3_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36);
        }
        const float d_block = make_qp_quants(QK_K / 32, 63, scales, Ls, sw);
        const float m_block = make_qp_quants(QK_K / 32, 63, mins, Lm, sw);
        uint8_t* sc = out + 4;
        for (int j = 0; j < QK_K / 32; ++j) {
            uint8_t ls = Ls[j], lm = Lm[j];
            if constexpr (Bits == 5) {
                ls = std::min<uint8_t>(63, ls);
                lm = std::min<uint8_t>(63, lm);
            }
            if (j < 4) {
                sc[j] = ls;
                sc[j + 4] = lm;
            } else {
                sc[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
                sc[j - 4] = uint8_t(sc[j - 4] | ((ls >> 4) << 6));
                sc[j - 0] = uint8_t(sc[j - 0] | ((lm >> 4) << 6));
            }
        }
        put_f16(out, d_block);
        put_f16(out + 2, m_block);
        const float dh = f16_round(d_block), dminh = f16_round(m_block);
        for (int j = 0; j < QK_K / 32; ++j) {
            uint8_t s, m;
            get_scale_min_k4(j, sc, &s, &m);
            const float d = dh * s;
            if (!d) continue;
            const float dm = dminh * m;
            for (int ii = 0; ii < 32; ++ii) {
                const int l = nearest_int((x[32 * j + ii] + dm) / d);
                L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, l)));
            }
        }
        pack_qk_k<Bits>(L, out);
    }
}

// Q3_K with an importance matrix: weighted sub-block scales, then their 6-bit quants by the
// same weighted search (ggml's quantize_row_q3_K_impl).
void quantize_q3_k_w(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    int8_t L[QK_K], Ls[QK_K / 16];
    float scales[QK_K / 16], weight[16], sw[QK_K / 16];
    for (int64_t i = 0; i < nb; ++i, x += QK_K, out += 110) {
        float sumx2 = 0;
        for (int j = 0; j < QK_K; ++j) sumx2 += x[j] * x[j];
        const float sigma2 = 2 * sumx2 / QK_K;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float* qw = quant_weights + QK_K * i + 16 * j;
            for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += weight[l];
            sw[j] = sumw;
            scales[j] = make_qx_quants(16, 4, x + 16 * j, L + 16 * j, weight);
        }
        uint8_t* sc = out + 96;
        std::memset(sc, 0, 12);
        const float d_block = make_qx_quants(QK_K / 16, 32, scales, Ls, sw);
        for (int j = 0; j < QK_K / 16; ++j) put_q3_k_scale(sc, j, Ls[j]);
        finish_q3_k(x, L, d_block, out);
    }
}

// The 32-element types with an importance matrix (ggml's quantize_row_q4_0_impl … q5_1_impl):
// each element weighted by qw * sqrt(sigma2 + x^2), sigma2 the mean square of the whole row;
// Q4_0 / Q5_0 by the symmetric search, Q4_1 / Q5_1 by the one with a min.
template <int Bits, bool WithMin>
void quantize_q32_w(const float* x, unsigned char* out, int64_t nb, const float* quant_weights) {
    constexpr int qk = 32;
    constexpr size_t block = 2 + (WithMin ? 2 : 0) + (Bits == 5 ? 4 : 0) + 16;
    const int64_t n_per_row = nb * qk;
    float sum_x2 = 0;
    for (int64_t j = 0; j < n_per_row; ++j) sum_x2 += x[j] * x[j];
    const float sigma2 = sum_x2 / n_per_row;
    float weight[qk];
    uint8_t L[qk], Laux[qk];
    int8_t Ls[qk];
    for (int64_t ib = 0; ib < nb; ++ib, out += block) {
        const float* xb = x + qk * ib;
        const float* qw = quant_weights + qk * ib;
        for (int j = 0; j < qk; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        if constexpr (WithMin) {
            float min;
            const float d = make_qkx3_quants(qk, (1 << Bits) - 1, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36);
            put_f16(out, d);
            put_f16(out + 2, -min);
        } else {
            put_f16(out, make_qx_quants(qk, 1 << (Bits - 1), xb, Ls, weight));
            for (int j = 0; j < qk; ++j) L[j] = uint8_t(Ls[j]);
        }
        unsigned char* qs = out + block - 16;
        uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            qs[j] = uint8_t((L[j] & 0x0F) | ((L[j + qk / 2] & 0x0F) << 4));
            qh |= uint32_t((L[j] & 0x10u) >> 4) << j;
            qh |= uint32_t((L[j + qk / 2] & 0x10u) >> 4) << (j + qk / 2);
        }
        if constexpr (Bits == 5) std::memcpy(qs - 4, &qh, 4);
    }
}

// TQ1_0 (54 bytes: qs[48] five trits per byte, qh[4] four, f16 d) and TQ2_0 (66 bytes: qs[64]
// four 2-bit trits per byte, f16 d): ternary values of amax-scaled rows (lroundf, as ggml).
void quantize_tq1_0(const float* x, unsigned char* out, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, out += 54) {
        float amax = 0.0f;
        for (int j = 0; j < QK_K; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax;
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out + 52, d);
        auto pack = [&](int groups, int stride, unsigned char* dst, bool shift) {
            for (int m = 0; m < stride; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < groups; ++n) {
                    const int xi = int(std::lround(x[m + n * stride] * id)) + 1;
                    q = uint8_t(q * 3 + xi);
                }
                if (shift) q = uint8_t(q * 3);
                dst[m] = uint8_t((uint16_t(q) * 256 + (243 - 1)) / 243);
            }
            x += groups * stride;
        };
        pack(5, 32, out, false);
        pack(5, 16, out + 32, false);
        pack(4, 4, out + 48, true);
    }
}

void quantize_tq2_0(const float* x, unsigned char* out, int64_t nb) {
    for (int64_t i = 0; i < nb; ++i, out += 66) {
        float amax = 0.0f;
        for (int j = 0; j < QK_K; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax;
        const float id = d ? 1.0f / d : 0.0f;
        put_f16(out + 64, d);
        for (int j = 0; j < 64; j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 4; ++n) {
                    const int xi = int(std::lround(x[m + n * 32] * id)) + 1;
                    q = uint8_t(q + ((xi & 3) << (2 * n)));
                }
                out[j + m] = q;
            }
            x += 4 * 32;
        }
    }
}

}  // namespace

float qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* w) { return make_qp_quants(n, nmax, x, L, w); }

void quantize_row(DType t, const float* x, void* dst, int64_t n, const float* weights) {
    const auto block = int64_t(dtype_block(t));
    if (n < 0 || n % block != 0)
        throw std::invalid_argument(std::string(dtype_name(t)) + ": row length " + std::to_string(n) +
                                    " is not a whole number of " + std::to_string(block) + "-element blocks");
    auto* out = static_cast<unsigned char*>(dst);
    const int64_t nb = n / block;
    switch (t) {
        case DType::F32: std::memcpy(out, x, size_t(n) * 4); return;
        case DType::F16:
            for (int64_t i = 0; i < n; ++i) put_f16(out + 2 * i, x[i]);
            return;
        case DType::BF16:
            for (int64_t i = 0; i < n; ++i) {
                const uint16_t b = fp32_to_bf16(x[i]);
                std::memcpy(out + 2 * i, &b, 2);
            }
            return;
        case DType::Q8_0: quantize_q8_0(x, out, nb); return;
        case DType::Q4_0:
            if (weights) quantize_q32_w<4, false>(x, out, nb, weights);
            else quantize_q4_0(x, out, nb);
            return;
        case DType::Q4_1:
            if (weights) quantize_q32_w<4, true>(x, out, nb, weights);
            else quantize_min_max<4>(x, out, nb);
            return;
        case DType::Q5_0:
            if (weights) quantize_q32_w<5, false>(x, out, nb, weights);
            else quantize_q5_0(x, out, nb);
            return;
        case DType::Q5_1:
            if (weights) quantize_q32_w<5, true>(x, out, nb, weights);
            else quantize_min_max<5>(x, out, nb);
            return;
        case DType::Q2_K:
            if (weights) quantize_q2_k_w(x, out, nb, weights);
            else quantize_q2_k(x, out, nb);
            return;
        case DType::Q3_K:
            if (weights) quantize_q3_k_w(x, out, nb, weights);
            else quantize_q3_k(x, out, nb);
            return;
        case DType::Q4_K:
            if (weights) quantize_qk_k_w<4>(x, out, nb, weights);
            else quantize_qk_k<4>(x, out, nb);
            return;
        case DType::Q5_K:
            if (weights) quantize_qk_k_w<5>(x, out, nb, weights);
            else quantize_qk_k<5>(x, out, nb);
            return;
        case DType::Q6_K: quantize_q6_k(x, out, nb, weights); return;
        case DType::TQ1_0: quantize_tq1_0(x, out, nb); return;
        case DType::TQ2_0: quantize_tq2_0(x, out, nb); return;
        case DType::IQ3_XXS: quantize_iq3_xxs(x, out, nb, weights); return;
        case DType::IQ3_S: quantize_iq3_s(x, out, nb, weights); return;
        case DType::IQ2_XXS: case DType::IQ2_XS:
            if (!weights) throw std::invalid_argument(std::string(dtype_name(t)) + " needs an importance matrix");
            if (t == DType::IQ2_XXS) quantize_iq2_xxs(x, out, nb, weights);
            else quantize_iq2_xs(x, out, nb, weights);
            return;
        case DType::IQ2_S: quantize_iq2_s(x, out, nb, weights); return;
        case DType::IQ1_S:
            if (!weights) throw std::invalid_argument("IQ1_S needs an importance matrix");
            quantize_iq1_s(x, out, nb, weights);
            return;
        case DType::IQ1_M: quantize_iq1_m(x, out, nb, weights); return;
        case DType::MXFP4: quantize_mxfp4(x, out, nb); return;
        case DType::IQ4_NL: quantize_iq4_nl(x, out, nb, weights); return;
        case DType::IQ4_XS: quantize_iq4_xs(x, out, nb, weights); return;
    }
    throw std::invalid_argument("journey cannot encode type " + std::to_string(int(t)));
}

}  // namespace journey
