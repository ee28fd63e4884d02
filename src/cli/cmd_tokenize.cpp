// journey tokenize: text -> token ids, one line of ids, or JSON with each token's bytes.
#include <charconv>
#include <memory>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "commands.h"
#include "journey/text/token_display.h"
#include "common.h"
#include "tokenizer_options.h"

namespace journey::cli {
namespace {

struct TokenizeOptions {
    TokenizerSource tokenizer;
    PromptSource prompt;
    bool json = false;
    bool no_special = false;
    bool no_bos = false;
};

std::string ids_line(const std::vector<TokenId>& ids) {
    std::string line;
    line.reserve(ids.size() * 6 + 1);
    char buf[16];
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) line += ' ';
        auto r = std::to_chars(buf, buf + sizeof buf, ids[i]);
        line.append(buf, r.ptr);
    }
    return line;
}

// {"model", "ids": [...], "tokens": [{"id", "token", "bytes"}]}: token is printable text (invalid UTF-8
// replaced by U+FFFD), bytes the exact byte values, since a token may be part of a character.
std::string ids_json(const LoadedTokenizer& t, const std::vector<TokenId>& ids, size_t added) {
    nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
    for (TokenId id : ids) tokens.push_back(token_json(t.get(), id));
    nlohmann::ordered_json doc = {{"model", t.source},
                                  {"ids", ids},
                                  {"added", std::vector<TokenId>(ids.begin(), ids.begin() + std::ptrdiff_t(added))},
                                  {"tokens", std::move(tokens)}};
    return json_text(doc);
}

// The ids a model reads for the text, as next and generate feed it (and llama-tokenize, HF's
// encode show it): the tokenizer's special prefix (BOS for Llama/SPM, none for GPT-2) first,
// unless --no-bos.
void run(const TokenizeOptions& opt) {
    std::string text = read_prompt(opt.prompt);
    const LoadedTokenizer tok = load_tokenizer(opt.tokenizer);
    std::vector<TokenId> ids = opt.no_bos ? std::vector<TokenId>{} : tok.get().special_prefix();
    const size_t added = ids.size();
    if (added > 0) spdlog::info("tokenize: {} special token(s) put first, as the model reads a prompt (--no-bos: the text alone)", added);
    const std::vector<TokenId> text_ids = tok.get().encode(text, !opt.no_special);
    ids.insert(ids.end(), text_ids.begin(), text_ids.end());
    out_line(opt.json ? ids_json(tok, ids, added) : ids_line(ids));
}

}  // namespace

void register_tokenize(CLI::App& app) {
    auto opt = std::make_shared<TokenizeOptions>();
    CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text, as the model reads it (BOS first when the model adds one; --no-bos without)");
    add_tokenizer_options(cmd, opt->tokenizer);
    add_prompt_options(cmd, opt->prompt);
    cmd->add_flag("--json", opt->json, "Print JSON: model, ids, the special ids put first (added), and each token's text and bytes");
    cmd->add_flag("--no-bos", opt->no_bos,
                  "The text's ids alone, without the special prefix (BOS) put first as the model reads a prompt");
    cmd->add_flag("--no-special", opt->no_special, "Treat special tokens such as <|endoftext|> as plain text");
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
