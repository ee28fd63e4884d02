// A Trace as JSON: one document, or one object per stage (JSONL).
#include <cmath>

#include "journey/text/token_display.h"
#include "journey/trace/trace.h"

namespace journey {
namespace {

using nlohmann::json;

json top_json(const Tokenizer& tok, const Distribution& d) {
    json a = json::array();
    for (size_t i = 0; i < d.top.size(); ++i) {
        json t = token_json(tok, d.top[i].id);
        t["rank"] = i + 1;
        t["prob"] = d.top[i].prob;
        t["logprob"] = d.top[i].logprob;
        t["logit"] = d.top[i].logit;
        a.push_back(std::move(t));
    }
    return a;
}

// Every query's row (keys after it are 0 and left out), rounded to 1e-4.
json full_pattern_json(const Trace& tr, const HeadTrace& h) {
    const size_t T = tr.tokens.size();
    json rows = json::array();
    for (size_t q = 0; q < T; ++q) {
        json r = json::array();
        for (size_t k = 0; k <= q; ++k) r.push_back(std::round(double(h.full[q * T + k]) * 1e4) / 1e4);
        rows.push_back(std::move(r));
    }
    return rows;
}

json head_json(const Trace& tr, const Tokenizer& tok, const HeadTrace& h, bool full) {
    if (full) {  // the page: the traced row in units of 1e-4 (integers are short), no top keys
        json pattern = json::array();
        for (float w : h.pattern) pattern.push_back(static_cast<int>(std::lround(double(w) * 1e4)));
        json j = {{"head", h.head}, {"pattern_e4", std::move(pattern)}, {"entropy", h.entropy}, {"out_norm", h.out_norm}};
        if (!h.full.empty()) j["full_pattern"] = full_pattern_json(tr, h);
        if (h.gate_mean) j["gate_mean"] = *h.gate_mean;
        return j;
    }
    json keys = json::array();
    for (int k : h.top_keys) {
        json t = token_json(tok, tr.tokens[static_cast<size_t>(k)]);
        t["pos"] = k;
        t["weight"] = h.pattern[static_cast<size_t>(k)];
        keys.push_back(std::move(t));
    }
    json j = {{"head", h.head}, {"pattern", h.pattern}, {"top_keys", std::move(keys)},
              {"entropy", h.entropy}, {"out_norm", h.out_norm}};
    if (h.gate_mean) j["gate_mean"] = *h.gate_mean;
    return j;
}

json layer_json(const Trace& tr, const Tokenizer& tok, const LayerTrace& l, bool full) {
    json heads = json::array();
    for (const HeadTrace& h : l.heads) heads.push_back(head_json(tr, tok, h, full));
    json attn = {{"out_norm", l.attn_out}, {"heads", std::move(heads)}};
    if (l.recurrent) {  // a hybrid's linear-attention layer
        json delta = json::array();
        for (const DeltaHeadTrace& d : l.delta_heads)
            delta.push_back({{"head", d.head}, {"beta", d.beta}, {"g", d.g}, {"state_norm", d.state_norm}, {"out_norm", d.out_norm}});
        attn["mixer"] = "gated_delta_net";
        attn["delta_heads"] = std::move(delta);
    }
    if (l.output_gate_mean) attn["output_gate_mean"] = *l.output_gate_mean;
    json j = {{"layer", l.layer},
            {"resid_pre", {{"norm", l.resid_pre}}},
            {"resid_mid", {{"norm", l.resid_mid}}},
            {"resid_post", {{"norm", l.resid_post}}},
            {"attn", std::move(attn)},
            {"mlp", {{"out_norm", l.mlp_out}}},
            {"lens", {{"top", top_json(tok, l.lens.dist)}, {"entropy", l.lens.dist.entropy},
                      {"kl_to_final", l.lens.kl_to_final}, {"target_rank", l.lens.target_rank},
                      {"target_prob", l.lens.target_prob}}}};
    if (l.moe) {
        json experts = json::array();
        for (const MoeTrace::Expert& e : l.moe->experts) experts.push_back({{"id", e.id}, {"weight", e.weight}});
        j["moe"] = {{"experts", std::move(experts)}, {"router_entropy", l.moe->router_entropy}};
    }
    return j;
}

json embedding_json(const Trace& tr) {
    const EmbeddingTrace& e = tr.embedding;
    json j = {{"token_norm", e.token_norm}, {"sum_norm", e.sum_norm}};
    if (tr.position_kind == PositionKind::learned) {
        j["position"] = "learned";
        j["position_norm"] = e.position_norm.value_or(0.0);
    } else {
        j["position"] = "rotary";
        j["position_norm"] = nullptr;
        j["note"] = "rotary positions: no position vector is added; position enters in attention, "
                    "by rotating queries and keys";
    }
    return j;
}

json attribution_json(const Attribution& a, const Tokenizer& tok) {
    json layers = json::array();
    for (const LayerAttribution& l : a.layers) {
        json experts = nullptr;  // a dense MLP
        if (!l.experts.empty()) {
            experts = json::array();
            for (const LayerAttribution::Expert& e : l.experts)
                experts.push_back({{"id", e.id}, {"weight", e.weight}, {"part", e.part}});
        }
        layers.push_back({{"layer", l.layer}, {"attn", l.attn}, {"heads", l.heads}, {"attn_bias", l.attn_bias},
                          {"mlp", l.mlp}, {"experts", std::move(experts)},
                          {"shared_expert", l.shared_expert ? json(*l.shared_expert) : json(nullptr)},
                          {"ple", l.ple ? json(*l.ple) : json(nullptr)},
                          {"out_scale", l.out_scale ? json(*l.out_scale) : json(nullptr)}, {"carry", l.carry}});
    }
    return {{"target", json(token_json(tok, a.target))},
            {"contrast", a.contrast ? json(token_json(tok, *a.contrast)) : json(nullptr)},
            {"logit", a.logit},
            {"sum", a.sum},
            {"quantized_output", a.quantized_output ? json(*a.quantized_output) : json(nullptr)},
            {"norm", a.norm == NormKind::layernorm ? "layernorm" : "rmsnorm"},
            {"scale", a.scale},
            {"bias_term", a.bias_term},
            {"embedding", {{"token", a.token_embed},
                           {"position", a.position_embed ? json(*a.position_embed) : json(nullptr)}}},
            {"layers", std::move(layers)}};
}

// The sampling panel's data (trace.h SamplingTrace): logits exactly as floats (JSON keeps them).
json sampling_json(const SamplingTrace& s, const Tokenizer& tok) {
    json top = json::array();
    for (const auto& [id, logit] : s.top) {
        json t = token_json(tok, id);
        t["logit"] = logit;
        top.push_back(std::move(t));
    }
    return {{"n_vocab", s.n_vocab}, {"top", std::move(top)}, {"tail_exp_sum", s.tail_exp_sum},
            {"tail_max", s.top.size() < size_t(s.n_vocab) ? json(s.tail_max) : json(nullptr)}};
}

// A number rounded to 5 significant digits: the page shows 4, and 200 positions x every layer
// and head must stay small (README: the page's size).
double r5(double x) {
    if (!std::isfinite(x) || x == 0) return x;
    const double scale = std::pow(10.0, 4 - std::floor(std::log10(std::abs(x))));
    return std::round(x * scale) / scale;
}

double r4(double x) {  // 4 significant digits: each position's lens
    if (!std::isfinite(x) || x == 0) return x;
    const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(x))));
    return std::round(x * scale) / scale;
}

