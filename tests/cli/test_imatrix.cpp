// journey imatrix and quantize --imatrix against llama.cpp's own tools (tests/data/README.md,
// "quant/imatrix/"): llama-imatrix's imatrix.gguf of base-F32.gguf on the fixture's text, and
// llama-quantize --imatrix's files of the same base (sha256 per file).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "cli_run.h"
#include "gguf_writer.h"
#include "journey/convert/imatrix.h"
#include "journey/formats/gguf_reader.h"

using namespace journey;
using namespace journey::test;
namespace fs = std::filesystem;

namespace {
fs::path imatrix_dir() { return fs::path(data_dir()) / "quant" / "imatrix"; }
fs::path base_f32() { return fs::path(data_dir()) / "convert" / "base-F32.gguf"; }
}  // namespace

TEST_CASE("imatrix: llama-imatrix's importance matrix of base-F32 on the fixture text", "[imatrix]") {
    const fs::path out = temp_dir() / "imatrix-run.gguf";
    const std::string text = (imatrix_dir() / "imatrix-text.txt").string();
    const RunResult r = run_journey({"imatrix", "-m", base_f32().string(), "-f", text, "-o", out.string(), "-c", "512"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.empty());
    CHECK(r.err.find("chunk 32/32") != std::string::npos);
    const Imatrix got = read_imatrix(out), want = read_imatrix(imatrix_dir() / "imatrix.gguf");
    CHECK(want.datasets == std::vector<std::string>{"imatrix-text.txt"});
    CHECK(got.datasets == std::vector<std::string>{text});  // the -f argument, as llama-imatrix stores it
    CHECK(got.chunk_count == want.chunk_count);
    CHECK(got.chunk_size == want.chunk_size);
    REQUIRE(got.entries.size() == want.entries.size());
    double worst = 0;
    for (const auto& [name, w] : want.entries) {
        INFO("entry " << name);
        auto it = got.entries.find(name);
        REQUIRE(it != got.entries.end());
        CHECK(it->second.counts == w.counts);
        REQUIRE(it->second.sums.size() == w.sums.size());
        for (size_t i = 0; i < w.sums.size(); ++i)
            worst = std::max(worst, std::fabs(double(it->second.sums[i]) - w.sums[i]) / std::fabs(double(w.sums[i])));
    }
    // float sums of 16384 squares in another order, llama.cpp's own kernels (F16 KV cache as its
    // default): 3.5e-5 relative measured
    CHECK(worst < 2e-4);
    // the layout is llama-imatrix's: the same size less the longer dataset name
    CHECK(fs::file_size(out) - text.size() == fs::file_size(imatrix_dir() / "imatrix.gguf") - std::string("imatrix-text.txt").size());
}
