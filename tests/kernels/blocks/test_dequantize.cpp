// Dequantization of every quantized type, bit for bit against rows that gguf-py's numpy code
// dequantized from llama-quantize's own files (ggml's to_float gave the same bits): see
// tests/data/README.md, "quant".
#include <catch2/catch.hpp>

#include <bit>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/formats/ggml_types.h"
#include "journey/kernels/to_float.h"
#include "journey/kernels/blocks/dequantize.h"
#include "quant_blocks.h"

using namespace journey;

namespace {

nlohmann::json dequant_rows() {
    return nlohmann::json::parse(std::ifstream(std::string(JOURNEY_TEST_DATA) + "/quant/dequant_rows.json"))["rows"];
}

using journey::test::dtype_named;
using journey::test::from_hex;

}  // namespace

TEST_CASE("dequantize_row: every quantized type bit-exact against gguf-py / ggml", "[quant][dequant]") {
    std::set<std::string> types;
    for (const auto& row : dequant_rows()) {
        const std::string type = row["type"];
        INFO(row["file"].get<std::string>() << " " << row["tensor"].get<std::string>() << " " << type);
        const DType t = dtype_named(type);
        const std::vector<float> want = row["row0"].get<std::vector<float>>();  // exact floats as decimals
        const auto bytes = from_hex(row["blocks_hex"]);
        const auto n = int64_t(want.size());
        REQUIRE(bytes.size() == dtype_bytes(t, uint64_t(n)));
        // Unaligned on purpose: blocks inside a mapping sit at any address.
        std::vector<unsigned char> shifted(bytes.size() + 1);
        std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
        std::vector<float> got(static_cast<size_t>(n));
        dequantize_row(t, shifted.data() + 1, got.data(), n);
        int mismatches = 0;
        for (int64_t i = 0; i < n; ++i)
            if (std::bit_cast<uint32_t>(got[size_t(i)]) != std::bit_cast<uint32_t>(want[size_t(i)])) {
                if (++mismatches <= 3) UNSCOPED_INFO("element " << i << ": " << got[size_t(i)] << " != " << want[size_t(i)]);
            }
        CHECK(mismatches == 0);
        // to_float (what the kernels call) is the same conversion
        std::vector<float> via(static_cast<size_t>(n));
        to_float(via.data(), t, reinterpret_cast<const std::byte*>(bytes.data()), n);
        CHECK(std::memcmp(via.data(), got.data(), via.size() * 4) == 0);
        types.insert(type);
    }
    CHECK(types == std::set<std::string>{"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                                         "Q6_K", "IQ4_NL", "IQ4_XS"});
}

TEST_CASE("dequantize_row: a row that is not whole blocks is refused", "[quant][dequant]") {
    std::vector<unsigned char> block(210);
    std::vector<float> out(512);
    CHECK_THROWS_AS(dequantize_row(DType::Q6_K, block.data(), out.data(), 128), std::invalid_argument);
    CHECK_THROWS_AS(dequantize_row(DType::IQ4_NL, block.data(), out.data(), 48), std::invalid_argument);
}
