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

json head_json(const Trace& tr, const Tokenizer& tok, const HeadTrace& h, bool full) {
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
    if (full && !h.full.empty()) {
        const size_t T = tr.tokens.size();
        json rows = json::array();
        for (size_t q = 0; q < T; ++q) {
            json r = json::array();
            for (size_t k = 0; k <= q; ++k) r.push_back(std::round(double(h.full[q * T + k]) * 1e4) / 1e4);
            rows.push_back(std::move(r));  // keys after the query are 0 and left out
        }
        j["full_pattern"] = std::move(rows);
    }
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
    for (const LayerAttribution& l : a.layers)
        layers.push_back({{"layer", l.layer}, {"attn", l.attn}, {"heads", l.heads}, {"attn_bias", l.attn_bias},
                          {"mlp", l.mlp}});
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
