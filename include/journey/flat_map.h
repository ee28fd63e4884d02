// A small open-addressing hash map (linear probing, power-of-two capacity, no erase) for the
// tokenizer's hot lookups: merge pairs and the piece cache. Slots hold key, value and hash inline,
// so a lookup is usually one cache miss, where std::unordered_map chases bucket and node pointers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace journey {

// Finaliser of splitmix64: spreads every input bit over the low bits the table uses.
inline uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct IntHash {
    uint64_t operator()(uint64_t key) const { return mix64(key); }
};

// FNV-1a, then mixed: pre-tokenizer pieces are short, so a byte loop is fast enough.
struct BytesHash {
    uint64_t operator()(std::string_view key) const {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
        return mix64(h);
    }
};

template <class Key, class Value, class Hash>
class FlatMap {
public:
    explicit FlatMap(size_t expected = 8) { resize(slots_for(expected)); }

    const Value* find(const Key& key) const {
        const uint64_t h = Hash{}(key);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (!s.used) return nullptr;
            if (s.hash == h && s.key == key) return &s.value;
        }
    }

    // Inserts, or replaces the value of an existing key.
    void insert_or_assign(const Key& key, const Value& value) {
        if ((size_ + 1) * 2 > slots_.size()) resize(slots_.size() * 2);
        place(Hash{}(key), key, value);
    }

    size_t size() const { return size_; }

private:
    struct Slot {
        Key key{};
        Value value{};
        uint64_t hash = 0;
        bool used = false;
    };

    static size_t slots_for(size_t expected) {
        size_t n = 16;
        while (n < expected * 2) n *= 2;
        return n;
    }

    void place(uint64_t h, const Key& key, const Value& value) {
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (!s.used) {
                s = Slot{key, value, h, true};
                ++size_;
                return;
            }
            if (s.hash == h && s.key == key) {
                s.value = value;
                return;
            }
        }
    }

    void resize(size_t n_slots) {
        std::vector<Slot> old;
        old.swap(slots_);
        slots_.resize(n_slots);
        mask_ = n_slots - 1;
        size_ = 0;
        for (const Slot& s : old)
            if (s.used) place(s.hash, s.key, s.value);
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

}  // namespace journey
