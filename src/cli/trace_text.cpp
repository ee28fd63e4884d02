#include "trace_text.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "distribution_table.h"
#include "journey/text/token_display.h"

namespace journey::cli {
namespace {

constexpr size_t kWidth = 100;

// Columns a UTF-8 string takes (one per code point: the tokens are shown through
// visible_token, so there are no control characters).
size_t columns(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// At most `max` columns, cut on a code point boundary with "…".
std::string fit(const std::string& s, size_t max) {
    if (columns(s) <= max) return s;
    std::string out;
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if ((c & 0xC0) != 0x80 && ++n > max - 1) break;
        out += s[i];
    }
    return out + "\xE2\x80\xA6";
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

std::string tok_text(const Tokenizer& tok, TokenId id, size_t max = 14) {
    return fit(visible_token(tok.token_bytes(id)), max);
}

// Appends `items` separated by two spaces, wrapping at kWidth with `indent` on new lines.
void wrap(std::vector<std::string>& lines, std::string line, const std::vector<std::string>& items,
          const std::string& indent) {
    for (const std::string& item : items) {
        if (columns(line) + 2 + columns(item) > kWidth && columns(line) > columns(indent)) {
            lines.push_back(line);
            line = indent;
        } else if (columns(line) > columns(indent)) {
            line += "  ";
        }
        line += item;
    }
    lines.push_back(line);
}

void layer_lines(std::vector<std::string>& lines, const Trace& tr, const Tokenizer& tok, const LayerTrace& l) {
    lines.push_back(fmt("layer %-3d |resid| pre %.3f  mid %.3f  post %.3f   |attn_out| %.3f  |mlp_out| %.3f",
                        l.layer, l.resid_pre, l.resid_mid, l.resid_post, l.attn_out, l.mlp_out));
    if (l.recurrent) lines.push_back("  linear attention (Gated DeltaNet): per head beta, decay g, |state| after the token");
    for (const DeltaHeadTrace& d : l.delta_heads)
        lines.push_back(fmt("  head %-3d beta %5.3f  g %9.3g  |state| %8.3f  |out| %7.3f", d.head, d.beta, d.g, d.state_norm, d.out_norm));
    if (l.output_gate_mean) lines.push_back(fmt("  output gate: mean sigmoid(gate) %.3f", *l.output_gate_mean));
    for (const HeadTrace& h : l.heads) {
        std::string line = fmt("  head %-3d H %5.3f  |out| %7.3f  ", h.head, h.entropy, h.out_norm);
        if (h.gate_mean) line += fmt("gate %.3f  ", *h.gate_mean);
        for (size_t i = 0; i < h.top_keys.size(); ++i) {
            const int k = h.top_keys[i];
            const std::string item = fmt("%s%d:", i ? "  " : "", k) +
                                     tok_text(tok, tr.tokens[static_cast<size_t>(k)], 10) +
                                     fmt(" %.2f", h.pattern[static_cast<size_t>(k)]);
            if (columns(line) + columns(item) > kWidth) break;
            line += item;
        }
        lines.push_back(line);
    }
    if (l.moe) {  // a mixture of experts: where the token went
        std::string line = fmt("  experts  H %5.3f  ", l.moe->router_entropy);
        for (size_t i = 0; i < l.moe->experts.size(); ++i) {
            const std::string item = fmt("%s#%d %.3f", i ? "  " : "", l.moe->experts[i].id, double(l.moe->experts[i].weight));
            if (columns(line) + columns(item) > kWidth) break;
            line += item;
        }
        lines.push_back(line);
    }
    const LensTrace& lens = l.lens;
    std::string line = fmt("  lens     H %5.3f  KL %6.3f  target rank %lld p %.3g  ", lens.dist.entropy,
                           lens.kl_to_final, static_cast<long long>(lens.target_rank), lens.target_prob);
    for (size_t i = 0; i < lens.dist.top.size() && i < 5; ++i) {
        const Ranked& r = lens.dist.top[i];
        const std::string item = (i ? "  " : "") + tok_text(tok, r.id, 10) + fmt(" %.3f", r.prob);
        if (columns(line) + columns(item) > kWidth) break;
        line += item;
    }
    lines.push_back(line);
}

// The attribution: the equation it satisfies, the largest parts, then one line per layer.
void attribution_lines(std::vector<std::string>& lines, const Attribution& a, const Tokenizer& tok, size_t rows) {
    std::string what = "\"" + tok_text(tok, a.target, 20) + fmt("\" (id %d)", a.target);
    if (a.contrast) what += " - \"" + tok_text(tok, *a.contrast, 20) + fmt("\" (id %d)", *a.contrast);
    lines.push_back("attribution of the logit" + std::string(a.contrast ? " difference " : " of ") + what);
    const bool ln = a.norm == NormKind::layernorm;
    lines.push_back(fmt("  logit %.6g = parts %.6g%s  (final %s frozen at 1/%s = %.6g; |logit - sum| %.2g)", a.logit,
                        a.sum - a.bias_term, ln ? fmt(" + norm bias %.6g", a.bias_term).c_str() : "",
                        ln ? "LayerNorm" : "RMSNorm", ln ? "sigma" : "rms", a.scale, std::abs(a.logit - a.sum)));
    if (a.quantized_output)
        lines.push_back("  (the output matrix is " + *a.quantized_output +
                        ": the model's logit rounds the activations to 8 bits; the parts add up to the float product)");
    struct Part {
        std::string name;
        double v;
    };
    std::vector<Part> parts{{"token embedding", a.token_embed}};
    if (a.position_embed) parts.push_back({"position embedding", *a.position_embed});
    for (const LayerAttribution& l : a.layers) {
        for (size_t h = 0; h < l.heads.size(); ++h) parts.push_back({fmt("layer %d head %zu", l.layer, h), l.heads[h]});
        if (l.attn_bias != 0) parts.push_back({fmt("layer %d attention bias", l.layer), l.attn_bias});
        if (l.heads.empty()) parts.push_back({fmt("layer %d attention", l.layer), l.attn});
        if (l.experts.empty()) parts.push_back({fmt("layer %d mlp", l.layer), l.mlp});
        for (const LayerAttribution::Expert& e : l.experts)
            parts.push_back({fmt("layer %d expert %d (weight %.3f)", l.layer, e.id, e.weight), e.part});
        if (l.shared_expert) parts.push_back({fmt("layer %d shared expert", l.layer), *l.shared_expert});
        if (l.ple) parts.push_back({fmt("layer %d per-layer input", l.layer), *l.ple});
    }
    std::stable_sort(parts.begin(), parts.end(), [](const Part& x, const Part& y) { return std::abs(x.v) > std::abs(y.v); });
    lines.push_back(std::string("  largest parts (heads, attention biases, MLPs or their experts, ") +
                    (a.layers.empty() || !a.layers[0].ple ? "" : "per-layer inputs, ") + "embeddings):");
    if (!a.layers.empty() && a.layers[0].out_scale)
        lines.push_back(fmt("  (each part includes the layer output scales from its layer on: the embeddings x %.4g)",
                            a.layers[0].carry));
    for (size_t i = 0; i < parts.size() && i < rows; ++i) lines.push_back(fmt("  %+12.4f  ", parts[i].v) + parts[i].name);
    lines.push_back("  per layer:     attention          mlp   top heads");
    for (const LayerAttribution& l : a.layers) {
        std::vector<size_t> order(l.heads.size());
        for (size_t h = 0; h < order.size(); ++h) order[h] = h;
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return std::abs(l.heads[x]) > std::abs(l.heads[y]); });
        std::string line = fmt("  layer %-4d %+12.4f %+12.4f  ", l.layer, l.attn, l.mlp);
        if (l.ple) line += fmt(" ple %+.4f ", *l.ple);
        for (size_t i = 0; i < order.size() && i < 3; ++i) line += fmt(" h%zu %+.3f", order[i], l.heads[order[i]]);
        lines.push_back(line);
        if (!l.experts.empty()) {
            std::string ex = "             mlp = experts";
            for (const LayerAttribution::Expert& e : l.experts) ex += fmt("  e%d %+.4f", e.id, e.part);
            if (l.shared_expert) ex += fmt("  shared %+.4f", *l.shared_expert);
            lines.push_back(ex);
        }
    }
}

}  // namespace

