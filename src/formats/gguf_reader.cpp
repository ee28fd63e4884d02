// GGUF reader: parse the header, metadata and tensor table of an untrusted file (see
// include/journey/formats/gguf_reader.h for the layout) into the neutral ModelFile description.
#include "journey/formats/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "journey/errors.h"
#include "journey/formats/ggml_types.h"
#include "journey/formats/json_file.h"

namespace journey {

namespace {

using gguf::ValueType;

constexpr int kMaxArrayNesting = 16;  // arrays of arrays deeper than this are refused
// Array values held in memory, all arrays together. A value takes 16-64 bytes as JSON however
// few it takes in the file (one byte for a u8), so the bytes left in the file do not bound the
// memory; this does (~256 MB at most). The largest vocabularies (~256k tokens, with their
// scores, types and merges) need about a quarter of it.
constexpr uint64_t kMaxArrayValues = uint64_t{1} << 22;

// A bounds-checked little-endian reader over the mapped bytes.
class Cursor {
public:
    Cursor(const MappedFile& file) : file_(file), data_(reinterpret_cast<const unsigned char*>(file.data())) {}

    size_t pos() const { return pos_; }
    size_t remaining() const { return file_.size() - pos_; }

    [[noreturn]] void fail(const std::string& problem) const {
        throw ModelError(file_.path().string() + ": invalid GGUF file: " + problem + " (at byte " +
                         std::to_string(pos_) + ")");
    }

    // A well-formed file journey cannot use (a tensor type it does not implement).
    [[noreturn]] void refuse(const std::string& problem) const {
        throw ModelError(file_.path().string() + ": " + problem);
    }

    // `what` names the item for an error message: a string, or a function that makes one, so
    // that the 100k values of a vocabulary do not each build a message that is never shown.
    template <class What>
    static std::string text(const What& what) {
        if constexpr (std::is_invocable_v<const What&>) return what();
        else return std::string(what);
    }

    template <class What>
    void need(uint64_t n, const What& what) const {
        if (n > remaining())
            fail(text(what) + " needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
                 " remain (file truncated?)");
    }

