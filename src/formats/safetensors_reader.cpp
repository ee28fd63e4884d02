#include "journey/formats/safetensors_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

#include "journey/errors.h"
#include "journey/formats/json_file.h"

namespace journey {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
    throw ModelError(file.string() + ": " + what);
}

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// MXFP4 checkpoints (gpt-oss, quantization_config quant_method "mxfp4") store a matrix W as two
// U8 tensors: W_blocks [..., rows, nb, 16] (32 E2M1 codes per block, two to a byte, element 2k
// in byte k's low nibble, 2k + 1 in its high one) and W_scales [..., rows, nb] (E8M0 exponents,
// value = E2M1 * 2^(e - 127)). They are read as the U8 halves of a pair (std::nullopt: F32 etc.)
// and joined at the end (join_mxfp4) into one MXFP4 tensor W [..., rows, nb * 32].
struct U8Half {
    std::vector<int64_t> shape;
    const std::byte* data;
    std::filesystem::path file;
};

DType parse_dtype(const std::filesystem::path& file, const std::string& tensor, const json& v) {
    if (!v.is_string()) fail(file, "tensor '" + tensor + "': dtype is not a string");
    const std::string s = v.get<std::string>();
    if (s == "F32") return DType::F32;
    if (s == "F16") return DType::F16;
    if (s == "BF16") return DType::BF16;
    fail(file, "tensor '" + tensor + "': unsupported dtype '" + s + "' (supported: F32, F16, BF16; U8 as MXFP4 *_blocks / *_scales)");
}

// ggml's block_mxfp4 (blocks/layout.h): the exponent byte, then 16 bytes with element j in the
// low nibble and j + 16 in the high one; the codes index the same E2M1 table (ggml doubles the
// values and halves the scale: the same numbers). Only bits move, as llama.cpp's converter
// repacks them (GptOssModel.transform_nibble_layout).
void join_mxfp4(std::map<std::string, U8Half>& halves, ModelFile& out) {
    for (const auto& [name, h] : halves) {
        if (!ends_with(name, "_blocks") && !ends_with(name, "_scales"))
            fail(h.file, "tensor '" + name + "': unsupported dtype 'U8' (only MXFP4 *_blocks / *_scales)");
        const std::string base = name.substr(0, name.size() - 7);
        const bool is_blocks = ends_with(name, "_blocks");
        const auto other = halves.find(base + (is_blocks ? "_scales" : "_blocks"));
        if (other == halves.end())
            fail(h.file, "tensor '" + name + "' has no '" + base + (is_blocks ? "_scales" : "_blocks") + "' (MXFP4 needs both)");
        if (!is_blocks) continue;
        const U8Half& scales = other->second;
        std::vector<int64_t> want = h.shape;
        if (want.size() < 2 || want.back() != 16)
            fail(h.file, "tensor '" + name + "' is not [..., blocks, 16] (MXFP4: 16 bytes per block of 32)");
        want.pop_back();
        if (scales.shape != want) fail(scales.file, "tensor '" + base + "_scales' has another shape than its _blocks' blocks");
        if (out.tensors.count(base)) fail(h.file, "tensor '" + base + "' is given both as MXFP4 blocks and as '" + base + "'");
        uint64_t nblocks = 1;
        for (int64_t d : want) nblocks *= uint64_t(d);
        auto bytes = std::make_shared<std::vector<std::byte>>(size_t(nblocks) * 17);
        const auto* codes = reinterpret_cast<const uint8_t*>(h.data);
        const auto* exps = reinterpret_cast<const uint8_t*>(scales.data);
        auto* dst = reinterpret_cast<uint8_t*>(bytes->data());
        for (uint64_t b = 0; b < nblocks; ++b, codes += 16, dst += 17) {
            auto code = [&](int i) { return (codes[i / 2] >> (4 * (i & 1))) & 0x0f; };
            dst[0] = exps[b];
            for (int j = 0; j < 16; ++j) dst[1 + j] = uint8_t(code(j) | (code(j + 16) << 4));
        }
        TensorInfo t;
        t.name = base;
        t.dtype = DType::MXFP4;
        t.shape = want;
        t.shape.back() *= 32;
        t.data = bytes->data();
        t.nbytes = bytes->size();
        out.tensors.emplace(base, std::move(t));
        out.owned.push_back(std::move(bytes));
    }
}

