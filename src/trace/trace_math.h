// Small reductions the trace's observers share (trace.cpp, trace_positions.cpp).
#pragma once
#include <cmath>
#include <cstdint>
#include <span>

#include "journey/model/observer.h"

namespace journey::trace_math {

inline double l2_norm(std::span<const float> x) {
    double s = 0;
    for (float v : x) s += double(v) * double(v);
    return std::sqrt(s);
}

// Entropy (nats) of a probability row.
inline double entropy_of(std::span<const float> p) {
    double h = 0;
    for (float v : p)
        if (v > 0) h -= double(v) * std::log(double(v));
    return h;
}

// Elements per outermost index of an intermediate ([T, ...] -> the size of one row).
inline int64_t inner_size(const Intermediate& t) {
    int64_t n = 1;
    for (size_t i = 1; i < t.dims.size(); ++i) n *= t.dims[i];
    return n;
}

}  // namespace journey::trace_math
