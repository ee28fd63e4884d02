// llama2.c checkpoint reader: a 7-int header, then float32 tensors in a fixed order
// (see include/journey/formats/llama2c_reader.h), exposed under GGUF's tensor names.
#include "journey/formats/llama2c_reader.h"

#include <cstring>
#include <memory>
#include <string>

#include "journey/errors.h"

namespace journey {

namespace {

struct Header {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

// Lays out consecutive float32 tensors from the current position of the mapping.
class TensorCursor {
public:
    TensorCursor(ModelFile& mf, const MappedFile& file, size_t pos) : mf_(mf), file_(file), pos_(pos) {}

    // Records `count` consecutive tensors of `shape`, the i-th named name_of(i) (or skipped when
    // that is empty), checking each against the end of the file.
    template <typename NameOf>
    void take(const char* what, int64_t count, std::vector<int64_t> shape, NameOf name_of) {
        int64_t numel = 1;
        for (int64_t d : shape) numel *= d;  // dimensions are validated small enough beforehand
        const uint64_t bytes = uint64_t(numel) * 4;
        for (int64_t i = 0; i < count; ++i) {
            if (bytes > file_.size() - pos_)
                throw ModelError(file_.path().string() + ": llama2.c checkpoint is truncated: " + what +
                                 " needs " + std::to_string(bytes) + " bytes at offset " + std::to_string(pos_) +
                                 " but the file has " + std::to_string(file_.size()) + " bytes");
            std::string name = name_of(i);
            if (!name.empty()) {
                TensorInfo t;
                t.name = name;
                t.dtype = DType::F32;
                t.shape = shape;
                t.data = file_.data() + pos_;
                t.nbytes = size_t(bytes);
                mf_.tensors.emplace(name, std::move(t));
            }
            pos_ += size_t(bytes);
        }
    }

    size_t pos() const { return pos_; }

private:
    ModelFile& mf_;
    const MappedFile& file_;
    size_t pos_;
};

void check_header(const Header& h, const std::filesystem::path& path) {
    auto bad = [&](const std::string& problem) {
        throw ModelError(path.string() + ": not a usable llama2.c checkpoint: " + problem);
    };
    // Generous caps keep every size computation below far from overflow.
    constexpr int32_t kMax = 1 << 20;
    auto in_range = [](int32_t v, int32_t lo) { return v >= lo && v <= kMax; };
    if (!in_range(h.dim, 1) || !in_range(h.hidden_dim, 1) || !in_range(h.n_layers, 1) || !in_range(h.n_heads, 1) ||
        !in_range(h.n_kv_heads, 1) || h.vocab_size == 0 || h.vocab_size < -kMax || h.vocab_size > kMax ||
        !in_range(h.seq_len, 1))
        bad("header values out of range (dim " + std::to_string(h.dim) + ", hidden_dim " +
            std::to_string(h.hidden_dim) + ", n_layers " + std::to_string(h.n_layers) + ", n_heads " +
            std::to_string(h.n_heads) + ", n_kv_heads " + std::to_string(h.n_kv_heads) + ", vocab_size " +
            std::to_string(h.vocab_size) + ", seq_len " + std::to_string(h.seq_len) + ")");
    if (h.dim % h.n_heads != 0) bad("dim is not a multiple of n_heads");
    if (h.n_kv_heads > h.n_heads || h.n_heads % h.n_kv_heads != 0) bad("n_heads is not a multiple of n_kv_heads");
    if ((h.dim / h.n_heads) % 2 != 0) bad("head size is odd");
}

std::string layer_name(int64_t layer, const char* suffix) {
    return "blk." + std::to_string(layer) + "." + suffix + ".weight";
}

}  // namespace

ModelFile read_llama2c(const std::filesystem::path& path) {
    auto file = std::make_shared<MappedFile>(path);
    Header h;
    if (file->size() < sizeof h)
        throw ModelError(path.string() + ": too small for a llama2.c checkpoint header (" +
                         std::to_string(file->size()) + " bytes)");
    std::memcpy(&h, file->data(), sizeof h);
    check_header(h, path);

    const bool shared_classifier = h.vocab_size > 0;
    const int64_t vocab = shared_classifier ? h.vocab_size : -int64_t(h.vocab_size);
    const int64_t dim = h.dim, hidden = h.hidden_dim, L = h.n_layers;
    const int64_t head_size = dim / h.n_heads;
    const int64_t kv_dim = head_size * h.n_kv_heads;

    ModelFile mf;
    mf.format = "llama2.c";
    mf.path = path;
    mf.metadata = {
        {"general.architecture", "llama"},
        {"general.name", path.stem().string()},
        {"llama.embedding_length", dim},
        {"llama.feed_forward_length", hidden},
        {"llama.block_count", L},
        {"llama.attention.head_count", h.n_heads},
        {"llama.attention.head_count_kv", h.n_kv_heads},
        {"llama.context_length", h.seq_len},
        {"llama.vocab_size", vocab},
        {"llama.rope.dimension_count", head_size},
        {"llama.rope.freq_base", 10000.0},
        {"llama.attention.layer_norm_rms_epsilon", 1e-5},
        {"llama2c.shared_classifier", shared_classifier},
    };

    TensorCursor c(mf, *file, sizeof h);
    auto one = [](const char* name) { return [name](int64_t) { return std::string(name); }; };
    auto per_layer = [](const char* suffix) { return [suffix](int64_t i) { return layer_name(i, suffix); }; };
    auto skip = [](int64_t) { return std::string(); };
    c.take("token_embedding", 1, {vocab, dim}, one("token_embd.weight"));
    c.take("rms_att", L, {dim}, per_layer("attn_norm"));
    c.take("wq", L, {dim, dim}, per_layer("attn_q"));
    c.take("wk", L, {kv_dim, dim}, per_layer("attn_k"));
    c.take("wv", L, {kv_dim, dim}, per_layer("attn_v"));
    c.take("wo", L, {dim, dim}, per_layer("attn_output"));
    c.take("rms_ffn", L, {dim}, per_layer("ffn_norm"));
    c.take("w1", L, {hidden, dim}, per_layer("ffn_gate"));
    c.take("w2", L, {dim, hidden}, per_layer("ffn_down"));
    c.take("w3", L, {hidden, dim}, per_layer("ffn_up"));
    c.take("rms_final", 1, {dim}, one("output_norm.weight"));
    c.take("freq_cis_real", 1, {h.seq_len, head_size / 2}, skip);
    c.take("freq_cis_imag", 1, {h.seq_len, head_size / 2}, skip);
    if (!shared_classifier) c.take("wcls", 1, {vocab, dim}, one("output.weight"));
    if (c.pos() != file->size())
        throw ModelError(path.string() + ": llama2.c checkpoint has " + std::to_string(file->size() - c.pos()) +
                         " unexpected trailing bytes (header says " + std::to_string(c.pos()) +
                         " bytes; wrong vocab_size sign or not a llama2.c file?)");
    mf.mappings.push_back(std::move(file));
    return mf;
}

}  // namespace journey