// --pos all, compact (the page rebuilds each position's view from it; trace_html_panels.cpp):
// token ids only, their text once in "vocab".
json positions_json(const Trace& tr, const Tokenizer& tok, json& vocab) {
    const auto id_of = [&](TokenId id) {
        const std::string key = std::to_string(id);
        if (!vocab.contains(key)) vocab[key] = token_json(tok, id)["token"];
        return id;
    };
    json out = json::array();
    for (const PositionTrace& p : tr.positions) {
        json final_top = json::array();
        for (const Ranked& r : p.final.top) final_top.push_back({id_of(r.id), r5(r.prob)});
        json samp = json::array();
        for (const auto& [id, logit] : p.sampling.top) samp.push_back({id_of(id), logit});
        json layers = json::array();
        for (const LayerTrace& l : p.layers) {
            json he = json::array(), lens = json::array();
            for (const HeadTrace& h : l.heads) he.push_back(std::lround(h.entropy * 1e3));  // milli-nats
            for (const Ranked& r : l.lens.dist.top) lens.push_back({id_of(r.id), r4(r.prob)});
            layers.push_back({{"r", {r5(l.resid_pre), r5(l.resid_mid), r5(l.resid_post), r5(l.attn_out), r5(l.mlp_out)}},
                              {"he", std::move(he)},
                              {"lens", {{"top", std::move(lens)}, {"entropy", r5(l.lens.dist.entropy)},
                                        {"kl", r5(l.lens.kl_to_final)}, {"rank", l.lens.target_rank},
                                        {"prob", r5(l.lens.target_prob)}}}});
        }
        const EmbeddingTrace& e = p.embedding;
        out.push_back({{"embedding", {r5(e.token_norm), e.position_norm ? json(r5(*e.position_norm)) : json(nullptr),
                                      r5(e.sum_norm)}},
                       {"target", id_of(p.target)},
                       {"final_rank", p.final_target_rank},
                       {"final_prob", r5(p.final_target_prob)},
                       {"final", {{"top", std::move(final_top)}, {"entropy", r5(p.final.entropy)}}},
                       {"layers", std::move(layers)},
                       {"sampling", {{"top", std::move(samp)}, {"tail_exp_sum", p.sampling.tail_exp_sum},
                                     {"tail_max", p.sampling.top.size() < size_t(p.sampling.n_vocab)
                                                      ? json(p.sampling.tail_max) : json(nullptr)}}}});
    }
    return out;
}

}  // namespace

