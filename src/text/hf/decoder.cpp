#include "journey/text/hf/decoder.h"

#include <cctype>
#include <cstdio>
#include <utility>

#include "journey/errors.h"
#include "journey/text/byte_unicode.h"
#include "journey/text/unicode.h"

namespace journey {
namespace decoders {  // tokenizers.decoders
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
    if (from.empty()) return;
    std::string out;
    size_t prev = 0;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + from.size())) {
        out.append(s, prev, at - prev);
        out += to;
        prev = at + from.size();
    }
    if (prev == 0) return;
    out.append(s, prev);
    s = std::move(out);
}

// A token whose every character is in GPT-2's byte map gives those bytes; any other token is
// kept as it is (HF's rule: all characters or none).
class ByteLevel final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        for (std::string& t : tokens) {
            std::string raw = unicode_to_bytes(t);
            if (bytes_to_unicode(raw) == t) t = std::move(raw);
        }
    }
};

class Metaspace final : public Decoder {
public:
    explicit Metaspace(const HfPart& part) : replacement_(part.string("replacement")) {
        prepend_ = part.has("prepend_scheme") ? part.string("prepend_scheme") != "never"
                                              : part.boolean("add_prefix_space", true);
    }
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        for (size_t i = 0; i < tokens.size(); ++i)  // HF drops every "▁" of the first token
            replace_all(tokens[i], replacement_, i == 0 && prepend_ && !continuation ? "" : " ");
    }

private:
    std::string replacement_;
    bool prepend_ = true;
};

// Runs of <0xNN> tokens become their bytes.
class ByteFallback final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        std::vector<std::string> out;
        std::string bytes;
        bool in_bytes = false;
        for (std::string& t : tokens) {
            unsigned value = 0;
            const bool is_byte = t.size() == 6 && t.starts_with("<0x") && t[5] == '>' && std::sscanf(t.c_str() + 3, "%2x", &value) == 1 &&
                                 std::isxdigit(static_cast<unsigned char>(t[3])) && std::isxdigit(static_cast<unsigned char>(t[4]));
            if (is_byte) {
                bytes += static_cast<char>(value);
                in_bytes = true;
                continue;
            }
            if (in_bytes) out.push_back(std::move(bytes)), bytes.clear(), in_bytes = false;
            out.push_back(std::move(t));
        }
        if (in_bytes) out.push_back(std::move(bytes));
        tokens = std::move(out);
    }
};

class Fuse final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens.assign(1, std::move(all));
    }
    bool fuses() const override { return true; }
};

// Up to `start` leading and `stop` trailing copies of one character removed from each token.
class Strip final : public Decoder {
public:
    Strip(const HfPart& part, bool after_fuse)
        : content_(part.string("content")), start_(part.integer("start")), stop_(part.integer("stop")), after_fuse_(after_fuse) {
        if (content_.empty() || unicode::char_at(content_, 0).len != content_.size())
            part.fail("content " + HfPart::shown(content_) + " is not one character");
        if (start_ < 0 || stop_ < 0) part.fail("start and stop must not be negative");
    }
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        if (continuation && after_fuse_) return;  // the fused text's ends are not the text's
        for (std::string& t : tokens) {
            std::string_view v = t;
            for (int64_t i = 0; i < start_ && v.starts_with(content_); ++i) v.remove_prefix(content_.size());
            for (int64_t i = 0; i < stop_ && v.ends_with(content_); ++i) v.remove_suffix(content_.size());
            t = std::string(v);
        }
    }

private:
    std::string content_;
    int64_t start_, stop_;
    bool after_fuse_;
};

class Replace final : public Decoder {
public:
    explicit Replace(const HfPart& part) : content_(part.string("content")) {
        const HfPart pattern = part.at("pattern");
        if (!pattern.has("String")) pattern.fail("only a String pattern is supported in a Replace decoder");
        literal_ = pattern.string("String");
        if (literal_.empty()) pattern.fail("an empty String pattern is not supported");
    }
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        for (std::string& t : tokens) replace_all(t, literal_, content_);
    }

private:
    std::string literal_, content_;
};

class Sequence final : public Decoder {
public:
    explicit Sequence(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        // Bounded like the normalizer: a chain of Replace steps must not multiply the text.
        auto total = [&] {
            size_t n = 0;
            for (const std::string& t : tokens) n += t.size();
            return n;
        };
        const size_t n = total();
        for (const auto& s : steps_) {
            s->decode_chain(tokens, continuation);
            if (const size_t m = total(); m > 8 * n + (1u << 20))
                throw ModelError("the tokenizer's decoder would turn " + std::to_string(n) + " bytes into " + std::to_string(m) +
                                 " (more than 8 times as many plus 1 MiB; refused)");
        }
    }
    bool fuses() const override {
        for (const auto& s : steps_)
            if (s->fuses()) return true;
        return false;
    }

private:
    std::vector<std::unique_ptr<Decoder>> steps_;
};

std::unique_ptr<Decoder> make_step(const HfPart& part, bool after_fuse) {
    const std::string type = part.type();
    if (type == "ByteLevel") return std::make_unique<ByteLevel>();
    if (type == "Metaspace") return std::make_unique<Metaspace>(part);
    if (type == "ByteFallback") return std::make_unique<ByteFallback>();
    if (type == "Fuse") return std::make_unique<Fuse>();
    if (type == "Strip") return std::make_unique<Strip>(part, after_fuse);
    if (type == "Replace") return std::make_unique<Replace>(part);
    if (type == "Sequence") {
        const HfPart list = part.at("decoders");
        if (!list.j.is_array()) list.fail("is not an array");
        std::vector<std::unique_ptr<Decoder>> steps;
        for (size_t i = 0; i < list.j.size(); ++i) {
            steps.push_back(make_step(list.at(i), after_fuse));
            after_fuse = after_fuse || steps.back()->fuses();
        }
        return std::make_unique<Sequence>(std::move(steps));
    }
    part.fail("decoder type \"" + type + "\" is not supported (journey knows ByteLevel, Metaspace, ByteFallback, Fuse, "
              "Strip, Replace, Sequence)");
}

}  // namespace
}  // namespace decoders

std::unique_ptr<Decoder> make_decoder(const HfPart& part) {
    if (part.j.is_null()) return nullptr;
    return decoders::make_step(part, false);
}

}  // namespace journey
