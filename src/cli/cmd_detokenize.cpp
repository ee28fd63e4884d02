// journey detokenize: token ids -> the exact bytes they stand for.
#include <charconv>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "tokenizer_options.h"

namespace journey::cli {
namespace {

struct DetokenizeOptions {
    TokenizerSource tokenizer;
    std::vector<std::string> ids;  // as written; none: read white-space separated ids from stdin
};

std::vector<std::string> words_of_stdin() {
    if (isatty(STDIN_FILENO)) throw UsageError("no ids: give them as arguments or pipe them on stdin");
    std::vector<std::string> words;
    std::string w;
    while (std::cin >> w) words.push_back(w);
    return words;
}

TokenId parse_id(const std::string& word, int32_t n_vocab) {
    TokenId id = -1;
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (ec != std::errc() || end != word.data() + word.size())
        throw InputError("\"" + word + "\" is not a token id");
    if (id < 0 || id >= n_vocab)
        throw InputError("token id " + word + " is out of range [0, " + std::to_string(n_vocab) + ")");
    return id;
}

void run(const DetokenizeOptions& opt) {
    std::unique_ptr<Tokenizer> tok = load_tokenizer(opt.tokenizer);
    std::vector<std::string> words = opt.ids.empty() ? words_of_stdin() : opt.ids;
    std::vector<TokenId> ids;
    ids.reserve(words.size());
    for (const std::string& w : words) ids.push_back(parse_id(w, tok->n_vocab()));
    out(tok->decode(ids));  // checks every id before anything is written
}

}  // namespace

void register_detokenize(CLI::App& app) {
    auto opt = std::make_shared<DetokenizeOptions>();
    CLI::App* cmd = app.add_subcommand("detokenize", "Write the exact bytes of token ids");
    add_tokenizer_options(cmd, opt->tokenizer);
    cmd->add_option("ids", opt->ids, "Token ids (default: read them from stdin)");
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
