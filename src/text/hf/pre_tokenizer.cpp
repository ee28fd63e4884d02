#include "journey/text/hf/pre_tokenizer.h"

#include <utility>
#include <vector>

#include "journey/text/hf/normalizer.h"
#include "journey/text/onig_regex.h"
#include "journey/text/pretokenize.h"
#include "journey/text/split_scanners.h"
#include "journey/text/unicode.h"

namespace journey {
namespace pre_tokenizers {  // tokenizers.pre_tokenizers
namespace {

// HF's SplitDelimiterBehavior: what becomes of the matches of a pattern.
enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior read_behavior(const HfPart& part, const char* fallback = nullptr) {
    const std::string b = fallback ? part.string("behavior", std::string(fallback)) : part.string("behavior");
    if (b == "Removed") return Behavior::Removed;
    if (b == "Isolated") return Behavior::Isolated;
    if (b == "MergedWithPrevious") return Behavior::MergedWithPrevious;
    if (b == "MergedWithNext") return Behavior::MergedWithNext;
    if (b == "Contiguous") return Behavior::Contiguous;
    part.fail("behavior \"" + b + "\" is not Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
}

// A piece cut into stretches that match the pattern and stretches that do not, in order,
// covering it.
struct Stretch {
    size_t begin, end;
    bool match;
};

// Stretches from the (begin, end) matches of a pattern.
void to_stretches(size_t size, const std::vector<std::pair<size_t, size_t>>& matches, bool invert,
                  std::vector<Stretch>& out) {
    size_t prev = 0;
    for (const auto& [b, e] : matches) {
        if (prev != b) out.push_back({prev, b, invert});
        out.push_back({b, e, !invert});
        prev = e;
    }
    if (prev != size) out.push_back({prev, size, invert});
}

// HF's split_off_matches: applies the behavior to the stretches, emits the non-empty pieces.
void emit_split(std::string_view piece, bool at_start, std::vector<Stretch>& s, Behavior behavior, PieceSink emit) {
    std::vector<Stretch> merged;
    merged.reserve(s.size());
    bool previous_match = false;
    switch (behavior) {
    case Behavior::Removed:
        for (const Stretch& x : s)
            if (!x.match) merged.push_back(x);
        break;
    case Behavior::Isolated:
        merged = s;
        break;
    case Behavior::MergedWithPrevious:
        for (const Stretch& x : s) {
            if (x.match && !previous_match && !merged.empty()) merged.back().end = x.end;
            else merged.push_back(x);
            previous_match = x.match;
        }
        break;
    case Behavior::MergedWithNext:
        for (size_t i = s.size(); i-- > 0;) {
            const Stretch& x = s[i];
            if (x.match && !previous_match && !merged.empty()) merged.back().begin = x.begin;
            else merged.push_back(x);
            previous_match = x.match;
        }
        std::reverse(merged.begin(), merged.end());
        break;
    case Behavior::Contiguous:
        for (size_t i = 0; i < s.size(); ++i) {
            if (i > 0 && s[i].match == previous_match) merged.back().end = s[i].end;
            else merged.push_back(s[i]);
            previous_match = s[i].match;
        }
        break;
    }
    for (const Stretch& x : merged)
        if (x.end > x.begin) emit(piece.substr(x.begin, x.end - x.begin), at_start && x.begin == 0);
}

// Matches of a per-character predicate: each such character is one match.
template <class Pred>
void char_matches(std::string_view piece, Pred pred, std::vector<std::pair<size_t, size_t>>& out) {
    for (size_t pos = 0; pos < piece.size();) {
        const unicode::Char ch = unicode::char_at(piece, pos);
        if (pred(ch.cp)) out.emplace_back(pos, pos + ch.len);
        pos += ch.len;
    }
}

class Split final : public PreTokenizer {
public:
    explicit Split(const HfPart& part) : behavior_(read_behavior(part)), invert_(part.boolean("invert", false)) {
        literal_ = read_pattern(part, regex_);
        // The common patterns have scanners that split exactly as Oniguruma (tests prove it).
        if (regex_ && behavior_ == Behavior::Isolated && !invert_)
            scanner_ = scanner_for_pattern(part.at("pattern").string("Regex"));
    }
    void split(std::string_view piece, bool at_start, PieceSink emit) const override {
        if (scanner_) {  // the pattern matches every character: the matches are the pieces
            for (size_t pos = 0; pos < piece.size();) {
                const size_t end = scanner_(piece, pos);
                emit(piece.substr(pos, end - pos), at_start && pos == 0);
                pos = end;
            }
            return;
        }
        std::vector<std::pair<size_t, size_t>> matches;
        if (regex_) {
            regex_->find_all(piece, matches);
        } else {
            for (size_t at = piece.find(literal_); at != std::string_view::npos; at = piece.find(literal_, at + literal_.size()))
                matches.emplace_back(at, at + literal_.size());
        }
        std::vector<Stretch> stretches;
        to_stretches(piece.size(), matches, invert_, stretches);
        emit_split(piece, at_start, stretches, behavior_, emit);
    }

private:
    Behavior behavior_;
    bool invert_;
    std::string literal_;
    std::unique_ptr<OnigRegex> regex_;
    PieceScanner scanner_ = nullptr;
};

// Splits by a per-character predicate (Digits, Punctuation, WhitespaceSplit).
template <class Pred>
class CharSplit final : public PreTokenizer {
public:
    CharSplit(Pred pred, Behavior behavior) : pred_(pred), behavior_(behavior) {}
    void split(std::string_view piece, bool at_start, PieceSink emit) const override {
        std::vector<std::pair<size_t, size_t>> matches;
        char_matches(piece, pred_, matches);
        std::vector<Stretch> stretches;
        to_stretches(piece.size(), matches, false, stretches);
        emit_split(piece, at_start, stretches, behavior_, emit);
    }

private:
    Pred pred_;
    Behavior behavior_;
};
template <class Pred>
std::unique_ptr<PreTokenizer> char_split(Pred pred, Behavior behavior) {
    return std::make_unique<CharSplit<Pred>>(pred, behavior);
}

// \w+|[^\w\s]+, the matches kept (HF's Whitespace pre-tokenizer).
class Whitespace final : public PreTokenizer {
public:
    Whitespace() : regex_("\\w+|[^\\w\\s]+") {}
    void split(std::string_view piece, bool at_start, PieceSink emit) const override {
        std::vector<std::pair<size_t, size_t>> matches;
        regex_.find_all(piece, matches);
        std::vector<Stretch> stretches;
        to_stretches(piece.size(), matches, true, stretches);
        emit_split(piece, at_start, stretches, Behavior::Removed, emit);
    }

private:
    OnigRegex regex_;
};

// Spaces become the replacement character ("▁"), one is prepended as prepend_scheme says, and
// with split the piece is cut before each replacement character.
class Metaspace final : public PreTokenizer {
public:
    explicit Metaspace(const HfPart& part) {
        replacement_ = part.string("replacement");
        if (replacement_.empty() || unicode::char_at(replacement_, 0).len != replacement_.size())
            part.fail("replacement " + HfPart::shown(replacement_) + " is not one character");
        if (part.has("prepend_scheme")) {
            const std::string scheme = part.string("prepend_scheme");
            if (scheme != "always" && scheme != "first" && scheme != "never")
                part.fail("prepend_scheme \"" + scheme + "\" is not always, first or never");
            scheme_ = scheme[0];
        } else {  // older files: add_prefix_space, true meaning "always"
            scheme_ = part.boolean("add_prefix_space", true) ? 'a' : 'n';
        }
        split_ = part.boolean("split", true);
    }
    void split(std::string_view piece, bool at_start, PieceSink emit) const override {
        std::string text;
        text.reserve(piece.size() + replacement_.size());
        const bool prepend = (scheme_ == 'a' || (scheme_ == 'f' && at_start)) &&
                             !(piece.starts_with(replacement_) || piece.starts_with(' '));
        if (prepend) text += replacement_;
        for (char c : piece) {
            if (c == ' ') text += replacement_;
            else text += c;
        }
        if (!split_) {
            emit(text, at_start);
            return;
        }
        std::vector<std::pair<size_t, size_t>> matches;
        for (size_t at = text.find(replacement_); at != std::string::npos; at = text.find(replacement_, at + replacement_.size()))
            matches.emplace_back(at, at + replacement_.size());
        std::vector<Stretch> stretches;
        to_stretches(text.size(), matches, false, stretches);
        emit_split(text, at_start, stretches, Behavior::MergedWithNext, emit);
    }

private:
    std::string replacement_;
    char scheme_ = 'a';  // always, first, never
    bool split_ = true;
};

// GPT-2's: a space before each piece when add_prefix_space and the piece does not start with
// one, then (use_regex) GPT-2's split; the bytes are left as they are (see the header).
class ByteLevel final : public PreTokenizer {
public:
    explicit ByteLevel(const HfPart& part)
        : add_prefix_space_(part.boolean("add_prefix_space", true)), use_regex_(part.boolean("use_regex", true)) {}
    void split(std::string_view piece, bool at_start, PieceSink emit) const override {
        std::string prefixed;
        if (add_prefix_space_ && !piece.starts_with(' ')) {
            prefixed.reserve(piece.size() + 1);
            prefixed += ' ';
            prefixed += piece;
            piece = prefixed;
        }
        if (!use_regex_) {
            emit(piece, at_start);
            return;
        }
        for (size_t pos = 0; pos < piece.size();) {
            const size_t end = gpt2_piece_end(piece, pos);
            emit(piece.substr(pos, end - pos), at_start && pos == 0);
            pos = end;
        }
    }
    bool byte_level() const override { return true; }

private:
    bool add_prefix_space_, use_regex_;
};

class Sequence final : public PreTokenizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> stages) : stages_(std::move(stages)) {}
    void split(std::string_view piece, bool at_start, PieceSink emit) const override { run(0, piece, at_start, emit); }
    bool byte_level() const override { return !stages_.empty() && stages_.back()->byte_level(); }

private:
    void run(size_t k, std::string_view piece, bool at_start, PieceSink emit) const {
        if (k == stages_.size()) return emit(piece, at_start);
        stages_[k]->split(piece, at_start, [&](std::string_view p, bool s) { run(k + 1, p, s, emit); });
    }
    std::vector<std::unique_ptr<PreTokenizer>> stages_;
};

// One pre-tokenizer, Sequences flattened into `stages`.
void add_stages(const HfPart& part, std::vector<std::unique_ptr<PreTokenizer>>& stages) {
    const std::string type = part.type();
    if (type == "Sequence") {
        const HfPart list = part.at("pretokenizers");
        if (!list.j.is_array()) list.fail("is not an array");
        for (size_t i = 0; i < list.j.size(); ++i) add_stages(list.at(i), stages);
        return;
    }
    if (!stages.empty() && stages.back()->byte_level())
        part.fail(type + " after ByteLevel is not supported (ByteLevel must be the last pre-tokenizer)");
    if (type == "ByteLevel") {
        stages.push_back(std::make_unique<ByteLevel>(part));
    } else if (type == "Split") {
        stages.push_back(std::make_unique<Split>(part));
    } else if (type == "Digits") {
        const bool individual = part.boolean("individual_digits", false);
        stages.push_back(char_split(unicode::is_numeric, individual ? Behavior::Isolated : Behavior::Contiguous));
    } else if (type == "Metaspace") {
        stages.push_back(std::make_unique<Metaspace>(part));
    } else if (type == "Whitespace") {
        stages.push_back(std::make_unique<Whitespace>());
    } else if (type == "WhitespaceSplit") {
        stages.push_back(char_split(unicode::is_white_space, Behavior::Removed));
    } else if (type == "Punctuation") {
        stages.push_back(char_split(unicode::is_punctuation, read_behavior(part, "Isolated")));
    } else {
        part.fail("pre_tokenizer type \"" + type + "\" is not supported (journey knows ByteLevel, Split, Digits, "
                  "Metaspace, Whitespace, WhitespaceSplit, Punctuation, Sequence)");
    }
}

}  // namespace
}  // namespace pre_tokenizers

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const HfPart& part) {
    if (part.j.is_null()) return nullptr;
    std::vector<std::unique_ptr<PreTokenizer>> stages;
    pre_tokenizers::add_stages(part, stages);
    if (stages.size() == 1) return std::move(stages[0]);
    return std::make_unique<pre_tokenizers::Sequence>(std::move(stages));
}

}  // namespace journey
