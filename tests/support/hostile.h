// What the hostile-input tests (cli/test_hostile*.cpp) share: where the reproducers live, the
// limits the CLI runs under, and the directories they break.
#pragma once
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.h"
#include "files.h"

namespace journey::test {

// The small reproducers (tests/data/hostile/).
inline const std::filesystem::path kHostile = std::filesystem::path(JOURNEY_TEST_DATA) / "hostile";
// The address-space limit of each run, and the CPU time of those that must not grow with input.
constexpr long kLimitMib = 2048;
constexpr long kCpuSeconds = 20;

// The names in `dir`, sorted.
inline std::vector<std::string> listing(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

// A Llama Hugging Face directory journey converts (models/llama3 and its tokenizer files), d/name.
inline std::filesystem::path llama_dir(const TempDir& d, const std::string& name = "hf") {
    namespace fs = std::filesystem;
    const fs::path dir = d / name;
    fs::create_directories(dir);
    const fs::path models = fs::path(data_dir()) / "models" / "llama3" / "hf";
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(models / f, dir / f);
    for (const auto& e : fs::directory_iterator(fs::path(data_dir()) / "convert" / "llama3"))
        fs::copy_file(e.path(), dir / e.path().filename());
    for (const auto& e : fs::directory_iterator(dir))
        fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    return dir;
}

}  // namespace journey::test
