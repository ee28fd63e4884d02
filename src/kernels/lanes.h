// The fixed order in which our kernels sum 16 lanes, shared by the portable loops; the AVX-512
// paths do the same additions in registers (hsum16, avx512_loads.h), so both give the same bits.
#pragma once

namespace journey {

// Lane l += lane l+8, +4, +2, +1; returns lane 0.
inline float reduce16(float* a) {
    for (int s = 8; s >= 1; s /= 2)
        for (int l = 0; l < s; ++l) a[l] += a[l + s];
    return a[0];
}

}  // namespace journey
