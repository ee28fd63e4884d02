// SHA-256 (FIPS 180-4) and the list of a model's files for the trace page's provenance block.
#include "journey/trace/provenance.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include "journey/errors.h"

#if defined(__SHA__) && defined(__SSE4_1__)
#include <immintrin.h>
#define JOURNEY_SHA_NI 1
#endif

namespace journey {
namespace {

constexpr std::array<uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#ifdef JOURNEY_SHA_NI
// One 64-byte block with the x86 SHA extensions (the same rounds, four schedule words at a time;
// ~5x the portable loop below, which matters for a model of several GB).
void block_sha_ni(uint32_t* state, const unsigned char* p) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);  // CDAB
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);  // EFGH
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);   // ABEF
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);        // CDGH
    const __m128i abef = s0, cdgh = s1;
    __m128i m[4];
    for (int i = 0; i < 4; ++i)
        m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), mask);
    for (int g = 0; g < 16; ++g) {  // rounds 4g .. 4g+3
        const __m128i cur = m[g & 3];
        __m128i msg = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kK.data() + 4 * g)));
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        if (g >= 3 && g < 15) {  // the next group's words
            __m128i& next = m[(g + 1) & 3];
            next = _mm_sha256msg2_epu32(_mm_add_epi32(next, _mm_alignr_epi8(cur, m[(g + 3) & 3], 4)), cur);
        }
        msg = _mm_shuffle_epi32(msg, 0x0E);
        s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
        if (g >= 1 && g < 13) m[(g + 3) & 3] = _mm_sha256msg1_epu32(m[(g + 3) & 3], cur);
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    tmp = _mm_shuffle_epi32(s0, 0x1B);     // FEBA
    s1 = _mm_shuffle_epi32(s1, 0xB1);      // DCHG
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);   // DCBA
    s1 = _mm_alignr_epi8(s1, tmp, 8);      // ABEF -> HGFE
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state), s0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), s1);
}
#endif

class Sha256 {
public:
    void update(const unsigned char* p, size_t n) {
        total_ += n;
        if (fill_) {
            const size_t take = std::min(n, size_t(64) - fill_);
            std::memcpy(buf_ + fill_, p, take);
            fill_ += take, p += take, n -= take;
            if (fill_ < 64) return;
            block(buf_);
            fill_ = 0;
        }
        for (; n >= 64; p += 64, n -= 64) block(p);
        std::memcpy(buf_, p, n);
        fill_ = n;
    }
    std::string hex() {
        const uint64_t bits = total_ * 8;
        const unsigned char one = 0x80, zero = 0;
        update(&one, 1);
        while (fill_ != 56) update(&zero, 1);
        unsigned char len[8];
        for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
        update(len, 8);
        static const char* digits = "0123456789abcdef";
        std::string out;
        for (uint32_t v : h_)
            for (int s = 28; s >= 0; s -= 4) out += digits[(v >> s) & 15];
        return out;
    }

private:
    std::array<uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char buf_[64] = {};
    size_t fill_ = 0;
    uint64_t total_ = 0;

    void block(const unsigned char* p) {
#ifdef JOURNEY_SHA_NI
        block_sha_ni(h_.data(), p);
        return;
#endif
        uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; ++i) {
            const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
        for (int i = 0; i < 64; ++i) {
            const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[size_t(i)] + w[i];
            const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
        }
        h_[0] += a, h_[1] += b, h_[2] += c, h_[3] += d, h_[4] += e, h_[5] += f, h_[6] += g, h_[7] += h;
    }
};

bool model_file(const std::string& name) {
    const auto ends = [&](std::string_view s) { return name.size() >= s.size() && name.ends_with(s); };
    return ends(".safetensors") || ends(".gguf") || ends(".bin") || name == "config.json" || name == "vocab.json" ||
           name == "merges.txt" || name == "tokenizer_config.json" ||
           (name.starts_with("tokenizer") && ends(".json")) || ends(".model");
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
    Sha256 s;
    s.update(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    return s.hex();
}

std::string sha256_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path.string() + ": cannot read for its SHA-256: " + std::strerror(errno));
    Sha256 s;
    std::vector<char> buf(size_t(1) << 20);
    while (in) {
        in.read(buf.data(), std::streamsize(buf.size()));
        s.update(reinterpret_cast<const unsigned char*>(buf.data()), size_t(in.gcount()));
    }
    if (in.bad()) throw InputError(path.string() + ": read error while hashing");
    return s.hex();
}

nlohmann::json model_files_json(const std::filesystem::path& source) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    if (fs::is_directory(source)) {
        for (const auto& e : fs::directory_iterator(source))
            if (e.is_regular_file() && model_file(e.path().filename().string())) files.push_back(e.path());
        std::sort(files.begin(), files.end());
    } else {
        files.push_back(source);
    }
    nlohmann::json out = nlohmann::json::array();
    for (const fs::path& f : files)
        out.push_back({{"name", f.filename().string()}, {"bytes", fs::file_size(f)}, {"sha256", sha256_file(f)}});
    return out;
}

}  // namespace journey
