// Writing GGUF files (the layout is in gguf_reader.h): metadata key/values with their exact GGUF
// types, a tensor table, then each tensor's data, produced one tensor at a time by a callback so
// that a model is never held in memory whole. The file appears under its name only when complete:
// it is written to a temporary name beside it and renamed at the end (removed on any failure).
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "journey/formats/gguf_reader.h"
#include "journey/formats/tensor.h"

namespace journey {

// One metadata entry: its GGUF value type and the value's bytes as the file stores them.
struct GgufKv {
    std::string key;
    gguf::ValueType type;
    std::string value;  // encoded (strings with their u64 length, arrays with element type and count)
};

// The metadata of a GGUF file with the types as stored (read_gguf's JSON loses u32 vs i32 etc.),
// in file order. The file must already have been read by read_gguf (which checks it).
std::vector<GgufKv> read_gguf_kvs(const std::filesystem::path& path);

class GgufWriter {
public:
    // Metadata: each set_* replaces the key's value in place if it exists, else appends it.
    void set_u32(const std::string& key, uint32_t v);
    void set_i32(const std::string& key, int32_t v);
    void set_f32(const std::string& key, float v);
    void set_bool(const std::string& key, bool v);
    void set_str(const std::string& key, const std::string& v);
    void set_strs(const std::string& key, const std::vector<std::string>& v);
    void set_f32s(const std::string& key, const std::vector<float>& v);
    void set_i32s(const std::string& key, const std::vector<int32_t>& v);
    void set_bools(const std::string& key, const std::vector<bool>& v);
    void set(GgufKv kv);
    void remove(const std::string& key);
    bool has(const std::string& key) const;
    const std::vector<GgufKv>& kvs() const { return kvs_; }

    // A tensor: shape outermost first (as TensorInfo); its bytes follow from type and shape.
    // Throws std::invalid_argument when the row is not a whole number of the type's blocks.
    void add_tensor(const std::string& name, DType type, const std::vector<int64_t>& shape);
    size_t n_tensors() const { return tensors_.size(); }

    // Fills the nbytes at out with tensor i's data (called once per tensor, in order).
    using Fill = std::function<void(size_t i, std::byte* out, size_t nbytes)>;
    // Writes the file (alignment 32); on_tensor(i) runs after tensor i is written (progress).
    // Throws ModelError naming the file on an I/O failure; a partial file never remains.
    // `check` reads the complete file at its temporary path before it is renamed into place.
    void write(const std::filesystem::path& path, const Fill& fill, const std::function<void(size_t)>& on_tensor = {},
               const std::function<void(const std::filesystem::path&)>& check = {}) const;

private:
    struct Tensor {
        std::string name;
        DType type;
        std::vector<int64_t> shape;
        size_t nbytes;
    };
    std::vector<GgufKv> kvs_;
    std::vector<Tensor> tensors_;
};

}  // namespace journey