    template <typename T, class What>
    T read(const What& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    template <class What>
    std::string read_string(const What& what) {
        const uint64_t len = read<uint64_t>([&] { return text(what) + " length"; });
        if (len > remaining())
            fail(text(what) + " length " + std::to_string(len) + " goes beyond the end of the file");
        std::string s(reinterpret_cast<const char*>(data_ + pos_), size_t(len));
        pos_ += size_t(len);
        return s;
    }

    // Refuse a count of items of at least min_bytes each that cannot fit in the rest of the file,
    // before anything is allocated for them.
    void check_count(uint64_t count, uint64_t min_bytes, const std::string& what) const {
        if (count > remaining() / min_bytes)
            fail(what + " count " + std::to_string(count) + " cannot fit in the remaining " +
                 std::to_string(remaining()) + " bytes");
    }

    // Counts `count` more array values against kMaxArrayValues.
    void take_array_values(uint64_t count, const std::string& what) {
        if (count > kMaxArrayValues - array_values_)
            fail(what + " of " + std::to_string(count) + " values takes the metadata arrays beyond " +
                 std::to_string(kMaxArrayValues) + " values in all (journey's limit)");
        array_values_ += count;
    }

private:
    const MappedFile& file_;
    const unsigned char* data_;
    size_t pos_ = 0;
    uint64_t array_values_ = 0;
};

// The fewest bytes a value of this type can take in the file (0 for an unknown type).
uint64_t min_value_bytes(uint32_t type) {
    switch (ValueType(type)) {
        case ValueType::UINT8: case ValueType::INT8: case ValueType::BOOL: return 1;
        case ValueType::UINT16: case ValueType::INT16: return 2;
        case ValueType::UINT32: case ValueType::INT32: case ValueType::FLOAT32: return 4;
        case ValueType::UINT64: case ValueType::INT64: case ValueType::FLOAT64: return 8;
        case ValueType::STRING: return 8;   // the length
        case ValueType::ARRAY: return 12;   // element type + count
    }
    return 0;
}

nlohmann::json read_value(Cursor& c, uint32_t type, const std::string& key, int depth);

nlohmann::json read_array(Cursor& c, const std::string& key, int depth) {
    if (depth >= kMaxArrayNesting) c.fail("key '" + key + "': arrays nested too deeply");
    const uint32_t elem_type = c.read<uint32_t>("key '" + key + "' array element type");
    const uint64_t min_bytes = min_value_bytes(elem_type);
    if (min_bytes == 0) c.fail("key '" + key + "': unknown array element type " + std::to_string(elem_type));
    const uint64_t n = c.read<uint64_t>("key '" + key + "' array length");
    c.check_count(n, min_bytes, "key '" + key + "' array");
    c.take_array_values(n, "key '" + key + "' array");
    nlohmann::json arr = nlohmann::json::array();
    arr.get_ref<nlohmann::json::array_t&>().reserve(size_t(n));
    for (uint64_t i = 0; i < n; ++i) arr.push_back(read_value(c, elem_type, key, depth + 1));
    return arr;
}

nlohmann::json read_value(Cursor& c, uint32_t type, const std::string& key, int depth) {
    const auto what = [&key] { return "value of key '" + key + "'"; };
    switch (ValueType(type)) {
        case ValueType::UINT8: return c.read<uint8_t>(what);
        case ValueType::INT8: return c.read<int8_t>(what);
        case ValueType::UINT16: return c.read<uint16_t>(what);
        case ValueType::INT16: return c.read<int16_t>(what);
        case ValueType::UINT32: return c.read<uint32_t>(what);
        case ValueType::INT32: return c.read<int32_t>(what);
        case ValueType::FLOAT32: return c.read<float>(what);
        case ValueType::BOOL: return c.read<uint8_t>(what) != 0;
        case ValueType::STRING: return c.read_string(what);
        case ValueType::ARRAY: return read_array(c, key, depth);
        case ValueType::UINT64: return c.read<uint64_t>(what);
        case ValueType::INT64: return c.read<int64_t>(what);
        case ValueType::FLOAT64: return c.read<double>(what);
    }
    c.fail("key '" + key + "': unknown value type " + std::to_string(type));
}

// One entry of the tensor table, as read (before its data is located).
struct RawTensor {
    std::string name;
    std::vector<int64_t> shape;  // outermost first
    DType dtype;
    uint64_t offset;
    uint64_t nbytes;
};

RawTensor read_tensor_info(Cursor& c, size_t index) {
    RawTensor t;
    t.name = c.read_string("tensor " + std::to_string(index) + " name");
    const std::string who = "tensor '" + excerpt(t.name, 60) + "'";
    const uint32_t n_dims = c.read<uint32_t>(who + " n_dims");
    if (n_dims == 0 || n_dims > gguf::kMaxDims)
        c.fail(who + ": n_dims " + std::to_string(n_dims) + " is not between 1 and " +
               std::to_string(gguf::kMaxDims));
    std::vector<uint64_t> ne(n_dims);
    for (auto& d : ne) d = c.read<uint64_t>(who + " dimension");
    const uint32_t type = c.read<uint32_t>(who + " type");
    t.offset = c.read<uint64_t>(who + " offset");

    const GgmlType* g = ggml_type(type);
    if (!g) c.fail(who + ": unknown ggml type number " + std::to_string(type));
    if (!g->dtype) c.refuse(who + ": type " + std::string(g->name) + " is " + std::string(g->why_not));
    t.dtype = *g->dtype;

    int64_t numel = 1;
    for (uint64_t d : ne) {
        if (d > uint64_t(std::numeric_limits<int64_t>::max()) ||
            __builtin_mul_overflow(numel, int64_t(d), &numel))
            c.fail(who + ": the product of its dimensions overflows");
    }
    if (ne[0] % g->block != 0)
        c.fail(who + ": " + std::string(g->name) + " row length " + std::to_string(ne[0]) +
               " is not a whole number of " + std::to_string(g->block) + "-element blocks");
    // bytes = numel / block * bytes_per_block, computed without overflow
    if (__builtin_mul_overflow(uint64_t(numel) / g->block, uint64_t(g->block_bytes), &t.nbytes))
        c.fail(who + ": its byte size overflows");
    t.shape.assign(ne.rbegin(), ne.rend());
    return t;
}

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// A tensor's byte size follows from its type and shape; where its data runs into the next
// tensor's, the file's offsets were written for other sizes (a wrong type or shape).
void check_no_overlap(const std::vector<RawTensor>& raw, const Cursor& c) {
    std::vector<const RawTensor*> by_offset;
    for (const RawTensor& t : raw) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
    for (size_t i = 0; i + 1 < by_offset.size(); ++i) {
        const RawTensor& t = *by_offset[i];
        const RawTensor& next = *by_offset[i + 1];
        if (t.nbytes > next.offset - t.offset)
            c.fail("tensor '" + t.name + "': " + std::string(dtype_name(t.dtype)) + " of shape " + shape_text(t.shape) +
                   " takes " + std::to_string(t.nbytes) + " bytes, but tensor '" + next.name + "' starts " +
                   std::to_string(next.offset - t.offset) + " bytes after it: the byte sizes disagree with the types and shapes");
    }
}

uint32_t alignment_of(const nlohmann::json& metadata, const Cursor& c) {
    auto it = metadata.find("general.alignment");
    if (it == metadata.end()) return gguf::kDefaultAlignment;
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > (1u << 30) ||
        (it->get<uint64_t>() & (it->get<uint64_t>() - 1)) != 0)
        c.fail("general.alignment must be a power of two, got " + json_excerpt(*it, 40));
    return it->get<uint32_t>();
}

}  // namespace

ModelFile read_gguf(const std::filesystem::path& path) {
    auto file = std::make_shared<MappedFile>(path);
    Cursor c(*file);

    const uint32_t magic = c.read<uint32_t>("magic");
    if (magic != gguf::kMagic) c.fail("bad magic (not a GGUF file)");
    const uint32_t version = c.read<uint32_t>("version");
    if (version != 2 && version != 3)
        c.fail("unsupported GGUF version " + std::to_string(version) + " (journey reads versions 2 and 3)");
    const uint64_t n_tensors = c.read<uint64_t>("tensor count");
    const uint64_t n_kv = c.read<uint64_t>("metadata count");
    c.check_count(n_kv, 8 + 4 + 1, "metadata");                  // key length, type, 1-byte value
    c.check_count(n_tensors, 8 + 4 + 8 + 4 + 8, "tensor");       // name length, n_dims, ne, type, offset

    ModelFile mf;
    mf.format = "gguf";
    mf.path = path;
    mf.metadata = nlohmann::json::object();
    for (uint64_t i = 0; i < n_kv; ++i) {
        std::string key = c.read_string("metadata key " + std::to_string(i));
        const std::string shown = excerpt(key, 60);  // messages quote the key, cut short
        if (mf.metadata.contains(key)) c.fail("duplicate metadata key '" + shown + "'");
        const uint32_t type = c.read<uint32_t>("type of key '" + shown + "'");
        mf.metadata[key] = read_value(c, type, shown, 0);
    }
    const uint32_t alignment = alignment_of(mf.metadata, c);

    std::vector<RawTensor> raw;
    raw.reserve(size_t(n_tensors));
    std::set<std::string> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        raw.push_back(read_tensor_info(c, size_t(i)));
        if (!names.insert(raw.back().name).second) c.fail("duplicate tensor name '" + excerpt(raw.back().name, 60) + "'");
    }

    // The data section starts at the next multiple of the alignment.
    const uint64_t data_start = (uint64_t(c.pos()) + alignment - 1) / alignment * alignment;
    const uint64_t size = file->size();
    for (const RawTensor& t : raw) {
        const std::string who = "tensor '" + excerpt(t.name, 60) + "'";
        if (t.offset % alignment != 0)
            c.fail(who + ": data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                   std::to_string(alignment));
        if (data_start > size || t.offset > size - data_start || t.nbytes > size - data_start - t.offset)
            c.fail(who + ": data (" + std::string(dtype_name(t.dtype)) + " of shape " + shape_text(t.shape) + ", offset " +
                   std::to_string(t.offset) + ", " + std::to_string(t.nbytes) +
                   " bytes) is not within the file bounds; the model is corrupted or incomplete");
        TensorInfo info;
        info.name = t.name;
        info.dtype = t.dtype;
        info.shape = t.shape;
        info.data = file->data() + data_start + t.offset;
        info.nbytes = size_t(t.nbytes);
        mf.tensors.emplace(t.name, std::move(info));
    }
    check_no_overlap(raw, c);
    mf.mappings.push_back(std::move(file));
    return mf;
}

}  // namespace journey
