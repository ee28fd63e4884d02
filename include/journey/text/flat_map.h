// A small open-addressing hash map (linear probing, power-of-two capacity, no erase) for the
// tokenizer's hot lookups: merge pairs and the piece cache. Slots hold key, value and 32 bits of
// the hash inline, so a lookup is usually one cache miss, where std::unordered_map chases bucket
// and node pointers; and a slot is small (24 bytes for a merge pair or a string_view -> id), so
// the GPT-2 tables are 3 MB each, which matters to load time (every new page is a page fault).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// Strings a word at a time, each word through mix64 (short keys as wyhash reads them): 8-byte
// words, the last one ending at the end; a string under 8 bytes as two 4-byte reads, or under 4
// as its first, middle and last byte. The reads may overlap but cover every byte, and the length
// is hashed too. Tokens and pre-tokenizer pieces are mostly one or two words, where a byte loop
// (FNV-1a) waited for one multiply per byte.
struct BytesHash {
    uint64_t operator()(std::string_view key) const {
        const char* p = key.data();
        const size_t n = key.size();
        uint64_t h = n * 0x9e3779b97f4a7c15ULL;
        if (n >= 8) {
            for (size_t i = 0; i + 8 < n; i += 8) h = mix64(h ^ load<uint64_t>(p + i));
            return mix64(h ^ load<uint64_t>(p + n - 8));
        }
        if (n >= 4) return mix64(h ^ load<uint32_t>(p) ^ (uint64_t{load<uint32_t>(p + n - 4)} << 32));
        if (n > 0) {
            const auto byte = [&](size_t i) { return uint64_t{static_cast<unsigned char>(p[i])}; };
            return mix64(h ^ (byte(0) << 16) ^ (byte(n / 2) << 8) ^ byte(n - 1));
        }
        return h;
    }

private:
    template <class Word>
    static Word load(const char* p) {
        Word w;
        std::memcpy(&w, p, sizeof w);
        return w;
    }
};

template <class Key, class Value, class Hash>
class FlatMap {
public:
    explicit FlatMap(size_t expected = 8) { resize(slots_for(expected)); }

    const Value* find(const Key& key) const { return find(key, Hash{}(key)); }

    // For lookups in batches: hash() the keys, prefetch() their slots, then find(key, hash) them
    // (a table bigger than the cache costs a memory round trip a lookup; batched, they overlap).
    static uint64_t hash(const Key& key) { return Hash{}(key); }
    void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }
    const Value* find(const Key& key, uint64_t h) const {
        const uint32_t t = tag(h);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.tag == 0) return nullptr;
            if (s.tag == t && s.key == key) return &s.value;
        }
    }

    // Inserts, or replaces the value of an existing key.
    void insert_or_assign(const Key& key, const Value& value) { insert_or_assign(key, value, Hash{}(key)); }
    void insert_or_assign(const Key& key, const Value& value, uint64_t h) {
        if ((size_ + 1) * 2 > slots_.size()) resize(slots_.size() * 2);
        place(h, key, value);
    }

    size_t size() const { return size_; }

private:
    struct Slot {
        Key key{};
        Value value{};
        uint32_t tag = 0;  // 0: empty
    };

    // The high half of the hash (the low bits pick the slot), never 0. It rules out almost every
    // other key in the probe sequence without comparing keys.
    static uint32_t tag(uint64_t h) { return static_cast<uint32_t>(h >> 32) | 1u; }

    static size_t slots_for(size_t expected) {
        size_t n = 16;
        while (n < expected * 2) n *= 2;
        return n;
    }

    void place(uint64_t h, const Key& key, const Value& value) {
        const uint32_t t = tag(h);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.tag == 0) {
                s = Slot{key, value, t};
                ++size_;
                return;
            }
            if (s.tag == t && s.key == key) {
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
            if (s.tag != 0) place(Hash{}(s.key), s.key, s.value);
    }

    std::vector<Slot> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

// (left id, right id) -> two 32-bit values (a merge's rank and merged id), in 16-byte slots:
// the key is the pair packed in 64 bits, and the empty slot's key is one no pair of ids in
// [0, 2^31) makes. Sized once for the expected count (at most 2/3 full), so that 280k merges
// take 8 MB, not the 24 MB of a FlatMap at most half full.
class PairMap {
public:
    struct Entry {
        uint64_t key = kEmpty;
        int32_t a = 0, b = 0;
    };