json trace_json(const Trace& tr, const Tokenizer& tok, bool full_patterns) {
    json tokens = json::array();
    for (TokenId id : tr.tokens) tokens.push_back(json(token_json(tok, id)));
    json target = token_json(tok, tr.target);
    target["final_rank"] = tr.final_target_rank;
    target["final_prob"] = tr.final_target_prob;
    json layers = json::array();
    for (const LayerTrace& l : tr.layers) layers.push_back(layer_json(tr, tok, l, full_patterns));
    json doc = {{"tokens", std::move(tokens)},
                {"position", tr.position},
                {"target", std::move(target)},
                {"embedding", embedding_json(tr)},
                {"layers", std::move(layers)},
                {"final", {{"top", top_json(tok, tr.final)}, {"entropy", tr.final.entropy}}}};
    if (tr.attribution) doc["attribution"] = attribution_json(*tr.attribution, tok);
    if (full_patterns && !tr.sampling.top.empty()) doc["sampling"] = sampling_json(tr.sampling, tok);  // the page
    if (full_patterns && !tr.positions.empty()) {  // --pos all, for the page
        json vocab = json::object();
        doc["positions"] = positions_json(tr, tok, vocab);
        doc["vocab"] = std::move(vocab);
    }
    return doc;
}

std::vector<json> trace_jsonl(const json& doc) {
    std::vector<json> lines;
    lines.push_back({{"stage", "tokens"}, {"tokens", doc["tokens"]}, {"position", doc["position"]},
                     {"target", doc["target"]}});
    json e = doc["embedding"];
    e["stage"] = "embedding";
    lines.push_back(std::move(e));
    for (const json& l : doc["layers"]) {
        json j = l;
        j["stage"] = "layer";
        lines.push_back(std::move(j));
    }
    json f = doc["final"];
    f["stage"] = "final";
    lines.push_back(std::move(f));
    if (doc.contains("attribution")) {
        json a = doc["attribution"];
        a["stage"] = "attribution";
        lines.push_back(std::move(a));
    }
    return lines;
}

}  // namespace journey
