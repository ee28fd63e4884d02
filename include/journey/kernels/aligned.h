// Memory that starts on a 64-byte cache line. The one-token kernels read their vector operands
// (x, the KV cache's rows, the quantized activations) with 64-byte loads: where a vector starts
// 16 bytes into a line, as std::vector's storage does, every such load touches two lines. F16
// rows held in L1, one thread on this Zen 5: 68 GB/s with x 16 bytes into a line, 95 with x on
// a line (F32 135 against 165; 5 Dec). Out of cache a token waits on memory and gains little.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace journey {

template <class T>
struct LineAllocator {
    using value_type = T;
    static constexpr std::align_val_t kLine{64};
    LineAllocator() = default;
    template <class U>
    LineAllocator(const LineAllocator<U>&) noexcept {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kLine)); }
    void deallocate(T* p, size_t) noexcept { ::operator delete(p, kLine); }
    template <class U>
    bool operator==(const LineAllocator<U>&) const noexcept { return true; }
};

// A std::vector whose elements start on a cache line.
template <class T>
using LineVector = std::vector<T, LineAllocator<T>>;

}  // namespace journey
