// Reading one part of a Hugging Face tokenizer.json (a normalizer, a pre-tokenizer, ...): where
// it is, for error messages ("tokenizer.json: pre_tokenizer.pretokenizers[0]: ..."), and typed
// access to its fields. Every failure is a ModelError naming the file and the part.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "journey/errors.h"

namespace journey {

struct HfPart {
    std::string file;  // the tokenizer.json
    std::string path;  // e.g. "pre_tokenizer.pretokenizers[1]"
    const nlohmann::json& j;

    [[noreturn]] void fail(const std::string& what) const { throw ModelError(file + ": " + path + ": " + what); }

    HfPart at(const char* key) const;  // the member key (must exist)
    HfPart at(size_t index) const;     // element index of an array
    bool has(const char* key) const { return j.is_object() && j.contains(key) && !j[key].is_null(); }

    // The "type" string of an object part.
    std::string type() const;
    bool boolean(const char* key, std::optional<bool> fallback = std::nullopt) const;
    std::string string(const char* key, std::optional<std::string> fallback = std::nullopt) const;
    int64_t integer(const char* key, std::optional<int64_t> fallback = std::nullopt) const;
    // The json value as it appears in a message: on one line, invalid UTF-8 replaced.
    static std::string shown(const nlohmann::json& v);
};

// A non-owning reference to a callable (the pieces a pre-tokenizer emits go to one).
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
public:
    template <class F>
    FunctionRef(F&& f) : obj_(const_cast<void*>(static_cast<const void*>(&f))),  // NOLINT: implicit on purpose
                         call_([](void* o, Args... a) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(a...); }) {}
    R operator()(Args... a) const { return call_(obj_, a...); }

private:
    void* obj_;
    R (*call_)(void*, Args...);
};

}  // namespace journey
