// journey on GGUF files of the quantized types: llama-quantize's files run; a type journey does
// not compute with is refused in one line naming the tensor and the type, exit 2.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "gguf_writer.h"

using namespace journey::test;
using Catch::Matchers::Contains;

TEST_CASE("next on a Q4_K_M file from llama-quantize", "[cli][gguf][quant]") {
    const std::string gguf = std::string(JOURNEY_TEST_DATA) + "/quant/tinyllama-Q4_K_M.gguf";
    const auto r = run_journey({"next", "-m", gguf, "--json", "-p", "hello"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["top"].size() == 10);
}

TEST_CASE("a GGUF tensor of a type journey does not compute with: one line, exit 2", "[cli][gguf][quant]") {
    GgufBuilder b;
    b.kv_str("general.architecture", "llama");
    b.tensor({"blk.0.ffn_up.weight", {256, 2}, 40, std::string(2 * 4 * 36, '\0'), std::nullopt});  // NVFP4
    const auto path = write_temp("nvfp4.gguf", b.build());
    const auto r = run_journey({"info", "-m", path.string()});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Contains("tensor 'blk.0.ffn_up.weight': type NVFP4 is not supported"));
    CHECK_THAT(r.err, Contains("requantize to Q4_K_M"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
