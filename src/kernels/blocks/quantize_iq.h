// Private: the i-quant encoders (quantize_iq.cpp), called by quantize_row (quantize.cpp).
// nb blocks of 256 floats at x into out; qw: the importance matrix's weight per column of the
// row (may be null where ggml allows it).
#pragma once
#include <cstdint>
#include <cstring>

#include "journey/kernels/half.h"

namespace journey {

void quantize_iq3_xxs(const float* x, unsigned char* out, int64_t nb, const float* qw);
void quantize_iq3_s(const float* x, unsigned char* out, int64_t nb, const float* qw);
void quantize_iq2_xxs(const float* x, unsigned char* out, int64_t nb, const float* qw);  // qw required
void quantize_iq2_xs(const float* x, unsigned char* out, int64_t nb, const float* qw);   // qw required
void quantize_iq2_s(const float* x, unsigned char* out, int64_t nb, const float* qw);
void quantize_iq1_s(const float* x, unsigned char* out, int64_t nb, const float* qw);  // qw required
void quantize_iq1_m(const float* x, unsigned char* out, int64_t nb, const float* qw);
void quantize_iq4_nl(const float* x, unsigned char* out, int64_t nb, const float* qw);  // qw may be null
void quantize_iq4_xs(const float* x, unsigned char* out, int64_t nb, const float* qw);  // qw may be null

// Round to nearest, ties to even, through the float's mantissa (valid for |v| <= 2^22), as
// ggml's nearest_int.
inline int nearest_int(float v) {
    const float f = v + 12582912.f;
    int i;
    std::memcpy(&i, &f, 4);
    return (i & 0x007fffff) - 0x00400000;
}

inline void put_f16(unsigned char* p, float v) {
    const uint16_t h = fp32_to_fp16(v);
    std::memcpy(p, &h, 2);
}

// ggml's make_qp_quants (quantize.cpp), shared with the i-quant searches.
float qp_quants(int n, int nmax, const float* x, uint8_t* L, const float* w);

}  // namespace journey