std::vector<std::string> trace_text(const Trace& tr, const Tokenizer& tok) {
    std::vector<std::string> lines;
    std::vector<std::string> items;
    for (size_t i = 0; i < tr.tokens.size(); ++i)
        items.push_back(fmt("%zu:", i) + tok_text(tok, tr.tokens[i]) + (int(i) == tr.position ? "*" : ""));
    wrap(lines, "tokens    ", items, "          ");
    const TokenId at = tr.tokens[static_cast<size_t>(tr.position)];
    lines.push_back(fit(fmt("position  %d (id %d) ", tr.position, at) + tok_text(tok, at, 30) + fmt("   target (id %d) ", tr.target) +
                            tok_text(tok, tr.target, 30) +
                            fmt("  final rank %lld p %.3g", static_cast<long long>(tr.final_target_rank), tr.final_target_prob),
                        kWidth));
    const EmbeddingTrace& e = tr.embedding;
    if (e.position_norm)
        lines.push_back(fmt("embedding |token| %.3f  + |position| %.3f  = |sum| %.3f", e.token_norm, *e.position_norm,
                            e.sum_norm));
    else
        lines.push_back(fmt("embedding |token| %.3f  (rotary: position enters in attention)  |sum| %.3f", e.token_norm,
                            e.sum_norm));
    lines.push_back("(H: entropy in nats; head keys as pos:token weight; lens: final norm + unembedding)");
    for (const LayerTrace& l : tr.layers) layer_lines(lines, tr, tok, l);
    lines.push_back("final");
    for (const std::string& l : distribution_table(tok, tr.final)) lines.push_back(fit(l, kWidth));
    if (tr.attribution) attribution_lines(lines, *tr.attribution, tok, tr.final.top.size());
    return lines;
}

}  // namespace journey::cli
