// journey trace on the mixture-of-experts stand-ins (Qwen3-MoE, gpt-oss; tests/data/models/): per
// layer, the experts the traced token went to are the router's choice, computed here from the
// GGUF's own tensors (the observed resid_mid, the layer's norm, ffn_gate_inp and its bias), in
// double, by each family's rule as llama.cpp's build_moe_ffn states it; their weights sum to 1.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "journey/formats/gguf_reader.h"
#include "journey/model/model.h"
#include "journey/model/session.h"
#include "journey/text/tokenizer.h"
#include "journey/trace/trace.h"

using namespace journey;

namespace {

using journey::test::gguf_of;

struct Residuals : Observer {
    std::map<int, std::vector<float>> resid_mid;  // [layer] -> [T, C]
    void observe(const Intermediate& t) override {
        if (t.name == "resid_mid") resid_mid[t.layer].assign(t.data, t.data + t.dims[0] * t.dims[1]);
    }
};

const float* f32(const ModelFile& f, const std::string& name) {
    const TensorInfo* t = f.find(name);
    REQUIRE(t);
    REQUIRE(t->dtype == DType::F32);
    return reinterpret_cast<const float*>(t->data);
}

struct Choice {
    std::vector<int> ids;
    std::vector<double> weights;
    double entropy = 0, margin = 0;  // margin: the last chosen expert's score over the first left out
};

// The router by hand. Qwen3-MoE: softmax over all logits, the top k, renormalised; gpt-oss: the
// top k logits, softmax over them.
Choice route_by_hand(const ModelFile& f, const ModelConfig& c, int layer, const float* resid, bool oss) {
    const int C = c.n_embd, E = c.n_expert, K = c.n_expert_used;
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const float* norm = f32(f, blk + (oss ? "post_attention_norm.weight" : "ffn_norm.weight"));
    const float* router = f32(f, blk + "ffn_gate_inp.weight");  // [E, C]
    const float* bias = oss ? f32(f, blk + "ffn_gate_inp.bias") : nullptr;
    double ss = 0;
    for (int i = 0; i < C; ++i) ss += double(resid[i]) * resid[i];
    const double scale = 1.0 / std::sqrt(ss / C + double(c.norm_eps));
    std::vector<double> logit(size_t(E), 0.0);
    for (int e = 0; e < E; ++e) {
        for (int i = 0; i < C; ++i) logit[size_t(e)] += double(router[int64_t{e} * C + i]) * (double(resid[i]) * scale * norm[i]);
        if (bias) logit[size_t(e)] += bias[e];
    }
    const double mx = *std::max_element(logit.begin(), logit.end());
    double z = 0;
    for (double v : logit) z += std::exp(v - mx);
    Choice ch;
    for (double v : logit) {
        const double p = std::exp(v - mx) / z;
        if (p > 0) ch.entropy -= p * std::log(p);
    }
    std::vector<int> order(static_cast<size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logit[size_t(a)] > logit[size_t(b)]; });
    ch.ids.assign(order.begin(), order.begin() + K);
    ch.margin = logit[size_t(order[size_t(K - 1)])] - logit[size_t(order[size_t(K)])];
    double sum = 0;
    for (int id : ch.ids) {
        // both rules end in weights proportional to exp(logit) over the chosen ones
        ch.weights.push_back(std::exp(logit[size_t(id)] - mx));
        sum += ch.weights.back();
    }
    for (double& w : ch.weights) w /= sum;
    return ch;
}

}  // namespace

TEST_CASE("trace: a mixture of experts' layers say which experts the token went to, as the router chose", "[trace][moe]") {
    for (const std::string family : {"qwen3moe", "gpt-oss"}) {
        INFO(family);
        const std::string path = gguf_of(family);
        const auto model = Model::load(path, LoadOptions{.tokenizer = false});
        const ModelConfig& c = model->config();
        const ModelFile file = read_gguf(path);
        const std::vector<TokenId> ids = {1, 17, 42, 99, 7, 300, 5, 250};
        Residuals res;
        {
            Session s(*model);
            s.set_observer(&res);
            s.eval(ids, LogitsFor::all);
        }
        int checked = 0;
        for (const int pos : {2, 7}) {
            TraceOptions o;
            o.position = pos;
            const Trace tr = run_trace(*model, ids, o);
            REQUIRE(tr.layers.size() == size_t(c.n_layer));
            for (const LayerTrace& l : tr.layers) {
                INFO("position " << pos << " layer " << l.layer);
                REQUIRE(l.moe);
                REQUIRE(l.moe->experts.size() == size_t(c.n_expert_used));
                double sum = 0;
                for (const auto& e : l.moe->experts) sum += e.weight;
                CHECK(std::abs(sum - 1.0) < 1e-6);
                const Choice want = route_by_hand(file, c, l.layer, res.resid_mid.at(l.layer).data() + int64_t{pos} * c.n_embd,
                                                  family == "gpt-oss");
                CHECK(std::abs(l.moe->router_entropy - want.entropy) < 1e-4);
                if (want.margin < 1e-4) continue;  // a near tie: float rounding may pick either
                for (size_t j = 0; j < want.ids.size(); ++j) {
                    CHECK(l.moe->experts[j].id == want.ids[j]);
                    CHECK(std::abs(l.moe->experts[j].weight - want.weights[j]) < 1e-5);
                }
                ++checked;
            }
        }
        CHECK(checked >= 3);
    }
}

TEST_CASE("trace: the experts in the JSON, the text and the HTML page", "[trace][moe][cli]") {
    using namespace journey::test;
    const std::string m = gguf_of("gpt-oss");
    const RunResult j = run_journey({"trace", "-m", m, "--ids", "1,17,42,99", "--format", "json", "-t", "1"});
    INFO(j.err);
    REQUIRE(j.exit_code == 0);
    const auto doc = nlohmann::json::parse(j.out);
    for (const auto& l : doc["layers"]) {
        REQUIRE(l.contains("moe"));
        CHECK(l["moe"]["experts"].size() == 2);
        CHECK(l["moe"]["experts"][0].contains("id"));
        CHECK(l["moe"]["experts"][0].contains("weight"));
        CHECK(l["moe"]["router_entropy"].get<double>() > 0);
    }
    const RunResult t = run_journey({"trace", "-m", m, "--ids", "1,17,42,99", "-t", "1"});
    REQUIRE(t.exit_code == 0);
    const std::string first = "#" + std::to_string(doc["layers"][0]["moe"]["experts"][0]["id"].get<int>());
    CHECK_THAT(t.out, Catch::Contains("experts  H"));
    CHECK_THAT(t.out, Catch::Contains(first));
    // The page carries the data its Experts table is drawn from.
    const std::string html = (std::filesystem::temp_directory_path() / ("journey-moe-trace-" + std::to_string(::getpid()) + ".html")).string();
    const RunResult h = run_journey({"trace", "-m", m, "--ids", "1,17,42,99", "-t", "1", "--html", html});
    REQUIRE(h.exit_code == 0);
    std::ifstream in(html);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(page, Catch::Contains("\"router_entropy\""));
    CHECK_THAT(page, Catch::Contains("renderExperts(app, d)"));
    std::filesystem::remove(html);
    // A dense model's layers have no moe field.
    const RunResult d = run_journey({"trace", "-m", data_dir() + "/reference/gpt2-tiny", "--ids", "1,2,3", "--format", "json", "-t", "1"});
    REQUIRE(d.exit_code == 0);
    CHECK_FALSE(nlohmann::json::parse(d.out)["layers"][0].contains("moe"));
}
