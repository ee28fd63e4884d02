#!/usr/bin/env bash
# The arithmetic ceiling of one core, for the Speed section: 24 independent chains of
# 512-bit fma (F32, 32 flops each) and of vdpbf16ps (BF16 pairs, 64 flops each), timed.
# Run it on an idle machine; it prints GFLOP/s per core for each, best of 3.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/peak.cpp" <<'CPP'
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cstdio>

template <class Step>
double rate(long n, double flops_per_op, Step step) {
    const auto t0 = std::chrono::steady_clock::now();
    step(n);
    return n * 24.0 * flops_per_op / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 1e9;
}

__attribute__((target("avx512f,fma"))) void fma_chains(long n) {
    __m512 a[24];
    for (auto& v : a) v = _mm512_setzero_ps();
    __m512 x = _mm512_set1_ps(1e-9f), w = _mm512_set1_ps(1e-9f);
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; ++i) a[i] = _mm512_fmadd_ps(x, w, a[i]);
        asm volatile("" : "+v"(x));
    }
    float s = 0;
    for (auto& v : a) s += _mm512_reduce_add_ps(v);
    asm volatile("" ::"x"(s));
}

__attribute__((target("avx512f,avx512bf16"))) void bf16_chains(long n) {
    __m512 a[24];
    for (auto& v : a) v = _mm512_setzero_ps();
    __m512bh x = (__m512bh)_mm512_set1_epi32(0x30803080), w = x;
    for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
        for (int i = 0; i < 24; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, w);
        asm volatile("" : "+v"(x));
    }
    float s = 0;
    for (auto& v : a) s += _mm512_reduce_add_ps(v);
    asm volatile("" ::"x"(s));
}

int main() {
    double f = 0, b = 0;
    for (int r = 0; r < 3; ++r) f = std::max(f, rate(50000000, 32, fma_chains));
    std::printf("fma (F32)        %.1f GFLOP/s per core\n", f);
    if (__builtin_cpu_supports("avx512bf16")) {
        for (int r = 0; r < 3; ++r) b = std::max(b, rate(50000000, 64, bf16_chains));
        std::printf("vdpbf16ps (BF16) %.1f GFLOP/s per core (%.2fx fma)\n", b, b / f);
    } else {
        std::printf("vdpbf16ps (BF16) not on this CPU\n");
    }
}
CPP
g++ -O2 -std=c++20 -o "$dir/peak" "$dir/peak.cpp"
"$dir/peak"
