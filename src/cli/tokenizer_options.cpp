#include "tokenizer_options.h"

#include "journey/errors.h"
#include "journey/text/tokenizer_loader.h"

namespace journey::cli {

void add_tokenizer_options(CLI::App* cmd, TokenizerSource& src) {
    add_model_options(cmd, src.model);
    // A tokenizer runs no model: the session's flags would do nothing here.
    for (const char* flag : {"-t", "-c", "--kv-type", "--mmap", "--no-mmap"}) cmd->remove_option(cmd->get_option(flag));
    auto* m = cmd->get_option("-m");
    auto* v = cmd->add_option("--vocab", src.vocab, "GPT-2 vocab.json (with --merges), instead of a model's tokenizer");
    auto* g = cmd->add_option("--merges", src.merges, "GPT-2 merges.txt (with --vocab)");
    auto* t = cmd->add_option("--tokenizer-json", src.tokenizer_json, "Hugging Face tokenizer.json, instead of a model's");
    auto* tk = cmd->get_option("--tokenizer");
    v->needs(g);
    g->needs(v);
    m->excludes(v)->excludes(g)->excludes(t);
    t->excludes(v)->excludes(g)->excludes(tk);
    tk->excludes(v)->excludes(g);
}

LoadedTokenizer load_tokenizer(const TokenizerSource& src) {
    LoadedTokenizer t;
    if (!src.tokenizer_json.empty()) {
        t.own = open_tokenizer(journey::TokenizerSpec::json_file(src.tokenizer_json));
        t.source = src.tokenizer_json;
    } else if (!src.vocab.empty()) {
        t.own = open_tokenizer(journey::TokenizerSpec::gpt2_files(src.vocab, src.merges));
        t.source = src.vocab;
    } else if (!src.model.tokenizer.empty() && src.model.path.empty()) {
        // --tokenizer alone: that file is the whole answer; no model needed.
        check_tokenizer_path(src.model.tokenizer);
        t.own = open_tokenizer(journey::TokenizerSpec::at(src.model.tokenizer));
        t.source = src.model.tokenizer;
    } else if (const ModelPath m = resolve_model_path(src.model); tokenizer_only(m.path)) {
        // A tokenizer alone (models/gpt2-tokenizer, a vocabulary-only GGUF): no model needed.
        t.own = open_tokenizer(journey::TokenizerSpec::at(m.path));
        t.source = m.path.string();
    } else {
        t.model = load_model(src.model, Placement::in_place);  // for its tokenizer
        t.source = t.model->source().string();
    }
    return t;
}

}  // namespace journey::cli
