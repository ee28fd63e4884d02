// A small GGUF writer for tests: builds valid files, and, through its byte-level helpers and
// knobs, the malformed ones a reader must refuse.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "journey/formats/gguf_reader.h"

namespace journey::test {

// Little-endian byte sink.
struct Bytes {
    std::string buf;
    Bytes& u8(uint8_t v) { return raw(&v, 1); }
    Bytes& u32(uint32_t v) { return raw(&v, 4); }
    Bytes& i32(int32_t v) { return raw(&v, 4); }
    Bytes& u64(uint64_t v) { return raw(&v, 8); }
    Bytes& f32(float v) { return raw(&v, 4); }
    Bytes& str(const std::string& s) { u64(s.size()); return raw(s.data(), s.size()); }  // GGUF string
    Bytes& raw(const void* p, size_t n) { buf.append(static_cast<const char*>(p), n); return *this; }
    Bytes& pad_to(size_t alignment) { buf.resize((buf.size() + alignment - 1) / alignment * alignment, '\0'); return *this; }
};

struct GgufTensor {
    std::string name;
    std::vector<uint64_t> ne;               // innermost first, as GGUF stores it
    uint32_t type = gguf::kTypeF32;
    std::string data;                       // raw bytes
    std::optional<uint64_t> offset;         // override the computed offset
};

class GgufBuilder {
public:
    uint32_t magic = gguf::kMagic;
    uint32_t version = 3;
    uint32_t alignment = gguf::kDefaultAlignment;  // layout only; add general.alignment yourself

    // Each kv_* appends one key/value pair.
    GgufBuilder& kv_u32(const std::string& key, uint32_t v);
    GgufBuilder& kv_i32(const std::string& key, int32_t v);
    GgufBuilder& kv_f32(const std::string& key, float v);
    GgufBuilder& kv_bool(const std::string& key, bool v);
    GgufBuilder& kv_str(const std::string& key, const std::string& v);
    GgufBuilder& kv_strs(const std::string& key, const std::vector<std::string>& v);
    GgufBuilder& kv_f32s(const std::string& key, const std::vector<float>& v);
    GgufBuilder& kv_i32s(const std::string& key, const std::vector<int32_t>& v);
    // A raw value: type id and its already encoded bytes.
    GgufBuilder& kv_raw(const std::string& key, gguf::ValueType type, const Bytes& value);

    GgufBuilder& tensor(GgufTensor t);
    // A contiguous F32 tensor filled with start, start + 1, ...
    GgufBuilder& tensor_f32(const std::string& name, std::vector<uint64_t> ne, float start = 0.0f);

    std::string build() const;

private:
    std::vector<std::string> kvs_;  // encoded key + type + value
    std::vector<GgufTensor> tensors_;
};

// A per-process temporary directory for test files (created on first use).
std::filesystem::path temp_dir();
// Writes bytes to temp_dir() / name and returns the path.
std::filesystem::path write_temp(const std::string& name, const std::string& bytes);

}  // namespace journey::test
