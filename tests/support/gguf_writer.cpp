#include "gguf_writer.h"

#include <fstream>
#include <unistd.h>

namespace journey::test {

using gguf::ValueType;

GgufBuilder& GgufBuilder::kv_raw(const std::string& key, ValueType type, const Bytes& value) {
    Bytes b;
    b.str(key).u32(uint32_t(type)).raw(value.buf.data(), value.buf.size());
    kvs_.push_back(b.buf);
    return *this;
}

GgufBuilder& GgufBuilder::kv_u32(const std::string& key, uint32_t v) { return kv_raw(key, ValueType::UINT32, Bytes().u32(v)); }
GgufBuilder& GgufBuilder::kv_i32(const std::string& key, int32_t v) { return kv_raw(key, ValueType::INT32, Bytes().i32(v)); }
GgufBuilder& GgufBuilder::kv_f32(const std::string& key, float v) { return kv_raw(key, ValueType::FLOAT32, Bytes().f32(v)); }
GgufBuilder& GgufBuilder::kv_bool(const std::string& key, bool v) { return kv_raw(key, ValueType::BOOL, Bytes().u8(v)); }
GgufBuilder& GgufBuilder::kv_str(const std::string& key, const std::string& v) { return kv_raw(key, ValueType::STRING, Bytes().str(v)); }

GgufBuilder& GgufBuilder::kv_strs(const std::string& key, const std::vector<std::string>& v) {
    Bytes b;
    b.u32(uint32_t(ValueType::STRING)).u64(v.size());
    for (const auto& s : v) b.str(s);
    return kv_raw(key, ValueType::ARRAY, b);
}

GgufBuilder& GgufBuilder::kv_f32s(const std::string& key, const std::vector<float>& v) {
    Bytes b;
    b.u32(uint32_t(ValueType::FLOAT32)).u64(v.size());
    for (float x : v) b.f32(x);
    return kv_raw(key, ValueType::ARRAY, b);
}

GgufBuilder& GgufBuilder::kv_i32s(const std::string& key, const std::vector<int32_t>& v) {
    Bytes b;
    b.u32(uint32_t(ValueType::INT32)).u64(v.size());
    for (int32_t x : v) b.i32(x);
    return kv_raw(key, ValueType::ARRAY, b);
}

GgufBuilder& GgufBuilder::tensor(GgufTensor t) {
    tensors_.push_back(std::move(t));
    return *this;
}

GgufBuilder& GgufBuilder::tensor_f32(const std::string& name, std::vector<uint64_t> ne, float start) {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    Bytes data;
    for (uint64_t i = 0; i < n; ++i) data.f32(start + float(i));
    return tensor({name, std::move(ne), gguf::kTypeF32, data.buf, std::nullopt});
}

std::string GgufBuilder::build() const {
    Bytes b;
    b.u32(magic).u32(version).u64(tensors_.size()).u64(kvs_.size());
    for (const auto& kv : kvs_) b.raw(kv.data(), kv.size());
    // Lay the data out in order, each tensor aligned.
    Bytes data;
    for (const auto& t : tensors_) {
        data.pad_to(alignment);
        b.str(t.name).u32(uint32_t(t.ne.size()));
        for (uint64_t d : t.ne) b.u64(d);
        b.u32(t.type).u64(t.offset.value_or(data.buf.size()));
        data.raw(t.data.data(), t.data.size());
    }
    if (!tensors_.empty()) b.pad_to(alignment);
    b.raw(data.buf.data(), data.buf.size());
    return b.buf;
}

namespace {
// Created on first use, removed when the test process exits.
struct ProcessTempDir {
    std::filesystem::path path;
    ProcessTempDir() : path(std::filesystem::temp_directory_path() / ("journey-tests-" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(path);
    }
    ~ProcessTempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};
}  // namespace

std::filesystem::path temp_dir() {
    static const ProcessTempDir dir;
    return dir.path;
}

std::filesystem::path write_temp(const std::string& name, const std::string& bytes) {
    auto path = temp_dir() / name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
}

}  // namespace journey::test
