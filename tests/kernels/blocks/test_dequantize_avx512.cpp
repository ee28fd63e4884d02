// The AVX-512 block dequantization (blocks/dequantize.h, what gemm's panels use) against the scalar
// one (dequantize_block, itself checked bit for bit against gguf-py / ggml in
// test_dequantize.cpp): the same bits on random blocks, whose random bytes reach every bit pattern
// of the quants, scales and mins (and of d / dmin: infinities, NaNs, subnormals), and on the
// fixture's rows from llama-quantize's files.
#include <bit>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "journey/formats/ggml_types.h"
#include "journey/kernels/blocks/dequantize.h"
#include "journey/kernels/gemv.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

// Equal bits, or both NaN (a NaN's payload is not a value; ggml makes no promise about it).
size_t mismatches(const std::vector<float>& a, const std::vector<float>& b) {
    size_t bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
        bad += std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i]) && !(a[i] != a[i] && b[i] != b[i]);
    return bad;
}

using journey::test::from_hex;

}  // namespace

TEST_CASE("AVX-512 dequantization gives dequantize_block's bits, on random blocks", "[quant][dequant][fast]") {
    if (!gemm_fast_available()) {
        WARN("no AVX-512 here (or forced portable): the vector dequantization is not run");
        return;
    }
    std::mt19937 rng(41);
    std::uniform_int_distribution<int> byte(0, 255);
    int vector_types = 0;
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                    DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS}) {
        INFO(dtype_name(t));
        vector_types += dequant_avx512_has(t);
        const int64_t nblocks = 37, block = int64_t(dtype_block(t));
        const size_t bb = dtype_bytes(t, uint64_t(block));
        std::vector<unsigned char> bytes(bb * size_t(nblocks) + 1);  // +1: unaligned, as in a mapping
        for (auto& b : bytes) b = static_cast<unsigned char>(byte(rng));
        const unsigned char* src = bytes.data() + 1;
        std::vector<float> want(size_t(nblocks * block)), got(want.size(), -1.0f);
        for (int64_t i = 0; i < nblocks; ++i) dequantize_row(t, src + size_t(i) * bb, want.data() + i * block, block);  // one block at a time: dequantize_block
        dequantize_blocks_avx512(t, src, got.data(), nblocks);
        CHECK(mismatches(got, want) == 0);
    }
    CHECK(vector_types == 5);  // Q8_0, Q4_0, Q4_K, Q5_K, Q6_K; the others go through dequantize_block
}

TEST_CASE("AVX-512 dequantization of the fixture's rows equals gguf-py / ggml", "[quant][dequant][fast]") {
    if (!gemm_fast_available()) {
        WARN("no AVX-512 here (or forced portable): the vector dequantization is not run");
        return;
    }
    const auto rows = nlohmann::json::parse(std::ifstream(std::string(JOURNEY_TEST_DATA) + "/quant/dequant_rows.json"))["rows"];
    int vector_rows = 0;
    for (const auto& row : rows) {
        const std::string type = row["type"];
        INFO(row["file"].get<std::string>() << " " << row["tensor"].get<std::string>() << " " << type);
        DType t = DType::F32;
        for (uint32_t id = 0; const GgmlType* g = ggml_type(id); ++id)
            if (g->name == type && g->dtype) t = *g->dtype;
        REQUIRE(t != DType::F32);
        const std::vector<float> want = row["row0"].get<std::vector<float>>();
        const auto bytes = from_hex(row["blocks_hex"]);
        REQUIRE(bytes.size() == dtype_bytes(t, uint64_t(want.size())));
        std::vector<float> got(want.size());
        dequantize_blocks_avx512(t, bytes.data(), got.data(), int64_t(want.size()) / int64_t(dtype_block(t)));
        CHECK(mismatches(got, want) == 0);
        vector_rows += dequant_avx512_has(t);
    }
    CHECK(vector_rows >= 10);  // two tensors of each of the five vector types
}

namespace {
// Forces the AVX2 kernels (gemv.h) for a test's scope, even where AVX-512 is present.
struct DequantAvx2Scope {
    DequantAvx2Scope() { force_avx2_kernels(true); }
    ~DequantAvx2Scope() { force_avx2_kernels(false); }
};
}  // namespace

TEST_CASE("AVX2 dequantization gives dequantize_block's bits, on random blocks and the fixture's rows", "[quant][dequant][fast]") {
    DequantAvx2Scope scope;
    if (std::string(kernel_isa()) != "avx2") {
        WARN("no AVX2, FMA and F16C here (or forced portable): the AVX2 dequantization is not run");
        return;
    }
    std::mt19937 rng(43);
    std::uniform_int_distribution<int> byte(0, 255);
    int vector_types = 0;
    for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_K, DType::Q6_K, DType::IQ4_NL}) {
        INFO(dtype_name(t));
        vector_types += dequant_avx2_has(t);
        const int64_t nblocks = 37, block = int64_t(dtype_block(t));
        const size_t bb = dtype_bytes(t, uint64_t(block));
        std::vector<unsigned char> bytes(bb * size_t(nblocks) + 1);  // +1: unaligned, as in a mapping
        for (auto& b : bytes) b = static_cast<unsigned char>(byte(rng));
        const unsigned char* src = bytes.data() + 1;
        std::vector<float> want(size_t(nblocks * block)), got(want.size(), -1.0f);
        for (int64_t i = 0; i < nblocks; ++i) dequantize_row(t, src + size_t(i) * bb, want.data() + i * block, block);
        dequantize_blocks_avx2(t, src, got.data(), nblocks);
        CHECK(mismatches(got, want) == 0);
    }
    CHECK(vector_types == 3);  // Q8_0, Q4_0, Q6_K; the others go through dequantize_block
    const auto rows = nlohmann::json::parse(std::ifstream(std::string(JOURNEY_TEST_DATA) + "/quant/dequant_rows.json"))["rows"];
    int vector_rows = 0;
    for (const auto& row : rows) {
        const std::string type = row["type"];
        INFO(row["file"].get<std::string>() << " " << row["tensor"].get<std::string>() << " " << type);
        DType t = DType::F32;
        for (uint32_t id = 0; const GgmlType* g = ggml_type(id); ++id)
            if (g->name == type && g->dtype) t = *g->dtype;
        REQUIRE(t != DType::F32);
        const std::vector<float> want = row["row0"].get<std::vector<float>>();
        const auto bytes = from_hex(row["blocks_hex"]);
        std::vector<float> got(want.size());
        dequantize_blocks_avx2(t, bytes.data(), got.data(), int64_t(want.size()) / int64_t(dtype_block(t)));
        CHECK(mismatches(got, want) == 0);
        vector_rows += dequant_avx2_has(t);
    }
    CHECK(vector_rows >= 6);  // two tensors of each of the three vector types
}