    explicit PairMap(size_t expected = 8) { resize(slots_for(expected)); }

    static uint64_t key(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
    }
    void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[mix64(key) & mask_]); }
    const Entry* find(uint64_t key) const {
        for (size_t i = mix64(key) & mask_;; i = (i + 1) & mask_) {
            const Entry& e = slots_[i];
            if (e.key == key) return &e;
            if (e.key == kEmpty) return nullptr;
        }
    }
    // Inserts, or replaces the values of an existing key. `key` is a key() of ids in [0, 2^31).
    void insert_or_assign(uint64_t key, int32_t a, int32_t b) {
        if ((size_ + 1) * 3 > slots_.size() * 2) resize(slots_.size() * 2);
        place(Entry{key, a, b});
    }
    size_t size() const { return size_; }

private:
    static constexpr uint64_t kEmpty = ~uint64_t{0};

    static size_t slots_for(size_t expected) {
        size_t n = 16;
        while (n * 2 < expected * 3) n *= 2;
        return n;
    }
    void place(const Entry& x) {
        for (size_t i = mix64(x.key) & mask_;; i = (i + 1) & mask_) {
            Entry& e = slots_[i];
            if (e.key == kEmpty) ++size_;
            if (e.key == kEmpty || e.key == x.key) {
                e = x;
                return;
            }
        }
    }
    void resize(size_t n_slots) {
        std::vector<Entry> old;
        old.swap(slots_);
        slots_.resize(n_slots);
        mask_ = n_slots - 1;
        size_ = 0;
        for (const Entry& e : old)
            if (e.key != kEmpty) place(e);
    }

    std::vector<Entry> slots_;
    size_t mask_ = 0;
    size_t size_ = 0;
};

// string -> 32-bit id, for strings the caller keeps (an arena), handed to each call as
// `text_of(id)`: a slot is the id and 32 bits of the hash, 8 bytes (a FlatMap slot of a
// string_view is 24), so 128k tokens take 2 MB. Grows by rehashing the strings.
class IdMap {
public:
    explicit IdMap(size_t expected = 8) : slots_(slots_for(expected)), mask_(slots_.size() - 1) {}

    static uint64_t hash(std::string_view key) { return BytesHash{}(key); }
    void prefetch(uint64_t h) const { __builtin_prefetch(&slots_[h & mask_]); }

    template <class TextOf>
    const int32_t* find(std::string_view key, uint64_t h, const TextOf& text_of) const {
        const uint32_t t = tag(h);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& s = slots_[i];
            if (s.tag == 0) return nullptr;
            if (s.tag == t && text_of(s.id) == key) return &s.id;
        }
    }
    template <class TextOf>
    const int32_t* find(std::string_view key, const TextOf& text_of) const {
        return find(key, hash(key), text_of);
    }
    // Inserts, or replaces the id of an existing key; text_of(id) must be `key`.
    template <class TextOf>
    void insert_or_assign(std::string_view key, int32_t id, uint64_t h, const TextOf& text_of) {
        if ((size_ + 1) * 2 > slots_.size()) {
            std::vector<Slot> old(slots_for(slots_.size()));
            old.swap(slots_);
            mask_ = slots_.size() - 1;
            size_ = 0;
            for (const Slot& s : old)
                if (s.tag != 0) place(text_of(s.id), s.id, hash(text_of(s.id)), text_of);
        }
        place(key, id, h, text_of);
    }
    size_t size() const { return size_; }

private:
    struct Slot {
        uint32_t tag = 0;  // 0: empty
        int32_t id = 0;
    };
    static uint32_t tag(uint64_t h) { return static_cast<uint32_t>(h >> 32) | 1u; }
    static size_t slots_for(size_t expected) {
        size_t n = 16;
        while (n < expected * 2) n *= 2;
        return n;
    }
    template <class TextOf>
    void place(std::string_view key, int32_t id, uint64_t h, const TextOf& text_of) {
        const uint32_t t = tag(h);
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            Slot& s = slots_[i];
            if (s.tag == 0) {
                s = Slot{t, id};
                ++size_;
                return;
            }
            if (s.tag == t && text_of(s.id) == key) {
                s.id = id;
                return;
            }
        }
    }

    std::vector<Slot> slots_;
    size_t mask_;
    size_t size_ = 0;
};

}  // namespace journey
