#include "journey/chat/chat_turns.h"

#include <spdlog/spdlog.h>

#include "journey/errors.h"

namespace journey {

ChatTurns::ChatTurns(const Model& model, const ChatFormat& format, jinja::RenderOptions render)
    : model_(model), format_(format), render_(std::move(render)), session_(model) {}

void ChatTurns::reset() {
    session_.reset();
    cached_.clear();
}

size_t ChatTurns::messages_end(const nlohmann::ordered_json& messages, const std::vector<TokenId>& ids) const {
    std::vector<TokenId> done;
    try {
        done = chat_prompt_ids(model_.tokenizer(), render_chat(format_, messages, false, render_));
    } catch (const std::exception&) {
        return 0;  // a template that renders nothing without the generation prompt: no boundary
    }
    size_t n = 0;
    while (n < done.size() && n < ids.size() && done[n] == ids[n]) ++n;
    return n;
}

GenerateResult ChatTurns::reply(const nlohmann::ordered_json& messages, GenerateOptions gen, const StepCallback& on_step) {
    prompt_text_ = render_chat(format_, messages, true, render_);
    const std::vector<TokenId> ids = chat_prompt_ids(model_.tokenizer(), prompt_text_);
    if (ids.empty()) throw InputError("the chat template rendered an empty prompt");
    if (ids.size() >= size_t(session_.n_ctx()))
        throw InputError("the conversation is " + std::to_string(ids.size()) + " tokens: the context (" +
                         std::to_string(session_.n_ctx()) + ") is full");
    // Reuse the cache up to the first id that differs (at least one id must be evaluated anew
    // for the next token's logits).
    size_t common = 0;
    while (common < cached_.size() && common < ids.size() && cached_[common] == ids[common]) ++common;
    if (common == ids.size()) --common;
    // A hybrid model's recurrent state goes back only to a snapshot (Session::rewind): the turn
    // then evaluates from there.
    common = size_t(session_.rewind(int(common)));
    cached_.assign(ids.begin(), ids.end());
    prompt_tokens_ = int(ids.size());
    evaluated_ = int(ids.size() - common);
    spdlog::info("chat turn: {} prompt tokens, {} reused from the cache, {} evaluated", ids.size(), common, evaluated_);

    gen.keep_cache = true;
    gen.end_tokens.insert(gen.end_tokens.end(), format_.end_tokens.begin(), format_.end_tokens.end());
    std::vector<TokenId> generated;
    auto keep = [&] {  // what the session evaluated of the reply (its last id is sampled, not run)
        cached_.insert(cached_.end(), generated.begin(), generated.end());
        cached_.resize(size_t(session_.n_past()));
    };
    try {
        std::span<const TokenId> rest = std::span<const TokenId>(ids).subspan(common);
        if (session_.has_state()) {
            // A recurrent state can be kept only where it is: it is snapshotted where the messages end
            // (before the assistant's header, the longest prefix the next turn's prompt repeats, even
            // when the template re-renders this reply otherwise: reasoning dropped) and at the turn's end.
            const size_t boundary = std::min(messages_end(messages, ids), ids.size() - 1);
            if (boundary > common) {
                session_.eval(rest.first(boundary - common));
                session_.snapshot();
                rest = std::span<const TokenId>(ids).subspan(boundary);
            }
        }
        GenerateResult r = generate(session_, rest, gen, [&](const StepResult& s) {
            generated.push_back(s.id);
            if (on_step) on_step(s);
        });
        keep();
        session_.snapshot();
        r.prompt_tokens = int(ids.size());
        return r;
    } catch (...) {
        if (size_t(session_.n_past()) >= ids.size()) keep();
        else cached_.resize(std::min(cached_.size(), size_t(session_.n_past())));
        throw;
    }
}

}  // namespace journey
