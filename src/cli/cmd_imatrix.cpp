// journey imatrix -m MODEL -f TEXT [-o imatrix.gguf] [-c 512] [--chunks N]: the importance matrix
// llama-imatrix computes (library code in src/convert/imatrix.cpp; this file holds the flags).
#include <cstdio>
#include <memory>

#include "commands.h"
#include "common.h"
#include "journey/convert/imatrix.h"
#include "journey/errors.h"
#include "journey/text/prompt.h"
#include "model_options.h"
#include "progress.h"

namespace journey::cli {
namespace {

struct ImatrixOptions {
    ModelOptions model;
    std::string text, out = "imatrix.gguf";
    int chunks = -1;
    bool kv_given = false;  // --kv-type given; else F16, llama-imatrix's default cache
};

void run(const ImatrixOptions& o) {
    if (o.text.empty()) throw UsageError("-f: give the text file to compute the importance matrix on");
    const int chunk = o.model.ctx_size > 0 ? o.model.ctx_size : 512;
    const std::string text = read_file(o.text, "-f");
    auto model = load_model(o.model, Placement::in_place);
    // llama-imatrix: the whole text with BOS, special tokens not parsed
    const std::vector<TokenId> ids = encode_prompt(model->tokenizer(), text, false);
    const int n = std::min<int>(o.chunks < 0 ? INT32_MAX : o.chunks, int(ids.size() / size_t(chunk)));
    if (n >= 2) std::fprintf(stderr, "imatrix: %zu tokens, computing over %d chunks of %d\n", ids.size(), n, chunk);
    Imatrix m;
    {
        auto bar = progress_bar("imatrix", "chunks");
        m = compute_imatrix(*model, ids, chunk, o.chunks, o.kv_given ? o.model.kv_type : KvType::f16, [&](int done, int total) {
            bar(size_t(done), size_t(total));
            if (done % 10 == 0 || done == total) std::fprintf(stderr, "imatrix: chunk %d/%d\n", done, total);
        });
    }
    m.datasets.push_back(o.text);
    write_imatrix(m, o.out);
    std::fprintf(stderr, "imatrix: %zu entries from %lld chunks written to %s\n", m.entries.size(),
                 static_cast<long long>(m.chunk_count), o.out.c_str());
}

}  // namespace

void register_imatrix(CLI::App& app) {
    auto opt = std::make_shared<ImatrixOptions>();
    CLI::App* cmd = app.add_subcommand("imatrix", "Compute an importance matrix for quantize --imatrix, as llama-imatrix does");
    add_model_options(cmd, opt->model);
    cmd->add_option("-f,--file", opt->text, "The text to run (chunks of -c tokens, default 512)")->required();
    cmd->add_option("-o,--output", opt->out, "The imatrix.gguf to write (default imatrix.gguf)");
    cmd->add_option("--chunks", opt->chunks, "At most this many chunks (default: all)");
    cmd->callback([opt, cmd] {
        opt->kv_given = cmd->count("--kv-type") > 0;
        run(*opt);
    });
}

}  // namespace journey::cli
