// A conversation with a model: the KV cache and scratch buffers for one sequence.
// eval() runs new tokens at the next positions and returns their logits.
#pragma once
#include <span>
#include <vector>

#include "journey/kernels/aligned.h"
#include "journey/model/delta_net.h"
#include "journey/model/model.h"
#include "journey/model/observer.h"
#include "journey/text/tokenizer.h"

namespace journey {

class Batcher;

// IEEE half precision for the F16 KV cache (conversions round to nearest even). clang before 15
// has no _Float16 on x86 (the fuzz build uses Debian's clang 14); its __fp16 is the same format.
#if defined(__clang__) && __clang_major__ < 15
using KvHalf = __fp16;
#else
using KvHalf = _Float16;
#endif

enum class LogitsFor { last, all };

// How the KV cache stores keys and values: F32 (exact), or F16 (half the memory; llama.cpp's
// default): each key/value is rounded to binary16 when stored and read back as float.
enum class KvType { f32, f16 };

// The context a session keeps. The cache is sized by n_ctx, never by a file's claim alone: a
// model made for 131072 positions runs with 4096 unless asked for more.
struct SessionOptions {
    int n_ctx = 0;                 // positions the KV cache holds; 0: default_ctx(model)
    KvType kv_type = KvType::f32;
};
constexpr int kDefaultCtxCap = 4096;
// The most tokens of a prompt one pass runs when nothing observes it (Session::eval).
constexpr int kPromptPiece = 512;
// The model's context, capped at kDefaultCtxCap.
int default_ctx(const ModelConfig& c);

class Session {
public:
    // The model must outlive the session. Throws UsageError when opts.n_ctx exceeds the model's
    // context (positions past it were never trained, or have no learned embedding).
    explicit Session(const Model& model, const SessionOptions& opts = {});

    // Runs `tokens` at positions n_past() .. n_past()+T-1 and appends them to the cache.
    // Returns logits: [n_vocab] for the last token, or [T, n_vocab] with LogitsFor::all.
    // The span is valid until the next eval(). Throws ModelError when a logit is NaN or Inf
    // (naming the model and the position). Throws InputError for an id outside the
    // vocabulary or when the context (n_ctx) would overflow; the cache is then unchanged.
    std::span<const float> eval(std::span<const TokenId> tokens, LogitsFor which = LogitsFor::last);

    // Several sessions' next tokens in one pass (sequences decoded together, batcher.h):
    // sessions[i] runs tokens[i] at its next position. Every session gets exactly the logits
    // (and cache) eval({tokens[i]}) would have given it alone; the weights are read once for all.
    // The sessions share a model and a context size, have no observer and are distinct.
    // Returns the logits of each, in order ([n_vocab] each, valid until that session's next eval).
    static std::vector<std::span<const float>> eval_tokens(std::span<Session* const> sessions,
                                                           std::span<const TokenId> tokens);
    // Several sessions' prompts in one pass (next/score --parallel: short prompts read the
    // weights once for all): sessions[i] runs prompts[i] (at least 2 tokens each, together at most
    // kPromptPiece) at its next positions. Every session gets exactly the logits and cache that
    // eval(prompts[i], which) gives it alone: the prompt kernels give a row the same bits in any
    // product, and each sequence's attention runs over its own cache. Same conditions as
    // eval_tokens. Returns each session's logits ([n_vocab], or [T_i, n_vocab] with LogitsFor::all).
    static std::vector<std::span<const float>> eval_prompts(std::span<Session* const> sessions,
                                                            std::span<const std::span<const TokenId>> prompts,
                                                            LogitsFor which);
    // With a batcher, eval() from a worker thread hands the work to the batcher's thread and
    // waits (batcher.h); nullptr: eval runs here.
    void set_batcher(Batcher* b) { batcher_ = b; }
    // eval() here and now, whatever the batcher (the batcher's own thread calls it).
    std::span<const float> eval_here(std::span<const TokenId> tokens, LogitsFor which = LogitsFor::last);

