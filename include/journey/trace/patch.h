// Activation patching (causal tracing): run a clean and a corrupted prompt of the same length,
// then re-run the corrupted one with one activation at one (layer, position) taken from the
// clean run, and measure how much of the clean answer comes back.
//
// Sites (the Intervention hook of observer.h; the forward pass is the one pass, unchanged):
//   resid  the residual stream entering layer l (resid_pre); row n_layer is the final residual
//          (resid_post of the last layer), the final norm's input
//   attn   layer l's attention output, as added to the residual (attn_out)
//   mlp    layer l's MLP output, as added to the residual (mlp_out)
//   head   one head's output z_h (attn_z, before the output projection) at every position: the
//          grid is then layer x head instead of layer x position (a hybrid's Gated DeltaNet
//          layer: its delta heads; a model whose layers differ in head count is refused)
// Metric: the target's probability at the last position, or with a contrast token the logit
// difference target - contrast. restored = (patched - corrupted) / (clean - corrupted).
//
// Prefix caching: a patch at position p changes nothing before p (attention is causal), so the
// corrupted prompt's positions [0, p) are computed once and every patch at p re-runs only the
// suffix [p, T) from the cache (Session::rewind; a hybrid's recurrent state from a snapshot at p).
//
// In parallel (PatchOptions::parallel): the cells are shared out among threads, each with its own
// session and running its passes alone (SerialScope), taking positions in order as it finishes
// the last; each thread extends its cached prefix a token at a time, as one thread does, so every
// cell has the same bits whichever thread runs it and however many there are. Memory: one
// session per thread, each holding the prompt's T positions only (patch_memory).
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "journey/model/model.h"
#include "journey/model/session.h"

namespace journey {

enum class PatchSite { resid, attn, mlp, head };

// "resid", "attn", "mlp", "head"; UsageError naming --site otherwise.
PatchSite parse_patch_site(std::string_view s);
std::string_view patch_site_name(PatchSite s);

// One activation's rows of one run: [rows][T][width of the row] (rows: n_layer + 1 for resid,
// n_layer else). resid, attn, mlp: every row is n_embd wide. head: a row is z of every head of
// its layer, heads x D, each layer at its own shapes (Gemma 4's global layers have wider heads; a
// hybrid's Gated DeltaNet layers record their delta heads' outputs, ssm_v_heads x ssm_head_dim).
struct Activations {
    PatchSite site = PatchSite::resid;
    int T = 0;
    std::vector<int> C;  // per row: its width
    std::vector<int> D;  // per row, head: each head's width (0 elsewhere)
    std::vector<std::vector<float>> rows;
    std::span<const float> at(int row, int pos) const {
        const size_t c = size_t(C[size_t(row)]);
        return {rows[size_t(row)].data() + size_t(pos) * c, c};
    }
    int heads(int row) const { return D[size_t(row)] > 0 ? C[size_t(row)] / D[size_t(row)] : 0; }
};

// Runs `ids` once from an empty session, recording `site` at every layer and position; returns
// the last position's logits and fills `out`.
std::vector<float> record_activations(const Model& m, std::span<const TokenId> ids, PatchSite site, Activations& out,
                                      const SessionOptions& so = {});

// One patched run: `ids` from an empty session with the rows of `from` at (row, each of
// `positions`) put in place of the run's own. The last position's logits.
// head: only head `head`'s slice of each row (-1: the whole row).
std::vector<float> run_patched(const Model& m, std::span<const TokenId> ids, const Activations& from, int row,
                               std::span<const int> positions, const SessionOptions& so = {}, int head = -1);

struct PatchOptions {
    PatchSite site = PatchSite::resid;
    std::optional<TokenId> target;    // default: the clean run's top-1
    std::optional<TokenId> contrast;  // metric: logit difference target - contrast
    SessionOptions session;
    // Grid cells run at once, each thread with its own session (patch_memory); 1: one after
    // another, each pass using the thread pool (-t). The grid is the same bits at any count.
    int parallel = 1;
    std::function<void(int, int)> progress;  // (cells done, cells); may be empty; called from one thread at a time
};

// What each thread of the grid keeps: a session of the prompt's T positions (not the model's
// context: Llama 3.2 1B's KV cache is 256 MiB at 4096 positions, 12.5 MiB at 200), unless the
// context chooses the rotary factors (LongRoPE beyond its original context), where the session
// keeps the context asked for; a hybrid's recurrent state and its snapshots beside it.
struct PatchMemory {
    SessionOptions session;    // the grid's sessions
    int64_t kv_bytes = 0;      // KV cache, n_ctx positions
    int64_t state_bytes = 0;   // recurrent state and up to Session::kSnapshotsKept snapshots
    int64_t bytes() const { return kv_bytes + state_bytes; }
};
PatchMemory patch_memory(const Model& m, int T, const SessionOptions& so = {});

struct PatchResult {
    PatchSite site = PatchSite::resid;
    TokenId target = 0;
    std::optional<TokenId> contrast;
    int T = 0, rows = 0;                  // rows: layers (+ the final residual for resid)
    int columns = 0;                      // T positions, or (head) n_head heads
    double clean = 0, corrupted = 0;      // the metric of the two runs
    std::vector<std::vector<double>> metric;    // [rows][columns] of each patched run
    std::vector<std::vector<double>> restored;  // [rows][columns] (metric - corrupted) / (clean - corrupted)
};

// The whole grid. UsageError when the prompts' lengths differ.
PatchResult run_patch(const Model& m, std::span<const TokenId> clean, std::span<const TokenId> corrupted,
                      const PatchOptions& opts);

}  // namespace journey
