// The GGUF writer (gguf_writer.h) and the typed metadata reader that `journey quantize` copies
// key/values with.
#include "journey/formats/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <unistd.h>

#include "journey/errors.h"
#include "journey/formats/ggml_types.h"
#include "journey/formats/mapped_file.h"
#include "journey/formats/output_file.h"

namespace journey {
namespace {

using gguf::ValueType;

constexpr uint64_t kAlignment = gguf::kDefaultAlignment;

void put_raw(std::string& s, const void* p, size_t n) { s.append(static_cast<const char*>(p), n); }
template <typename T>
void put(std::string& s, T v) {
    put_raw(s, &v, sizeof v);
}
void put_str(std::string& s, const std::string& v) {
    put<uint64_t>(s, v.size());
    s += v;
}

// Walks the metadata of a file read_gguf accepted, keeping each value's bytes.
class KvCursor {
public:
    explicit KvCursor(const MappedFile& f) : f_(f), p_(reinterpret_cast<const unsigned char*>(f.data())) {}
    template <typename T>
    T read() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, p_ + pos_, sizeof v);
        pos_ += sizeof v;
        return v;
    }
    std::string read_string() {
        const auto n = read<uint64_t>();
        need(n);
        std::string s(reinterpret_cast<const char*>(p_ + pos_), size_t(n));
        pos_ += size_t(n);
        return s;
    }
    void skip_value(uint32_t type, int depth = 0) {
        switch (ValueType(type)) {
            case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: need(1), pos_ += 1; return;
            case ValueType::UINT16: case ValueType::INT16: need(2), pos_ += 2; return;
            case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: need(4), pos_ += 4; return;
            case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: need(8), pos_ += 8; return;
            case ValueType::STRING: read_string(); return;
            case ValueType::ARRAY: {
                if (depth > 16) fail();
                const auto elem = read<uint32_t>();
                const auto n = read<uint64_t>();
                if (n > f_.size()) fail();
                for (uint64_t i = 0; i < n; ++i) skip_value(elem, depth + 1);
                return;
            }
        }
        fail();
    }
    size_t pos() const { return pos_; }
    const unsigned char* at(size_t pos) const { return p_ + pos; }

private:
    void need(uint64_t n) const {
        if (n > f_.size() - pos_) fail();
    }
    [[noreturn]] void fail() const { throw ModelError(f_.path().string() + ": invalid GGUF file: malformed metadata"); }
    const MappedFile& f_;
    const unsigned char* p_;
    size_t pos_ = 0;
};

}  // namespace

std::vector<GgufKv> read_gguf_kvs(const std::filesystem::path& path) {
    MappedFile file(path);
    KvCursor c(file);
    c.read<uint32_t>();  // magic
    c.read<uint32_t>();  // version
    c.read<uint64_t>();  // tensor count
    const auto n_kv = c.read<uint64_t>();
    std::vector<GgufKv> kvs;
    for (uint64_t i = 0; i < n_kv; ++i) {
        GgufKv kv;
        kv.key = c.read_string();
        const auto type = c.read<uint32_t>();
        kv.type = ValueType(type);
        const size_t start = c.pos();
        c.skip_value(type);
        kv.value.assign(reinterpret_cast<const char*>(c.at(start)), c.pos() - start);
        kvs.push_back(std::move(kv));
    }
    return kvs;
}

void GgufWriter::set(GgufKv kv) {
    for (GgufKv& k : kvs_)
        if (k.key == kv.key) {
            k = std::move(kv);
            return;
        }
    kvs_.push_back(std::move(kv));
}

void GgufWriter::remove(const std::string& key) {
    std::erase_if(kvs_, [&](const GgufKv& k) { return k.key == key; });
}

bool GgufWriter::has(const std::string& key) const {
    for (const GgufKv& k : kvs_)
        if (k.key == key) return true;
    return false;
}

