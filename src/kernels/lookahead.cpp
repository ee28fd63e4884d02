#include "journey/kernels/lookahead.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "journey/formats/tensor.h"
#include "journey/kernels/thread_pool.h"

namespace journey {
namespace {

// Per calling thread: threads that run passes of their own at once (patch's grid) each learn
// their own order, and never share the map.
thread_local std::unordered_map<const std::byte*, Matrix> g_after;  // a matrix -> the one whose product followed
thread_local const std::byte* g_prev = nullptr;

// At most this much of a product is warmed per worker (a quarter of Zen 4's L2; a GPT-2 small
// Q8_0 worker's first chunk is 78-313 KiB, only the output projection's is larger).
// JOURNEY_WARM_KB overrides it (0: no warming). GPT-2 small Q8_0, tg64 -t 2, the share of the
// read bandwidth (journey bench --bandwidth), alternating, 19:12-19:20 UTC 4 Dec: 0 KiB 0.63,
// 0.62, 0.63, 0.59, 0.63, 0.57, 0.58; 128 KiB 0.65, 0.65, 0.58; 256 KiB 0.66, 0.68, 0.71, 0.68,
// 0.68, 0.64, 0.65; 1 MiB 0.69, 0.65, 0.68. F16 and Llama 3.2 1B (F16, Q4_K_M) stayed level.
size_t warm_bytes() {
    static const size_t n = [] {
        const char* e = std::getenv("JOURNEY_WARM_KB");
        return e ? size_t(std::atol(e)) * 1024 : size_t(256) * 1024;
    }();
    return n;
}

}  // namespace

const Matrix* note_product(const Matrix& W) {
    // A process that loads model after model keeps no more than a few models' worth; a stale
    // entry (a model since unloaded) costs at most some useless prefetches, which never fault.
    if (g_after.size() > 4096) g_after.clear();
    if (g_prev && g_prev != W.data) g_after[g_prev] = W;
    g_prev = W.data;
    const auto it = g_after.find(W.data);
    return it == g_after.end() ? nullptr : &it->second;
}

namespace {
// n / parts rounded up to whole groups of 16 rows (cache lines of y; pack_rows16's groups)
int64_t chunk16(int64_t n, int64_t parts) { return ((n + parts - 1) / parts + 15) / 16 * 16; }
}  // namespace

std::pair<int64_t, int64_t> linear_part(int64_t n, int i, int parts) {
    const int64_t chunk = chunk16(n, parts);
    return {std::min(n, i * chunk), std::min(n, (i + 1) * chunk)};
}

int64_t quant_chunk(int64_t n_out, int threads) { return chunk16(n_out, 4 * int64_t(threads)); }

void warm_next(const Matrix* next, int i, int n) {
    if (!next || i == 0 || next->layout != Layout::Linear || warm_bytes() == 0) return;
    int64_t r0, r1;
    if (dtype_block(next->dtype) == 1) {  // a float type: gemv's ranges; else matmul_quantized's chunks
        std::tie(r0, r1) = linear_part(next->rows, i, n);
    } else {
        const int64_t c = quant_chunk(next->rows, n);
        r0 = std::min(next->rows, c * i), r1 = std::min(next->rows, c * (i + 1));
    }
    if (r0 >= r1) return;
    const size_t row = dtype_bytes(next->dtype, uint64_t(next->cols));
    const std::byte* base = next->rows16 ? next->rows16 : next->data;
    ThreadPool::warm_when_done(base + size_t(r0) * row, std::min(warm_bytes(), size_t(r1 - r0) * row));
}

}  // namespace journey
