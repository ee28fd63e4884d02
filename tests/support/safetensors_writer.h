// A tiny safetensors writer for tests: build well-formed files, then break them on purpose.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "files.h"

namespace journey::test {

struct FakeTensor {
    std::string name;
    std::string dtype = "F32";
    std::vector<int64_t> shape;
    std::vector<float> values;  // written as F32 (for other dtypes, raw bytes: see raw)
    std::string raw;            // used instead of values when not empty
};

inline std::string f32_bytes(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

// Header JSON and data section for the tensors, laid out back to back.
inline std::pair<nlohmann::json, std::string> layout(const std::vector<FakeTensor>& ts) {
    nlohmann::json h = nlohmann::json::object();
    h["__metadata__"] = {{"format", "pt"}};
    std::string data;
    for (const auto& t : ts) {
        const std::string bytes = t.raw.empty() ? f32_bytes(t.values) : t.raw;
        h[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
        data += bytes;
    }
    return {h, data};
}

// Writes 8-byte length + header (padded with spaces to 8 bytes) + data.
inline void write_safetensors(const std::filesystem::path& p, const std::string& header, const std::string& data,
                              uint64_t claimed_len = UINT64_MAX) {
    std::string h = header;
    while ((8 + h.size()) % 8) h += ' ';
    const uint64_t n = claimed_len == UINT64_MAX ? h.size() : claimed_len;
    std::ofstream out(p, std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << h << data;
}

inline void write_safetensors(const std::filesystem::path& p, const std::vector<FakeTensor>& ts) {
    auto [h, data] = layout(ts);
    write_safetensors(p, h.dump(), data);
}

}  // namespace journey::test
