// journey tokenize: text -> token ids, one line of ids, or JSON with each token's bytes.
#include <charconv>
#include <memory>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "tokenizer_options.h"

namespace journey::cli {
namespace {

struct TokenizeOptions {
    TokenizerSource tokenizer;
    PromptSource prompt;
    bool json = false;
    bool no_special = false;
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

// {"ids": [...], "tokens": [{"id", "token", "bytes"}]}: token is printable text (invalid UTF-8
// replaced by U+FFFD), bytes the exact byte values, since a token may be part of a character.
std::string ids_json(const Tokenizer& tok, const std::vector<TokenId>& ids) {
    nlohmann::json tokens = nlohmann::json::array();
    for (TokenId id : ids) {
        std::string bytes = tok.token_bytes(id);
        nlohmann::json values = nlohmann::json::array();
        for (unsigned char b : bytes) values.push_back(b);
        tokens.push_back({{"id", id}, {"token", valid_utf8(bytes)}, {"bytes", std::move(values)}});
    }
    nlohmann::json doc = {{"ids", ids}, {"tokens", std::move(tokens)}};
    return doc.dump();
}

void run(const TokenizeOptions& opt) {
    std::string text = read_prompt(opt.prompt);
    std::unique_ptr<Tokenizer> tok = load_tokenizer(opt.tokenizer);
    std::vector<TokenId> ids = tok->encode(text, !opt.no_special);
    out_line(opt.json ? ids_json(*tok, ids) : ids_line(ids));
}

}  // namespace

void register_tokenize(CLI::App& app) {
    auto opt = std::make_shared<TokenizeOptions>();
    CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids of a text");
    add_tokenizer_options(cmd, opt->tokenizer);
    add_prompt_options(cmd, opt->prompt);
    cmd->add_flag("--json", opt->json, "Print JSON: ids, and each token's text and bytes");
    cmd->add_flag("--no-special", opt->no_special, "Treat special tokens such as <|endoftext|> as plain text");
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
