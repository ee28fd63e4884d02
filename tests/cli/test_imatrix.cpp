// journey imatrix and quantize --imatrix against llama.cpp's own tools (tests/data/README.md,
// "quant/imatrix/"): llama-imatrix's imatrix.gguf of base-F32.gguf on the fixture's text, and
// llama-quantize --imatrix's files of the same base (sha256 per file), for every type journey
// quantize writes (quantize_expect.json: the types whose ggml quantizer ignores the weights too,
// as the metadata keys still differ).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "files.h"
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
}

namespace {
// Runs journey in dir (llama-quantize wrote the --imatrix argument, "imatrix.gguf", into its files).
RunResult run_in(const fs::path& dir, const std::vector<std::string>& args) {
    const fs::path here = fs::current_path();
    fs::current_path(dir);
    RunResult r = run_journey(args);
    fs::current_path(here);
    return r;
}
}  // namespace

TEST_CASE("quantize --imatrix: llama-quantize's files byte for byte", "[imatrix]") {
    const auto expect = nlohmann::json::parse(std::ifstream(imatrix_dir() / "quantize_expect.json"));
    const fs::path dir = temp_dir() / "quantize-imatrix";
    fs::create_directories(dir);
    fs::copy_file(imatrix_dir() / "imatrix.gguf", dir / "imatrix.gguf", fs::copy_options::overwrite_existing);
    for (const auto& [key, want] : expect.items()) {
        INFO("file " << key);
        const std::string type = want.value("type", key);  // a key such as "IQ4_NL (no imatrix)" names its type
        const std::string out = "out-" + type + ".gguf";
        std::vector<std::string> args = {"quantize", base_f32().string(), out, type};
        if (want["imatrix"].get<bool>()) args.insert(args.end(), {"--imatrix", "imatrix.gguf"});
        const RunResult r = run_in(dir, args);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const std::string bytes = slurp(dir / out);
        CHECK(bytes.size() == want["bytes"].get<size_t>());
        CHECK(fnv1a64(bytes) == want["file_fnv1a64"].get<std::string>());
        const fs::path copy = imatrix_dir() / want["file"].get<std::string>();
        if (fs::exists(copy)) CHECK(bytes == slurp(copy));  // the files kept whole: byte for byte
        fs::remove(dir / out);
    }
}

TEST_CASE("quantize: the types that need an importance matrix are refused without one", "[imatrix]") {
    for (const char* type : {"IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "IQ1_M", "Q2_K_S"}) {
        INFO("type " << type);
        // A name of its own, removed first: temp_dir() is shared by the whole suite, and another
        // test writes a "refused.gguf" of its own there.
        const fs::path out = temp_dir() / "needs-imatrix.gguf";
        fs::remove(out);
        const RunResult r = run_journey({"quantize", base_f32().string(), out.string(), type});
        CHECK(r.exit_code != 0);
        CHECK(r.err.find("requires an importance matrix") != std::string::npos);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!fs::exists(out));
    }
    // A malformed --imatrix: one line naming the file.
    const fs::path bad = temp_dir() / "bad-imatrix.dat";
    std::ofstream(bad) << "not an imatrix";
    const RunResult r = run_journey({"quantize", base_f32().string(), (temp_dir() / "x.gguf").string(), "IQ2_XXS", "--imatrix", bad.string()});
    CHECK(r.exit_code != 0);
    CHECK(r.err.find(bad.string()) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
