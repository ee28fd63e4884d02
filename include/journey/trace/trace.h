// The journey of one token: everything the forward pass does at one position, stage by stage.
//
// A TraceObserver watches a single Session::eval of the whole prompt through the Observer
// hook (it never re-runs the model) and keeps, for the traced position:
//   embedding  norms of the token vector, the position vector (learned positions) and their sum;
//   per layer  residual norms before the block, between attention and MLP, after the block;
//              per head: the attention row over the keys, its entropy, its top keys, and the
//              norm of the head's contribution to the residual stream (below);
//              the norms of attn_out and mlp_out;
//              a mixture of experts' layer: the experts the token went to, with their weights;
//              hybrid models: a linear-attention layer's Gated DeltaNet heads (beta, the decay g,
//              the state's norm, the contribution), a gated attention layer's output gate mean;
//              the logit lens: final norm + unembedding (unembed.h) of resid_post;
//   final      the model's own next-token distribution at the position.
//
// Head contribution. attn_out = Σ_h z_h · W_O[h*D .. h*D+D) + b_O: the output projection is
// linear in z, so head h's share of it is z with every other head zeroed, times W_O. The
// trace builds the [H, H*D] block-diagonal matrix of those masked rows and multiplies it by
// W_O with the ordinary matmul kernel, which makes it independent of the stored layout
// (Conv1D or Linear) and dtype. The shared bias b_O belongs to no head and is left out.
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "journey/model/config.h"
#include "journey/decode/distribution.h"
#include "journey/model/model.h"
#include "journey/model/observer.h"
#include "journey/model/session.h"
#include "journey/trace/attribution.h"

#include <nlohmann/json.hpp>

