#include "journey/text/hf/tokenizer_json_reader.h"

#include <vector>

#include "journey/formats/json_file.h"
#include "journey/formats/mapped_file.h"

namespace journey {
namespace {

using json = nlohmann::json;

// Builds the tree as nlohmann's own DOM parser does (later duplicate keys win), except below
// root.model.vocab and root.model.merges, whose entries go to the tables.
class Reader : public nlohmann::json_sax<json> {
public:
    explicit Reader(BpeTables& tables) : tables_(tables) {}

    json root;
    bool unusable = false;  // something the tables cannot hold, or invalid JSON: read it the plain way

    bool null() override { return value(json()); }
    bool boolean(bool v) override { return value(json(v)); }
    bool number_integer(number_integer_t v) override {
        if (mode_ == Mode::Vocab) return vocab_id(v);
        return value(json(v));
    }
    bool number_unsigned(number_unsigned_t v) override {
        if (mode_ == Mode::Vocab) return v <= uint64_t(INT32_MAX) ? vocab_id(int64_t(v)) : refuse();
        return value(json(v));
    }
    bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
    bool binary(binary_t&) override { return refuse(); }
    bool string(string_t& s) override {
        switch (mode_) {
            case Mode::Merges: {  // "a b"
                const size_t space = s.find(' ');
                if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) return refuse();
                const std::string_view v(s);
                return tables_.add_merge(v.substr(0, space), v.substr(space + 1)) || refuse();
            }
            case Mode::Merge:  // ["a", "b"]
                if (merge_parts_ >= 2) return refuse();
                ++merge_parts_;
                return tables_.add_merge_part(s) || refuse();
            case Mode::Vocab: return refuse();
            case Mode::Tree: return value(json(std::move(s)));
        }
        return refuse();
    }
    bool start_object(std::size_t) override {
        if (mode_ != Mode::Tree) return refuse();
        if (stack_.size() == 2 && key_ == "vocab" && at_model()) {
            if (saw_vocab_) return refuse();  // a repeated key: the tree keeps the last one
            mode_ = Mode::Vocab;
            saw_vocab_ = true;
            return true;
        }
        return open(json::object());
    }
    bool key(string_t& k) override {
        if (mode_ == Mode::Vocab) vocab_key_.swap(k);
        else key_ = std::move(k);
        return true;
    }
    bool end_object() override {
        if (mode_ == Mode::Vocab) {
            mode_ = Mode::Tree;
            return true;
        }
        stack_.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        if (mode_ == Mode::Merges) {
            mode_ = Mode::Merge;
            merge_parts_ = 0;
            return true;
        }
        if (mode_ != Mode::Tree) return refuse();
        if (stack_.size() == 2 && key_ == "merges" && at_model()) {
            if (saw_merges_) return refuse();
            mode_ = Mode::Merges;
            saw_merges_ = true;
            return true;
        }
        return open(json::array());
    }
    bool end_array() override {
        if (mode_ == Mode::Merge) {
            if (merge_parts_ != 2) return refuse();
            mode_ = Mode::Merges;
            return true;
        }
        if (mode_ == Mode::Merges) {
            mode_ = Mode::Tree;
            return true;
        }
        stack_.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return refuse(); }

    bool read_both() const { return saw_vocab_ && saw_merges_; }

private:
    enum class Mode { Tree, Vocab, Merges, Merge };

    bool refuse() {
        unusable = true;
        return false;
    }
    // The innermost open value is root.model.
    bool at_model() const { return stack_.size() == 2 && model_ == stack_[1] && model_->is_object(); }
    bool vocab_id(int64_t id) {
        if (id < 0 || id > INT32_MAX) return refuse();
        return tables_.add_token(vocab_key_, TokenId(id)) || refuse();
    }
    // A scalar in the tree.
    bool value(json v) {
        if (mode_ != Mode::Tree) return refuse();
        if (stack_.empty()) {
            root = std::move(v);
            return true;
        }
        json& parent = *stack_.back();
        if (parent.is_array()) parent.push_back(std::move(v));
        else parent[key_] = std::move(v);
        return true;
    }
    // An object or array in the tree, which later values go into.
    bool open(json v) {
        json* at;
        if (stack_.empty()) {
            root = std::move(v);
            at = &root;
        } else {
            json& parent = *stack_.back();
            if (parent.is_array()) {
                parent.push_back(std::move(v));
                at = &parent.back();
            } else {
                at = &(parent[key_] = std::move(v));
                if (stack_.size() == 1 && key_ == "model") model_ = at;
            }
        }
        stack_.push_back(at);
        return true;
    }

    BpeTables& tables_;
    std::vector<json*> stack_;
    json* model_ = nullptr;
    std::string key_, vocab_key_;
    Mode mode_ = Mode::Tree;
    int merge_parts_ = 0;
    bool saw_vocab_ = false, saw_merges_ = false;
};

}  // namespace

TokenizerJson parse_tokenizer_json(std::string_view text, const std::string& file) {
    TokenizerJson out;
    if (json_depth_ok(text)) {
        Reader reader(out.tables);
        const bool ok = json::sax_parse(text.begin(), text.end(), &reader, nlohmann::detail::input_format_t::json, true);
        // Both parts in the tables (a file with only one of them is rare: read it the plain way).
        if (ok && !reader.unusable && reader.read_both() && reader.root.is_object()) {
            out.root = std::move(reader.root);
            out.tables.read = true;
            return out;
        }
    }
    out.tables = BpeTables();
    out.root = parse_json(text, file);
    // Every reader below takes the root for an object (found by fuzz_tokenizer_json: a bare number
    // reached nlohmann's value(), whose type_error escaped as "terminate called").
    if (!out.root.is_object()) throw ModelError(file + ": not a JSON object");
    return out;
}

TokenizerJson read_tokenizer_json(const std::string& file) {
    const MappedFile mapped(file);
    return parse_tokenizer_json(std::string_view(reinterpret_cast<const char*>(mapped.data()), mapped.size()), file);
}

}  // namespace journey