    int n_past() const { return n_past_; }
    int n_ctx() const { return n_ctx_; }  // the context in use (the KV cache's positions)
    KvType kv_type() const { return kv_type_; }
    int n_vocab() const;
    void reset();
    // Keep only the first n cached tokens (a chat turn whose prefix is already cached); returns
    // the tokens kept. A hybrid model's recurrent state cannot be truncated: it goes back to the
    // latest snapshot at or before n (snapshot()), or to nothing, and returns that position; the
    // caller evaluates the rest again.
    int rewind(int n);
    // Hybrid models: remembers the recurrent state at n_past() (a chat turn's end) so that a
    // later rewind can return to it; the KV cache needs none. The latest kSnapshotsKept are kept.
    void snapshot();
    static constexpr int kSnapshotsKept = 4;
    bool has_state() const { return !rec_slot_.empty() && model_.config().n_recurrent() > 0; }
    // The memory a session keeps: KV cache bytes per position (full-attention layers) and the
    // fixed recurrent state (conv + delta-rule state of the linear-attention layers).
    int64_t kv_bytes_per_token() const;
    int64_t state_bytes() const;
    // How a hybrid's linear-attention layers run several tokens (tests: both forms agree).
    void set_delta_form(DeltaForm f) { delta_form_ = f; }
    // The delta-rule states of every recurrent layer, [layer slot][Hv][S][S] (tests, trace).
    std::span<const float> recurrent_state() const { return ssm_state_; }
    void set_observer(Observer* o) { observer_ = o; }  // nullptr: none
    void set_intervention(Intervention* i) { intervention_ = i; }  // nullptr: none

    const Model& model() const { return model_; }

private:
    const Model& model_;
    int n_ctx_ = 0;
    KvType kv_type_ = KvType::f32;
    int n_past_ = 0;
    Observer* observer_ = nullptr;
    Batcher* batcher_ = nullptr;
    Intervention* intervention_ = nullptr;
    // The kernels' operands start on cache lines (kernels/aligned.h).
    LineVector<float> k_cache_, v_cache_;      // F32: [slot][n_ctx][Hkv*D of the slot's layer]
    LineVector<KvHalf> k16_, v16_;             // F16: [n_layer][n_ctx][Hkv*D]
    LineVector<float> kv_scratch_;             // F16: one layer's keys and values as float, [2][n_ctx][Hkv*D]
    std::vector<int> kv_slot_;                 // layer -> its KV cache slot (-1: a recurrent layer has none;
                                               //   a KV-shared layer: its source's)
    std::vector<int64_t> kv_at_;               // layer -> where its slot starts in the cache (elements)
    // Hybrid: the recurrent layers' state, [slot][conv_state_floats] and [slot][ssm_state_floats].
    std::vector<int> rec_slot_;                // layer -> its state slot (-1: an attention layer)
    LineVector<float> conv_state_, ssm_state_;
    struct Snapshot {
        int n_past;
        std::vector<float> conv, ssm;
    };
    std::vector<Snapshot> snapshots_;          // oldest first
    DeltaForm delta_form_ = DeltaForm::automatic;
    void clear_state();
    std::vector<float> logits_;
    LineVector<float> work_;                   // activations of one eval, carved per call, each on a line

    // One pass over tokens at n_past_ (which it leaves as it is); logits only when asked.
    void forward(std::span<const TokenId> tokens, LogitsFor which, bool logits = true) {
        Session* self = this;
        forward(std::span<Session* const>(&self, 1), tokens, which, logits);
    }
    // sessions[i] runs tokens[i] (several sessions: one token each), or with `rows` the next
    // rows[i] tokens (several sessions' prompts, each at least 2); see forward.cpp.
    static void forward(std::span<Session* const> sessions, std::span<const TokenId> tokens, LogitsFor which, bool logits,
                        std::span<const int> rows = {});
    // eval_tokens' and eval_prompts' checks: one model and context, no observer, distinct, room
    // in each context for n[i] more tokens, ids in the vocabulary.
    static void check_together(std::span<Session* const> sessions, std::span<const TokenId> tokens, std::span<const int> n);
    // Throws ModelError naming the model and the first position whose logits are NaN or Inf.
    void check_finite(const std::vector<float>& logits, int start, size_t n_tokens) const;
};

}  // namespace journey
