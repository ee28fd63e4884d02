// A conversation with a model, turn by turn, keeping the KV cache between turns: each turn
// renders the whole conversation with the model's template, and only the tokens the cache
// does not already hold are evaluated.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "journey/decode/generate.h"
#include "journey/chat/chat_format.h"
#include "journey/model/session.h"

namespace journey {

class ChatTurns {
public:
    ChatTurns(const Model& model, const ChatFormat& format, jinja::RenderOptions render);

    // The assistant's reply to `messages` (which end with the user's turn). on_step streams it.
    // The ids generated so far stay in the cache even when on_step throws (Ctrl-C).
    // Throws InputError when the conversation does not fit the context.
    GenerateResult reply(const nlohmann::ordered_json& messages, GenerateOptions gen, const StepCallback& on_step = {});

    void reset();
    int evaluated_last() const { return evaluated_; }  // tokens the last turn's prompt evaluated
    int prompt_tokens_last() const { return prompt_tokens_; }
    // The last turn's rendered prompt (set before its reply streams).
    const std::string& prompt_text_last() const { return prompt_text_; }
    int n_ctx() const { return session_.n_ctx(); }

private:
    const Model& model_;
    const ChatFormat& format_;
    jinja::RenderOptions render_;
    Session session_;
    std::vector<TokenId> cached_;  // the ids the session holds, in order
    int evaluated_ = 0, prompt_tokens_ = 0;
    std::string prompt_text_;
    // How many of ids the messages rendered without the generation prompt share (a hybrid
    // model's snapshot goes there).
    size_t messages_end(const nlohmann::ordered_json& messages, const std::vector<TokenId>& ids) const;
};

}  // namespace journey
