// journey imatrix: llama-imatrix's collection (tools/imatrix/imatrix.cpp, collect_imatrix and
// compute_imatrix) through the forward pass's product hook, and its two file formats.
#include "journey/convert/imatrix.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "journey/errors.h"
#include "journey/formats/gguf_reader.h"
#include "journey/formats/gguf_writer.h"
#include "journey/model/model.h"
#include "journey/model/session.h"

namespace journey {
namespace {

// Sums x^2 of every product's input rows into its matrix's entry, in row order (llama.cpp adds a
// dense product's rows in order; an expert's rows in the order it meets them).
class Collector : public Observer {
public:
    Collector(const Model& model, Imatrix& out) : out_(out) {
        for (Weights::NamedMatrix& n : model.weights().named_matrices(model.config())) {
            // journey observes no product of a hybrid's linear-attention layers: refuse their models
            ImatrixEntry& e = out_.entries[n.name];
            e.n_in = n.m->n_in();
            e.sums.assign(size_t(e.n_in * n.n_expert), 0.0f);
            e.counts.assign(size_t(n.n_expert), 0);
            where_[n.m] = {&e, n.expert, n.name};
        }
    }
    void observe(const Intermediate&) override {}
    void product(const Matrix& w, const float* x, int64_t rows) override {
        auto it = where_.find(&w);
        if (it == where_.end()) return;  // not a named matrix of the blocks
        ImatrixEntry& e = *it->second.entry;
        float* acc = e.sums.data() + it->second.expert * e.n_in;
        for (int64_t r = 0; r < rows; ++r) {
            const float* row = x + r * e.n_in;
            for (int64_t j = 0; j < e.n_in; ++j) acc[j] += row[j] * row[j];
        }
        e.counts[size_t(it->second.expert)] += rows;
        for (int64_t j = 0; j < e.n_in; ++j)
            if (!std::isfinite(acc[j])) throw ModelError("imatrix: non-finite values in the activations of " + it->second.name);
    }

private:
    struct Where {
        ImatrixEntry* entry;
        int expert;
        std::string name;
    };
    Imatrix& out_;
    std::unordered_map<const Matrix*, Where> where_;
};

}  // namespace

std::vector<float> Imatrix::weights_of(const std::string& name) const {
    auto it = entries.find(name);
    if (it == entries.end()) return {};
    const ImatrixEntry& e = it->second;
    std::vector<float> w(e.sums.size());
    if (legacy) {  // the sums are already (sum / count) * ncall
        const int64_t ncall = e.counts.empty() ? 0 : e.counts[0];
        for (size_t i = 0; i < w.size(); ++i) w[i] = ncall > 0 ? e.sums[i] / float(ncall) : e.sums[i];
        return w;
    }
    const size_t n = e.sums.size() / e.counts.size();
    for (size_t j = 0; j < e.counts.size(); ++j) {
        const float count = float(e.counts[j]);
        for (size_t i = 0; i < n; ++i) w[j * n + i] = count > 0.0f ? e.sums[j * n + i] / count : 1.0f;
    }
    return w;
}

Imatrix compute_imatrix(const Model& model, std::span<const TokenId> tokens, int chunk, int n_chunks, KvType kv,
                        const std::function<void(int, int)>& progress) {
    const ModelConfig& c = model.config();
    if (c.n_recurrent() > 0)
        throw UsageError("imatrix: " + model.source().string() +
                         ": journey does not observe the products of linear-attention layers (hybrid models are not supported)");
    if (chunk < 16) throw UsageError("--chunk: llama-imatrix ignores products of fewer than 16 rows; give at least 16");
    if (int64_t(tokens.size()) < 2 * int64_t(chunk))
        throw InputError("imatrix: the text tokenizes to " + std::to_string(tokens.size()) + " tokens; a context of " +
                         std::to_string(chunk) + " needs at least " + std::to_string(2 * chunk));
    const int max_chunks = int(tokens.size() / size_t(chunk));
    const int n = n_chunks < 0 ? max_chunks : std::min(n_chunks, max_chunks);
    const Tokenizer& tok = model.tokenizer();
    const std::optional<TokenId> bos = tok.add_bos() ? tok.bos_id() : std::nullopt;

    Imatrix m;
    m.chunk_size = chunk;
    Collector collector(model, m);
    Session session(model, SessionOptions{.n_ctx = chunk, .kv_type = kv});
    session.set_observer(&collector);
    std::vector<TokenId> ids(static_cast<size_t>(chunk));
    for (int i = 0; i < n; ++i) {
        std::copy(tokens.begin() + ptrdiff_t(i) * chunk, tokens.begin() + ptrdiff_t(i + 1) * chunk, ids.begin());
        if (bos) ids[0] = *bos;
        session.reset();
        session.eval(ids, LogitsFor::last);
        if (progress) progress(i + 1, n);
    }
    m.chunk_count = n;
    // llama.cpp has an entry only for a matrix some product reached (an expert no token chose
    // keeps a count of 0 within its tensor's entry).
    for (auto it = m.entries.begin(); it != m.entries.end();) {
        bool any = false;
        for (int64_t k : it->second.counts) any = any || k > 0;
        it = any ? std::next(it) : m.entries.erase(it);
    }
    return m;
}

void write_imatrix(const Imatrix& m, const std::filesystem::path& out) {
    GgufWriter w;
    w.set_str("general.type", "imatrix");
    w.set_strs("imatrix.datasets", m.datasets);
    w.set_u32("imatrix.chunk_count", uint32_t(m.chunk_count));
    w.set_u32("imatrix.chunk_size", uint32_t(m.chunk_size));
    std::vector<std::vector<float>> data;
    for (const auto& [name, e] : m.entries) {
        const int64_t nmat = int64_t(e.counts.size());
        if (nmat == 0 || e.sums.empty()) continue;
        // ggml stores [n_in, nmat] and [1, nmat], trailing dimensions of 1 dropped
        w.add_tensor(name + ".in_sum2", DType::F32, nmat > 1 ? std::vector<int64_t>{nmat, e.n_in} : std::vector<int64_t>{e.n_in});
        w.add_tensor(name + ".counts", DType::F32, nmat > 1 ? std::vector<int64_t>{nmat, 1} : std::vector<int64_t>{1});
        data.push_back(e.sums);
        std::vector<float> counts;
        for (int64_t c : e.counts) counts.push_back(float(c));
        data.push_back(std::move(counts));
    }
    w.write(out, [&](size_t i, std::byte* dst, size_t nbytes) { std::memcpy(dst, data[i].data(), nbytes); });
}

namespace {

Imatrix read_legacy(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string where = path.string() + ": ";
    if (!in) throw InputError(where + "cannot open the importance matrix");
    auto i32 = [&](const char* what) {
        int32_t v = 0;
        in.read(reinterpret_cast<char*>(&v), 4);
        if (!in) throw InputError(where + "not an importance matrix (imatrix.gguf or legacy .dat): truncated " + what);
        return v;
    };
    Imatrix m;
    m.legacy = true;
    const int32_t n_entries = i32("entry count");
    if (n_entries < 1 || n_entries > 1000000) throw InputError(where + "not an importance matrix (imatrix.gguf or legacy .dat)");
    for (int32_t i = 0; i < n_entries; ++i) {
        const int32_t len = i32("name length");
        if (len < 1 || len > 4096) throw InputError(where + "legacy imatrix: bad name length " + std::to_string(len));
        std::string name(size_t(len), '\0');
        in.read(name.data(), len);
        const int32_t ncall = i32("call count");
        const int32_t nval = i32("value count");
        if (nval < 1 || nval > (1 << 28)) throw InputError(where + "legacy imatrix: bad value count for " + name);
        ImatrixEntry& e = m.entries[name];
        e.n_in = nval;
        e.sums.resize(size_t(nval));
        in.read(reinterpret_cast<char*>(e.sums.data()), std::streamsize(nval) * 4);
        if (!in) throw InputError(where + "legacy imatrix: truncated values of " + name);
        e.counts = {ncall};
    }
    int32_t chunks = 0;
    if (in.read(reinterpret_cast<char*>(&chunks), 4)) {
        m.chunk_count = chunks;
        int32_t len = 0;
        if (in.read(reinterpret_cast<char*>(&len), 4) && len > 0 && len < 4096) {
            std::string d(size_t(len), '\0');
            if (in.read(d.data(), len)) m.datasets.push_back(d.c_str());
        }
    }
    return m;
}

}  // namespace

Imatrix read_imatrix(const std::filesystem::path& path) {
    {
        std::ifstream probe(path, std::ios::binary);
        if (!probe) throw InputError(path.string() + ": cannot open the importance matrix");
        char magic[4] = {};
        probe.read(magic, 4);
        if (!probe || std::memcmp(magic, "GGUF", 4) != 0) return read_legacy(path);
    }
    const ModelFile f = read_gguf(path);
    const std::string where = path.string() + ": ";
    Imatrix m;
    const auto& md = f.metadata;
    auto ds = md.find("imatrix.datasets");
    auto cc = md.find("imatrix.chunk_count");
    auto cs = md.find("imatrix.chunk_size");
    if (ds == md.end() || cc == md.end() || cs == md.end())
        throw InputError(where + "missing imatrix metadata (imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size)");
    if (ds->is_array())
        for (const auto& d : *ds)
            if (d.is_string()) m.datasets.push_back(d.get<std::string>());
    m.chunk_count = cc->is_number_integer() ? cc->get<int64_t>() : 0;
    m.chunk_size = cs->is_number_integer() ? cs->get<int64_t>() : 0;
    std::map<std::string, std::pair<const TensorInfo*, const TensorInfo*>> pairs;
    auto strip = [](const std::string& s, std::string_view suffix, std::string& out) {
        if (s.size() <= suffix.size() || s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
        out = s.substr(0, s.size() - suffix.size());
        return true;
    };
    for (const auto& [name, t] : f.tensors) {
        std::string base;
        if (strip(name, ".in_sum2", base)) pairs[base].first = &t;
        else if (strip(name, ".counts", base)) pairs[base].second = &t;
    }
    if (pairs.empty()) throw InputError(where + "no data in the importance matrix");
    for (const auto& [name, p] : pairs) {
        if (!p.first || !p.second) throw InputError(where + "mismatched sums and counts for " + name);
        if (p.first->dtype != DType::F32 || p.second->dtype != DType::F32)
            throw InputError(where + "sums and counts for " + name + " must be F32");
        const int64_t nval = int64_t(p.first->nbytes / 4), ncounts = int64_t(p.second->nbytes / 4);
        if (ncounts < 1 || nval % ncounts != 0) throw InputError(where + "sums of " + name + " are not a whole number per count");
        ImatrixEntry& e = m.entries[name];
        e.n_in = nval / ncounts;
        e.sums.resize(size_t(nval));
        std::memcpy(e.sums.data(), p.first->data, size_t(nval) * 4);
        std::vector<float> counts(static_cast<size_t>(ncounts));
        std::memcpy(counts.data(), p.second->data, size_t(ncounts) * 4);
        for (float c : counts) e.counts.push_back(std::lround(c));
    }
    return m;
}

}  // namespace journey