void GgufWriter::set_u32(const std::string& key, uint32_t v) {
    std::string s;
    put(s, v);
    set({key, ValueType::UINT32, s});
}
void GgufWriter::set_i32(const std::string& key, int32_t v) {
    std::string s;
    put(s, v);
    set({key, ValueType::INT32, s});
}
void GgufWriter::set_f32(const std::string& key, float v) {
    std::string s;
    put(s, v);
    set({key, ValueType::FLOAT32, s});
}
void GgufWriter::set_bool(const std::string& key, bool v) { set({key, ValueType::BOOL, std::string(1, v ? '\1' : '\0')}); }
void GgufWriter::set_str(const std::string& key, const std::string& v) {
    std::string s;
    put_str(s, v);
    set({key, ValueType::STRING, s});
}
void GgufWriter::set_strs(const std::string& key, const std::vector<std::string>& v) {
    std::string s;
    put(s, uint32_t(ValueType::STRING));
    put<uint64_t>(s, v.size());
    for (const auto& x : v) put_str(s, x);
    set({key, ValueType::ARRAY, s});
}
void GgufWriter::set_f32s(const std::string& key, const std::vector<float>& v) {
    std::string s;
    put(s, uint32_t(ValueType::FLOAT32));
    put<uint64_t>(s, v.size());
    put_raw(s, v.data(), v.size() * 4);
    set({key, ValueType::ARRAY, s});
}
void GgufWriter::set_i32s(const std::string& key, const std::vector<int32_t>& v) {
    std::string s;
    put(s, uint32_t(ValueType::INT32));
    put<uint64_t>(s, v.size());
    put_raw(s, v.data(), v.size() * 4);
    set({key, ValueType::ARRAY, s});
}
void GgufWriter::set_bools(const std::string& key, const std::vector<bool>& v) {
    std::string s;
    put(s, uint32_t(ValueType::BOOL));
    put<uint64_t>(s, v.size());
    for (bool x : v) s.push_back(x ? '\1' : '\0');
    set({key, ValueType::ARRAY, s});
}

void GgufWriter::add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape) {
    if (shape.empty() || shape.size() > gguf::kMaxDims) throw std::invalid_argument("tensor '" + name + "': bad rank");
    uint64_t n = 1;
    for (int64_t d : shape) {
        if (d <= 0) throw std::invalid_argument("tensor '" + name + "': bad shape");
        n *= uint64_t(d);
    }
    if (uint64_t(shape.back()) % dtype_block(type) != 0)
        throw std::invalid_argument("tensor '" + name + "': row length " + std::to_string(shape.back()) +
                                    " is not a whole number of " + std::string(dtype_name(type)) + " blocks");
    tensors_.push_back({name, type, shape, dtype_bytes(type, n)});
}

void GgufWriter::write(const std::filesystem::path& path, const Fill& fill, const std::function<void(size_t)>& on_tensor,
                       const std::function<void(const std::filesystem::path&)>& check) const {
    std::string head;
    put<uint32_t>(head, gguf::kMagic);
    put<uint32_t>(head, 3);
    put<uint64_t>(head, tensors_.size());
    put<uint64_t>(head, kvs_.size());
    for (const GgufKv& kv : kvs_) {
        put_str(head, kv.key);
        put<uint32_t>(head, uint32_t(kv.type));
        head += kv.value;
    }
    uint64_t offset = 0;
    auto pad = [](uint64_t x) { return (x + kAlignment - 1) / kAlignment * kAlignment; };
    for (const Tensor& t : tensors_) {
        put_str(head, t.name);
        put<uint32_t>(head, uint32_t(t.shape.size()));
        for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) put<uint64_t>(head, uint64_t(*d));  // innermost first
        put<uint32_t>(head, ggml_type_of(t.type).id);
        put<uint64_t>(head, offset);
        offset = pad(offset + t.nbytes);
    }
    head.resize(size_t(pad(head.size())), '\0');

    OutputFile out(path);
    out.write(head.data(), head.size());
    std::vector<std::byte> buf;
    const char zeros[kAlignment] = {};
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const Tensor& t = tensors_[i];
        buf.assign(t.nbytes, std::byte{0});
        fill(i, buf.data(), buf.size());
        out.write(buf.data(), buf.size());
        out.write(zeros, size_t(pad(t.nbytes) - t.nbytes));
        if (on_tensor) on_tensor(i);
    }
    out.commit(check);
}

}  // namespace journey
