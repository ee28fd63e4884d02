// Shared by the libFuzzer harnesses (one per parser, built by scripts/fuzz.sh with clang under
// ASan + UBSan). A harness feeds the input to one reader as an untrusted file would reach it.
// A refusal (journey::Error) is the expected answer to most inputs; anything else that escapes
// (std::bad_alloc, nlohmann's exceptions), a sanitizer report or a hang is a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "journey/errors.h"

namespace journey::fuzz {

// A directory of this process's own, for the files a reader insists on opening by path.
inline const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("journey-fuzz-" + std::to_string(getpid()));
        std::filesystem::create_directories(d);
        std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
        return d;
    }();
    return dir;
}

inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
    const auto path = scratch_dir() / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
}

inline std::string_view as_text(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// Runs f; a journey::Error (a refusal with a message) is a correct answer.
template <class F>
void refusal_ok(F&& f) {
    try {
        f();
    } catch (const journey::Error&) {
    }
}

// A property that must hold for every input: a finding when it does not.
inline void require(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "property violated: %s\n", what);
        std::abort();
    }
}

}  // namespace journey::fuzz
