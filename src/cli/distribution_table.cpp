#include "distribution_table.h"

#include <cstdio>

#include "journey/text/token_display.h"

namespace journey::cli {

std::vector<std::string> distribution_table(const Tokenizer& tok, const Distribution& d) {
    std::vector<std::string> lines{" rank      prob    logprob     id  token"};
    for (size_t i = 0; i < d.top.size(); ++i) {
        const Ranked& r = d.top[i];
        char buf[96];
        std::snprintf(buf, sizeof buf, "%5zu  %8.6f  %9.4f  %5d  ", i + 1, r.prob, r.logprob, r.id);
        lines.push_back(buf + visible_token(tok.token_bytes(r.id)));
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "entropy %.4f nats", d.entropy);
    lines.push_back(buf);
    return lines;
}

}  // namespace journey::cli
