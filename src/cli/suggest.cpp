#include "suggest.h"

#include <algorithm>

namespace journey::cli {

namespace {

// Edits between a and b: insertions, deletions, substitutions and swaps of two neighbouring
// letters ("--tmep" is one swap from --temp, two substitutions from --mmap): the optimal string
// alignment distance.
size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
        for (size_t j = 1; j <= b.size(); ++j) {
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const std::string& c : candidates) {
        // "gen" -> "generate": a prefix is as good as a one-letter typo.
        const size_t d = (word.size() >= 2 && c.starts_with(word)) ? 1 : edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

}  // namespace journey::cli