namespace journey {

struct TraceOptions {
    int position = -1;             // the traced token; negative counts from the end (-1 = last)
    int top_k = 10;                // tokens listed for each lens and for the final distribution
    int top_keys = 5;              // most-attended keys listed per head
    std::optional<TokenId> target; // token whose rank the lens follows; default: final top-1
    bool full_patterns = false;    // also keep every head's whole [T, T] pattern (for --html)
    bool attribute = false;        // direct logit attribution of the target (attribution.h)
    bool all_positions = false;    // --pos all: also a PositionTrace for every position (same pass)
    std::optional<TokenId> contrast; // attribute target - contrast instead of the target's logit
    // Called as each layer's residual stream is observed (layers done, n_layer); may be empty.
    std::function<void(int, int)> progress;
    SessionOptions session;        // the context and KV cache type of the traced pass
};

struct HeadTrace {
    int head = 0;
    std::vector<float> pattern;  // [T] the traced query's weights over the keys, 0 after it
    double entropy = 0;          // nats, of pattern
    double out_norm = 0;         // ‖z_h · W_O[rows of h]‖
    std::vector<int> top_keys;   // the most-attended key positions, heaviest first
    std::vector<float> full;     // [T, T] every query's row, when full_patterns
    std::optional<double> gate_mean;  // gated attention (Qwen3.5): mean of sigmoid(gate) over the head's D values
};

// A Gated DeltaNet head (hybrid models' linear-attention layers) at the traced token: its gates
// and its fixed-size state (delta_net.h), from the pass's own values (Observer: ssm_*).
struct DeltaHeadTrace {
    int head = 0;
    double beta = 0;        // sigmoid(b): how much of the new value is written
    double g = 0;           // exp(A softplus(a + dt_bias)) in (0, 1]: the state's decay
    double state_norm = 0;  // Frobenius norm of the head's S x S state after the token
    double out_norm = 0;    // ‖o_h · W_out[rows of h]‖, as a head's out_norm
};

struct LensTrace {
    Distribution dist;         // top-k and entropy of softmax(unembed(resid_post))
    double kl_to_final = 0;    // KL(final || lens), nats
    int64_t target_rank = 0;   // 1 = the lens's most likely token
    double target_prob = 0;
};

// A mixture-of-experts layer's routing of the traced token (the forward pass's moe_logits, read
// by the same moe_route that chose its experts).
struct MoeTrace {
    struct Expert {
        int id = 0;
        float weight = 0;  // its share of the layer's MLP output (the weights sum to 1)
    };
    std::vector<Expert> experts;  // the chosen ones, in the order the router chose them
    double router_entropy = 0;    // nats, of the softmax over every expert's router logit
};

struct LayerTrace {
    int layer = 0;
    double resid_pre = 0, resid_mid = 0, resid_post = 0;  // L2 norms at the traced position
    double attn_out = 0, mlp_out = 0;
    std::vector<HeadTrace> heads;
    LensTrace lens;
    std::optional<MoeTrace> moe;  // a mixture-of-experts layer: where the token went
    // Hybrid models: a linear-attention layer has no attention heads but Gated DeltaNet heads;
    // a gated full-attention layer the mean of its output gate over heads and values.
    bool recurrent = false;
    std::vector<DeltaHeadTrace> delta_heads;
    std::optional<double> output_gate_mean;
};

struct EmbeddingTrace {
    double token_norm = 0;
    std::optional<double> position_norm;  // absent for rotary positions (they act in attention)
    double sum_norm = 0;                  // ‖embed‖, the first residual stream
};

// The final logits as the page's sampling panel needs them (trace_html.h): the best kSamplingTop
// in the sampler's order (logit descending, ties -> lower id; sampler.h) and what the rest add up
// to, so that the page recomputes generate's candidates exactly whenever they lie among these.
inline constexpr int kSamplingTop = 256;
struct SamplingTrace {
    std::vector<std::pair<TokenId, float>> top;  // (id, logit), best first
    double tail_exp_sum = 0;  // Σ exp(logit - top[0].logit) over the other tokens (double)
    float tail_max = 0;       // the largest logit among the others (-FLT_MAX when none)
    int n_vocab = 0;
};

// --pos all: what the page shows at one position, from the same single pass (trace_positions.cpp).
// Heads keep their entropy only (their rows are in the full patterns, when kept); each lens
// its top-k, entropy, KL and the rank and probability of this position's target (its final top-1).
inline constexpr int kSamplingTopAll = 40;  // final logits kept per position (generate's top-k)
struct PositionTrace {
    EmbeddingTrace embedding;
    std::vector<LayerTrace> layers;
    Distribution final;
    TokenId target = 0;
    double final_target_prob = 0;
    int64_t final_target_rank = 0;
    SamplingTrace sampling;
};

struct Trace {
    std::vector<TokenId> tokens;  // the whole prompt
    int position = 0;             // resolved, 0-based
    TokenId target = 0;
    PositionKind position_kind = PositionKind::learned;
    EmbeddingTrace embedding;
    std::vector<LayerTrace> layers;
    Distribution final;           // the model's next-token distribution at `position`
    double final_target_prob = 0;
    int64_t final_target_rank = 0;
    std::optional<Attribution> attribution;  // with TraceOptions::attribute
    SamplingTrace sampling;       // the final logits for the sampling panel
    std::vector<PositionTrace> positions;  // with TraceOptions::all_positions: one per token
};

// The best `keep` of a row of logits in the sampler's order, and what the rest add up to.
SamplingTrace sampling_trace(std::span<const float> logits, int keep);

// The position `pos` names in a prompt of T tokens (negative: from the end). UsageError if outside.
int resolve_position(int pos, int T);

// A --target spec: "#ID" or a string that encodes to exactly one token. UsageError otherwise.
TokenId parse_target(const Tokenizer& tok, int n_vocab, std::string_view spec, std::string_view flag = "--target");

class TraceObserver : public Observer {
public:
    // `tokens` is what the one observed eval runs, from an empty session.
    TraceObserver(const Model& m, std::span<const TokenId> tokens, const TraceOptions& opts);
    void observe(const Intermediate& t) override;
    // After the eval: resolve the target and read every lens against the final distribution.
    Trace finish();

private:
    const Model& model_;
    TraceOptions opts_;
    Trace trace_;
    std::vector<std::vector<float>> lens_logits_;  // [layer][V]
    std::vector<float> final_logits_;              // [V]
    AttributionRows rows_;                         // with opts_.attribute
    std::vector<float> final_normed_;              // [C] the final norm's output (softcapped logits)

    std::span<const float> row(const Intermediate& t) const;  // the traced row of a [T, ...] tensor
    LayerTrace& layer(int l);
    void observe_pattern(const Intermediate& t);
    void observe_heads(const Intermediate& t);
    void observe_delta(const Intermediate& t);  // ssm_beta / ssm_decay / ssm_state_norm
    void observe_gate(const Intermediate& t);   // attn_gate
    void observe_lens(const Intermediate& t);
    void observe_moe(const Intermediate& t);
    void record(std::vector<float>& to, const Intermediate& t) const;
    double raw_logit(TokenId id) const;

    // --pos all (trace_positions.cpp): every row of the intermediates, reduced as they pass.
    std::vector<std::vector<float>> all_resid_;  // [layer][T*C] resid_post, for the lenses
    std::vector<float> all_logits_;              // [T*V]
    void observe_all(const Intermediate& t);
    void finish_all();
};

// The trace as one JSON document (see README "Tracing"); token text is valid UTF-8 with the
// exact bytes alongside. `full_patterns` adds each head's [T, T] pattern (rounded to 1e-4).
nlohmann::json trace_json(const Trace& tr, const Tokenizer& tok, bool full_patterns = false);

// The same, one object per stage: tokens, embedding, each layer, final (each has "stage").
std::vector<nlohmann::json> trace_jsonl(const nlohmann::json& doc);

// Runs the prompt once through a fresh Session with a TraceObserver attached.
Trace run_trace(const Model& m, std::span<const TokenId> tokens, const TraceOptions& opts);

}  // namespace journey
