// Every family fixture in tests/data/models that journey runs (the tokenizer-only and reference
// folders aside), with the expectation file whose first case gives the prompt's ids, and where
// its unpacked model files are: the HF directory and every F32 GGUF the converter made of it.
// Shared by the trace tests that must hold on every family (attribution, patching).
#pragma once
#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace journey::test {

struct Fixture {
    const char* family;
    const char* expect;
};
inline const Fixture kFixtures[] = {
    {"llama3", "expect.json"},  {"qwen2", "expect.json"},    {"qwen3", "expect.json"},
    {"smollm2", "expect.json"}, {"smollm3", "expect.json"},  {"mistral", "expect.json"},
    {"mistral3", "expect.json"}, {"phi3", "expect.json"},    {"phi35", "expect-short.json"},
    {"phi4-mini", "expect.json"}, {"granite", "expect.json"}, {"olmo2", "expect.json"},
    {"rope-llama", "expect-linear.json"}, {"gpt2", "expect.json"}, {"gptneox", "expect.json"},
    {"gemma2", "expect.json"},  {"gemma3", "expect.json"},   {"gemma4", "expect.json"},
    {"mixtral", "expect.json"}, {"olmoe", "expect.json"},    {"qwen3moe", "expect.json"},
    {"gpt-oss", "expect.json"}, {"qwen35", "expect.json"},   {"qwen35moe", "expect.json"},
    {"mistral-small", "expect.json"}, {"qwen35hv", "expect.json"}, {"qwen3next", "expect.json"},
};

inline std::string fixture_dir(const std::string& family) { return std::string(JOURNEY_TEST_DATA) + "/models/" + family; }

// The fixture's HF directory and every F32 GGUF the converter made of it (rope-llama: three).
inline std::vector<std::string> fixture_paths(const std::string& family) {
    std::vector<std::string> paths;
    if (std::filesystem::is_directory(fixture_dir(family) + "/hf")) paths.push_back(fixture_dir(family) + "/hf");
    std::vector<std::string> ggufs;
    for (const auto& e : std::filesystem::directory_iterator(fixture_dir(family)))
        if (e.path().extension() == ".gguf" && e.path().stem().string().ends_with("-F32")) ggufs.push_back(e.path().string());
    std::sort(ggufs.begin(), ggufs.end());
    paths.insert(paths.end(), ggufs.begin(), ggufs.end());
    return paths;
}

inline bool fixture_in(std::string_view family, std::initializer_list<std::string_view> set) {
    return std::find(set.begin(), set.end(), family) != set.end();
}

inline const std::initializer_list<std::string_view> kMoeFamilies = {"mixtral", "olmoe", "qwen3moe", "gpt-oss"};
inline const std::initializer_list<std::string_view> kGemmaHybridFamilies = {"gemma2", "gemma3", "gemma4", "qwen35",
                                                                        "qwen35moe", "qwen35hv", "qwen3next"};

}  // namespace journey::test