// Reads the tensors of one .safetensors file into `out`, keeping its mapping alive there (U8
// tensors into `u8`, the MXFP4 halves).
void read_one(const std::filesystem::path& file, ModelFile& out, std::map<std::string, U8Half>& u8) {
    auto map = std::make_shared<MappedFile>(file);
    const size_t size = map->size();
    if (size < 8) fail(file, "too short for a safetensors header (" + std::to_string(size) + " bytes)");
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(map->data()[i]);  // little-endian
    if (n > size - 8)
        fail(file, "header length " + std::to_string(n) + " runs beyond the end of the file (" +
                       std::to_string(size) + " bytes)");

    const char* text = reinterpret_cast<const char*>(map->data() + 8);
    const json header = parse_json({text, size_t(n)}, file.string() + " header");
    if (!header.is_object()) fail(file, "header is not a JSON object");

    const std::byte* base = map->data() + 8 + n;
    const uint64_t data_size = size - 8 - n;

    struct Span { uint64_t begin, end; std::string name; };
    std::vector<Span> spans;
    for (auto& [name, desc] : header.items()) {
        if (name == "__metadata__") continue;
        const std::string where = "tensor '" + name + "': ";
        if (!desc.is_object()) fail(file, where + "description is not an object");
        if (!desc.contains("dtype") || !desc.contains("shape") || !desc.contains("data_offsets"))
            fail(file, where + "needs dtype, shape and data_offsets");

        TensorInfo t;
        t.name = name;
        const bool is_u8 = desc["dtype"] == "U8";
        t.dtype = is_u8 ? DType::F32 : parse_dtype(file, name, desc["dtype"]);  // U8: sized as bytes below
        const json& shape = desc["shape"];
        if (!shape.is_array()) fail(file, where + "shape is not an array");
        uint64_t numel = 1;
        for (const json& d : shape) {
            if (!d.is_number_integer() || d.get<int64_t>() < 0) fail(file, where + "shape has a non-integer or negative size");
            const uint64_t k = d.get<uint64_t>();
            if (k > uint64_t(INT64_MAX) || __builtin_mul_overflow(numel, k, &numel) || numel > uint64_t(INT64_MAX))
                fail(file, where + "the product of the shape " + json_excerpt(shape, 60) + " overflows");
            t.shape.push_back(static_cast<int64_t>(k));
        }
        // The byte size is checked too: 2^62 F32 elements would wrap to 0 bytes.
        if (numel > uint64_t(INT64_MAX) / 4) fail(file, where + "the byte size of shape " + json_excerpt(shape, 60) + " overflows");
        const json& off = desc["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            fail(file, where + "data_offsets must be two non-negative integers");
        const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
        if (b > e || e > data_size)
            fail(file, where + "data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                           "] are outside the data section (" + std::to_string(data_size) + " bytes)");
        const size_t want = is_u8 ? size_t(numel) : dtype_bytes(t.dtype, numel);
        if (e - b != want)
            fail(file, where + "data_offsets span " + std::to_string(e - b) + " bytes but " +
                           std::string(dtype_name(t.dtype)) + " x " + std::to_string(numel) +
                           " elements need " + std::to_string(want));
        t.data = base + b;
        t.nbytes = e - b;
        if (is_u8) {
            if (out.tensors.count(name) || u8.count(name)) fail(file, where + "appears in more than one file");
            spans.push_back({b, e, name});
            u8.emplace(name, U8Half{t.shape, t.data, file});
            continue;
        }
        const size_t align = t.dtype == DType::F32 ? 4 : 2;
        if (reinterpret_cast<uintptr_t>(t.data) % align != 0)
            fail(file, where + "data is not aligned to " + std::to_string(align) + " bytes (header not padded)");
        if (out.tensors.count(name) || u8.count(name)) fail(file, where + "appears in more than one file");
        spans.push_back({b, e, name});
        out.tensors.emplace(name, std::move(t));
    }

    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& c) { return a.begin < c.begin; });
    for (size_t i = 1; i < spans.size(); ++i)
        if (spans[i].begin < spans[i - 1].end)
            fail(file, "tensors '" + spans[i - 1].name + "' and '" + spans[i].name + "' overlap");
    out.mappings.push_back(std::move(map));
}

// A sharded checkpoint: the index names the shard holding each tensor.
void read_index(const std::filesystem::path& index, ModelFile& out, std::map<std::string, U8Half>& u8) {
    const json j = read_json_file(index);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
        fail(index, "has no \"weight_map\" object");
    std::set<std::string> shards;
    for (auto& [name, shard] : j["weight_map"].items()) {
        if (!shard.is_string()) fail(index, "weight_map entry '" + name + "' is not a file name");
        const std::string s = shard.get<std::string>();
        if (s.empty() || s.find('/') != std::string::npos) fail(index, "weight_map entry '" + name + "': bad shard name '" + s + "'");
        shards.insert(s);
    }
    for (const std::string& s : shards) read_one(index.parent_path() / s, out, u8);
    for (auto& [name, shard] : j["weight_map"].items())
        if (!out.tensors.count(name) && !u8.count(name))
            fail(index, "tensor '" + name + "' is not in its shard " + shard.get<std::string>());
}

}  // namespace

ModelFile read_safetensors(const std::filesystem::path& path) {
    ModelFile mf;
    mf.format = "safetensors";
    mf.path = path;
    mf.metadata = nlohmann::json::object();
    std::map<std::string, U8Half> u8;
    if (ends_with(path.filename().string(), ".index.json")) read_index(path, mf, u8);
    else read_one(path, mf, u8);
    join_mxfp4(u8, mf);
    return mf;
}

}  // namespace journey
