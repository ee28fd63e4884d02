#include "journey/kernels/blocks/matmul.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>

#include "journey/kernels/blocks/dot.h"
#include "journey/kernels/blocks/gemm_iq16.h"
#include "journey/kernels/gemv.h"
#include "journey/kernels/kernels.h"
#include "journey/kernels/lookahead.h"
#include "journey/kernels/thread_pool.h"

namespace journey {

// Every token's x quantized once, then groups of 16 rows, each read from memory once and then
// from cache for every token: row t has the bits of the token alone (dot_rows: any path, any
// thread count).
void matmul_quantized_tokens(float* out, const float* x, const Matrix& W, int T) {
    const int64_t n_in = W.cols, n_out = W.rows;
    thread_local std::vector<QuantizedActivations> tokens;
    if (tokens.size() < size_t(T)) tokens.resize(size_t(T));
    for (int t = 0; t < T; ++t) quantize_activations(x + size_t(t) * size_t(n_in), n_in, tokens[size_t(t)], activation_block(W.dtype));
    const QuantizedActivations* xs = tokens.data();  // the caller's (a worker's `tokens` is its own)
    // Q8_0, Q4_0, MXFP4: the tokens interleaved once for the row x token tiles (dot_rows_tokens)
    thread_local PackedTokens t_packed;
    const PackedTokens* packed = nullptr;
    if (tokens_packed(W.dtype)) {
        pack_tokens(xs, T, W.dtype, t_packed);
        packed = &t_packed;
    }
    // Groups of whole 16-row blocks (Q4_K's regrouping), about 32 KiB of weights each, so that the
    // token tiles after the first read them from L1/L2. The threads take runs of groups as the
    // one token's rows (a quarter of a thread's share at a time, thread i run i first), so each
    // streams long stretches of W and its prefetches ahead stay in its own rows, and the next
    // product's first rows are warmed when done (warm_next). Groups handed out one at a time,
    // alternating between the threads, read Llama 3.2 1B Q8_0 at 2 sequences slower than one
    // sequence's rows (36.8 against 40.3 tok/s, -t 2).
    //
    // The AVX2 row x token tiles (Q8_0, Q4_0, MXFP4 without AVX-512 VNNI) block the rows by 12
    // themselves (dot_rows_tokens_avx2) and ask for the next 12 while reading these: they take
    // a whole chunk a call. Groups of 16 there were 12 + 4 rows, the 4 rows' block asking only
    // for 4 more, so a quarter of the next group came unasked: Llama 3.2 1B's 2048-input rows,
    // 8 tokens, one thread, 1.43-1.55 ns a block and token in groups of 16 against 1.27-1.32 in
    // groups of 24, 48, 96 or the whole matrix (8192 inputs: 1.25 / 1.19).
    const int threads = thread_pool().size();
    const bool avx2_tiles = tokens_packed(W.dtype) && !quant_dot_fast_available();
    const int64_t rows = avx2_tiles ? std::max<int64_t>(16, quant_chunk(n_out, threads))
                                    : std::max<int64_t>(16, int64_t{32768} / std::max<int64_t>(1, int64_t(dtype_bytes(W.dtype, uint64_t(n_in)))) / 16 * 16);
    const int64_t chunk = std::max(rows, (quant_chunk(n_out, threads) + rows - 1) / rows * rows);
    const Matrix* after = note_product(W);
    std::atomic<int64_t> next{chunk * threads};
    thread_pool().run([&](int i, int n) {
        for (int64_t c0 = chunk * i; c0 < n_out; c0 = next.fetch_add(chunk, std::memory_order_relaxed))
            for (int64_t r0 = c0; r0 < std::min(n_out, c0 + chunk); r0 += rows)
                dot_rows_tokens(out, n_out, W, xs, T, r0, std::min({n_out, c0 + chunk, r0 + rows}), packed);
        warm_next(after, i, n);
    });
}

void matmul_quantized(float* out, const float* x, const Matrix& W, int T, bool prompt_kernels) {
    if (W.layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
    if (dtype_block(W.dtype) == 1) throw std::logic_error("matmul_quantized: not a block-quantized type");
    const int64_t n_in = W.cols, n_out = W.rows;
    if (T == 1 && !prompt_kernels) {
        // One token, as llama.cpp does it: x is quantized to Q8_0 (K-quants: Q8_K) once, then each row · x is an
        // integer dot per block (blocks/dot.h). The threads take a quarter of their share of the
        // rows at a time as they come rather than fixed shares, so a worker that wakes late (perf
        // at -t 2: ~20% of the time in the scheduler's wake-up paths) or is preempted on a shared
        // machine leaves its rows to the others instead of stalling the product. Chunks of ~64
        // KiB, as before, restarted the hardware's prefetching too often: Llama 3.2 1B tg32 -t 2,
        // alternating runs (about 04:10-04:20 UTC 4 Dec), Q4_K_M 29.7, 32.1 -> 35.0, 38.2 tok/s, Q6_K
        // 22.2, 24.1 -> 27.4, 28.6.
        thread_local QuantizedActivations scratch;  // the caller's; workers see it through xq
        quantize_activations(x, n_in, scratch, activation_block(W.dtype));
        const QuantizedActivations* xq = &scratch;
        const int threads = thread_pool().size();
        const int64_t chunk = quant_chunk(n_out, threads);
        const Matrix* after = note_product(W);
        std::atomic<int64_t> next{chunk * threads};  // thread i takes chunk i first (lookahead.h)
        thread_pool().run([&](int i, int n) {
            for (int64_t r0 = chunk * i; r0 < n_out; r0 = next.fetch_add(chunk, std::memory_order_relaxed))
                dot_rows(out, W, *xq, r0, std::min(n_out, r0 + chunk));
            warm_next(after, i, n);
        });
        return;
    }
    if (W.dtype == DType::Q4_K) {
        // Q4_K prompts as the one token's integer dots, token by token, each token's x quantized
        // to Q8_K once, as llama.cpp multiplies Q4_K prompts. A group of 16 rows is read from
        // memory once and then from cache for every token (16 rows of 2048 inputs: 18 KiB). The
        // float gemm on dequantized panels ran at 84-86% of the fma peak and llama.cpp's integer
        // prompts were ahead (pp512, Llama 3.2 1B Q4_K_M, -t 2: 105-108 tok/s against 150-165
        // this way, alternating, 08:52 UTC 4 Dec). A prompt's row then has the same bits as the
        // row computed alone (dot_rows: any path, any thread count).
        return matmul_quantized_tokens(out, x, W, T);
    }
    if (W.dtype == DType::MXFP4) {
        // MXFP4 prompts the same way, as llama.cpp multiplies them (its 4-bit codes against Q8_0
        // x): each weight block unpacked once for eight tokens (blocks/dot.cpp), no float panels.
        return matmul_quantized_tokens(out, x, W, T);
    }
    if (has_iq16(W.dtype)) {
        // IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ1_S, IQ1_M, TQ1_0, TQ2_0 prompts: x rounded to 16
        // bits per super-block against the weights' own integers, exact int32 sums (VNNI
        // vpdpwssd), one float step per super-block (blocks/gemm_iq16.cpp). Every prompt of
        // these types, whatever T (also T = 1 with prompt_kernels), so that a row has the same
        // bits however a prompt is split. Sequences decoded together (--parallel) take
        // matmul_tokens, the one-token dots, not this: unchanged. pp512 -t 1 by CPU time on
        // Llama 3.2 1B: IQ2_XXS 46.7 -> 127, IQ3_S 45.8 -> 95, IQ4_XS 66.9 -> 108 tok/s against
        // the float panels, and as close to f32_of_dequantized (tests/model/test_iquant_models.cpp:
        // IQ1_S max |J - F| 0.115 against the float panels' 0.121, IQ3_XXS 0.091 against 0.089;
        // llama.cpp's 0.161 and 0.184); llama.cpp's prompts round x to 8 bits.
        return matmul_iq16(out, x, W, T, quant_dot_fast_available());
    }
    // A prompt: float x against the weights dequantized a 64-row panel at a time (gemm.cpp).
    gemm(out, x, W, T);
}

// Every row of every x as one token (matmul_quantized_tokens' bits): x quantized once per
// token, then integer dots, a group of rows read from memory once for all of a product's tokens
// (Q8_0/Q4_0 unpack each block once for eight tokens). Not the float panels of other prompts: an
// expert's group of a prompt's tokens is small (512 tokens x 8 of 128 experts: 32), too few to
// pay for dequantizing and packing the expert's panels (Qwen3-30B-A3B's shape at Q8_0, pp128:
// a third of the time went there), and the integer dots run four times the products per
// instruction. Work items are whole groups of one product's rows, taken across products as
// they come.
void matmul_quantized_many(std::span<const Product> ps) {
    struct Item {
        size_t p;
        int64_t r0, r1;
    };
    // Each distinct quantized x: its tokens' activations at acts[at ..]
    struct Source {
        const float* x;
        int T;
        int64_t n;
        int block;
        size_t at;
    };
    // The caller's scratch (thread_local), bound to references: the workers read the caller's.
    thread_local std::vector<Source> t_sources;
    thread_local std::vector<size_t> t_source_of;
    thread_local std::vector<QuantizedActivations> t_acts;
    thread_local std::vector<Item> t_items;
    std::vector<Source>& sources = t_sources;
    std::vector<size_t>& source_of = t_source_of;
    std::vector<QuantizedActivations>& acts = t_acts;
    std::vector<Item>& items = t_items;
    sources.clear();
    source_of.assign(ps.size(), SIZE_MAX);
    size_t n_rows = 0;
    for (size_t i = 0; i < ps.size(); ++i) {
        const Product& p = ps[i];
        if (p.W->layout != Layout::Linear) throw std::logic_error("matmul: quantized weights must be Linear [out, in]");
        const int64_t n = p.W->cols;
        const int block = activation_block(p.W->dtype);
        size_t k = 0;
        while (k < sources.size() && !(sources[k].x == p.x && sources[k].T == p.T && sources[k].n == n && sources[k].block == block)) ++k;
        if (k == sources.size()) {
            sources.push_back({p.x, p.T, n, block, n_rows});
            n_rows += size_t(p.T);
        }
        source_of[i] = k;
    }
    if (acts.size() < n_rows) acts.resize(n_rows);
    QuantizedActivations* xs = acts.data();
    // x quantized: a few rows on this thread, many (a prompt's) by the pool, a row at a time.
    auto quantize_row = [&](size_t k, int t) {
        const Source& src = sources[k];
        quantize_activations(src.x + size_t(t) * size_t(src.n), src.n, xs[src.at + size_t(t)], src.block);
    };
    if (n_rows <= 16) {
        for (size_t k = 0; k < sources.size(); ++k)
            for (int t = 0; t < sources[k].T; ++t) quantize_row(k, t);
    } else {
        std::atomic<size_t> next_row{0};
        thread_pool().run([&](int, int) {
            size_t k = 0;
            for (size_t r; (r = next_row.fetch_add(1, std::memory_order_relaxed)) < n_rows;) {
                while (sources[k].at + size_t(sources[k].T) <= r) ++k;  // rows come in increasing order
                quantize_row(k, int(r - sources[k].at));
            }
        });
    }
    // Q8_0, Q4_0, MXFP4 products of several tokens: their x interleaved once for the row x token tiles
    // (dot_rows_tokens), one packing per x and weight type.
    thread_local std::vector<PackedTokens> t_packs;
    thread_local std::vector<size_t> t_pack_of;
    std::vector<PackedTokens>& packs = t_packs;
    std::vector<size_t>& pack_of = t_pack_of;
    pack_of.assign(ps.size(), SIZE_MAX);
    size_t n_packs = 0;
    for (size_t i = 0; i < ps.size(); ++i) {
        const DType d = ps[i].W->dtype;
        if (ps[i].T == 1 || !tokens_packed(d)) continue;
        for (size_t j = 0; j < i && pack_of[i] == SIZE_MAX; ++j)
            if (pack_of[j] != SIZE_MAX && source_of[j] == source_of[i] && ps[j].W->dtype == d) pack_of[i] = pack_of[j];
        if (pack_of[i] != SIZE_MAX) continue;
        if (packs.size() <= n_packs) packs.resize(n_packs + 1);
        pack_tokens(xs + sources[source_of[i]].at, ps[i].T, d, packs[n_packs]);
        pack_of[i] = n_packs++;
    }
    // The work: chunks of rows of every product.
    items.clear();
    for (size_t i = 0; i < ps.size(); ++i) {
        const Matrix& W = *ps[i].W;
        // One token: a quarter of the product's rows at a time (an expert's matrix is small: a
        // thread's share of it split again restarted the row stream too often); several: groups
        // of whole 16-row blocks of about 32 KiB, as matmul_quantized_tokens. Qwen3-30B-A3B's
        // experts (16 products of 768 x 2048 and 8 of 2048 x 768 a layer, Q4_K regrouped 16
        // rows, 24 layers' worth from memory, 2 threads, the two ways alternating in one process,
        // AVX2 host, 8 Dec 01:13 UTC, load ~9 from builds): a quarter of a thread's share 15.2,
        // 13.4, 13.5, 13.4 GB/s (medians of 9) against a quarter of the rows 15.7, 14.4, 14.4,
        // 14.3; whole matrices 14.7, 14.9, 13.7 (and no spare item for a late thread).
        const int64_t step = ps[i].T == 1 ? quant_chunk(W.rows, 1)
                                          : std::max<int64_t>(16, int64_t{32768} / std::max<int64_t>(1, int64_t(dtype_bytes(W.dtype, uint64_t(W.cols)))) / 16 * 16);
        for (int64_t r0 = 0; r0 < W.rows; r0 += step) items.push_back({i, r0, std::min(W.rows, r0 + step)});
    }
    std::atomic<size_t> next{0};
    thread_pool().run([&](int, int) {
        for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < items.size();) {
            const Item& it = items[k];
            const Product& p = ps[it.p];
            const QuantizedActivations* x = xs + sources[source_of[it.p]].at;
            if (p.T == 1) dot_rows(p.out, *p.W, *x, it.r0, it.r1);  // the one-token stream (same bits)
            else dot_rows_tokens(p.out, p.W->rows, *p.W, x, p.T, it.r0, it.r1, pack_of[it.p] == SIZE_MAX ? nullptr : &packs[pack_of[it.p]]);
        }
    });
}

}  // namespace journey
