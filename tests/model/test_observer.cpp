// The observer sees every named intermediate, in the order of the forward pass, with its dims.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/model/model.h"
#include "journey/model/session.h"
#include "gpt2_tiny.h"

using namespace journey;

namespace {

struct Seen {
    std::string name;
    int layer, n_past;
    std::vector<int64_t> dims;
    std::vector<float> data;
};

struct SeenRecorder : Observer {
    std::vector<Seen> seen;
    void observe(const Intermediate& t) override {
        int64_t n = 1;
        for (auto d : t.dims) n *= d;
        seen.push_back({std::string(t.name), t.layer, t.n_past, {t.dims.begin(), t.dims.end()},
                        {t.data, t.data + n}});
    }
    const Seen& get(const std::string& name, int layer) const {
        for (const auto& s : seen)
            if (s.name == name && s.layer == layer) return s;
        FAIL("not seen: " << name << " " << layer);
        return seen.front();
    }
};

using test::gpt2_tiny_weights;

}  // namespace

TEST_CASE("observer: names, order and dims of every intermediate", "[observer]") {
    Session s(gpt2_tiny_weights());
    SeenRecorder rec;
    s.set_observer(&rec);
    std::vector<TokenId> ids{464, 3139, 286};
    const auto logits = s.eval(ids);

    std::vector<std::string> names;
    for (const auto& x : rec.seen) names.push_back(x.name + "@" + std::to_string(x.layer));
    const std::vector<std::string> want{
        "tok_embed@-1", "pos_embed@-1", "embed@-1",
        "resid_pre@0", "attn_pattern@0", "attn_z@0", "attn_out@0", "resid_mid@0", "mlp_out@0", "resid_post@0",
        "resid_pre@1", "attn_pattern@1", "attn_z@1", "attn_out@1", "resid_mid@1", "mlp_out@1", "resid_post@1",
        "final_norm@-1", "logits@-1"};
    CHECK(names == want);

    CHECK(rec.get("embed", -1).dims == std::vector<int64_t>{3, 64});
    CHECK(rec.get("attn_pattern", 0).dims == std::vector<int64_t>{4, 3, 3});
    CHECK(rec.get("attn_z", 1).dims == std::vector<int64_t>{3, 4, 16});
    CHECK(rec.get("logits", -1).dims == std::vector<int64_t>{1, 50257});
    // embed = tok_embed + pos_embed; resid_post of a block is resid_pre of the next
    const auto &e = rec.get("embed", -1), &te = rec.get("tok_embed", -1), &pe = rec.get("pos_embed", -1);
    for (size_t i = 0; i < e.data.size(); ++i) CHECK(e.data[i] == te.data[i] + pe.data[i]);
    CHECK(rec.get("resid_post", 0).data == rec.get("resid_pre", 1).data);
    CHECK(std::vector<float>(logits.begin(), logits.end()) == rec.get("logits", -1).data);
    // every attention row is a distribution over the visible (past and present) keys
    const auto& p = rec.get("attn_pattern", 1);
    for (int h = 0; h < 4; ++h)
        for (int t = 0; t < 3; ++t) {
            double sum = 0;
            for (int j = 0; j < 3; ++j) {
                const float v = p.data[size_t((h * 3 + t) * 3 + j)];
                if (j > t) CHECK(v == 0.0f);
                sum += v;
            }
            CHECK(sum == Approx(1.0).epsilon(1e-5));
        }

    // a second eval: one token at position 3 sees 4 keys
    rec.seen.clear();
    std::vector<TokenId> one{4881};
    s.eval(one);
    CHECK(rec.get("attn_pattern", 0).dims == std::vector<int64_t>{4, 1, 4});
    CHECK(rec.get("attn_pattern", 0).n_past == 3);

    // detached: nothing more is seen
    rec.seen.clear();
    s.set_observer(nullptr);
    s.eval(one);
    CHECK(rec.seen.empty());
}
