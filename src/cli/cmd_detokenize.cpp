// journey detokenize: token ids -> the exact bytes they stand for.
#include <memory>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "commands.h"
#include "common.h"
#include "journey/errors.h"
#include "journey/text/token_display.h"
#include "prompt_ids.h"
#include "tokenizer_options.h"

namespace journey::cli {
namespace {

struct DetokenizeOptions {
    TokenizerSource tokenizer;
    std::vector<std::string> ids;  // as written; none: read ids from stdin
    bool json = false;
};

// The ids as written on the command line or stdin: white space or commas between them, or one
// JSON array (`tokenize --json | jq -c .ids | journey detokenize`).
std::vector<TokenId> read_ids(const DetokenizeOptions& opt) {
    std::string list;
    for (const std::string& w : opt.ids) list += w + ' ';
    if (opt.ids.empty()) {
        if (isatty(STDIN_FILENO)) throw UsageError("no ids: give them as arguments or pipe them on stdin");
        list = read_file("-", "stdin");
    }
    return parse_id_list(list, opt.ids.empty() ? "stdin" : "ids");
}

void run(const DetokenizeOptions& opt) {
    const std::vector<TokenId> ids = read_ids(opt);
    const LoadedTokenizer tok = load_tokenizer(opt.tokenizer);
    check_ids(ids, tok.get().n_vocab(), opt.ids.empty() ? "stdin" : "ids");
    const std::string bytes = tok.get().decode(ids);
    if (!opt.json) return out(bytes);  // exact bytes, no newline added
    nlohmann::ordered_json j = {{"model", tok.source}, {"text", valid_utf8(bytes)}, {"bytes", bytes_json(bytes)}};
    out_line(json_text(j));
}

}  // namespace

void register_detokenize(CLI::App& app) {
    auto opt = std::make_shared<DetokenizeOptions>();
    CLI::App* cmd = app.add_subcommand("detokenize", "Write the exact bytes of token ids");
    add_tokenizer_options(cmd, opt->tokenizer);
    cmd->add_option("ids", opt->ids, "Token ids, or one JSON array of them (default: read them from stdin)");
    cmd->add_flag("--json", opt->json, "Print JSON: model, text (valid UTF-8) and the exact bytes");
    cmd->callback([opt] { run(*opt); });
}

}  // namespace journey::cli
