// The sampler chain, one stage at a time, on small vocabularies with hand-computed answers.
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/errors.h"
#include "journey/decode/sampler.h"

using namespace journey;
using Catch::Matchers::Contains;

namespace {

std::vector<TokenId> ids(const Candidates& c) {
    std::vector<TokenId> out;
    for (const auto& x : c) out.push_back(x.id);
    return out;
}

std::vector<float> logits(const Candidates& c) {
    std::vector<float> out;
    for (const auto& x : c) out.push_back(x.logit);
    return out;
}

void require_probs(const Candidates& c, const std::vector<double>& expected) {
    REQUIRE(c.size() == expected.size());
    for (size_t i = 0; i < c.size(); ++i) CHECK(c[i].p == Approx(expected[i]).margin(1e-6));
}

// Logits whose softmax is exactly the given distribution (log p).
std::vector<float> log_of(const std::vector<double>& p) {
    std::vector<float> out;
    for (double x : p) out.push_back(float(std::log(x)));
    return out;
}

SamplerOptions no_truncation() {
    SamplerOptions o;
    o.temperature = 1.0f;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    o.seed = 1;
    return o;
}

}  // namespace

TEST_CASE("softmax of 1, 2, 3", "[sampler]") {
    const std::vector<float> l{1, 2, 3};
    Candidates c = make_candidates(l);
    CHECK(ids(c) == std::vector<TokenId>{0, 1, 2});
    softmax(c);
    // e^x / (e + e^2 + e^3)
    require_probs(c, {0.09003057, 0.24472847, 0.66524096});
}

TEST_CASE("sort: logit descending, ties to the lower id", "[sampler]") {
    const std::vector<float> l{1, 3, 2, 3, 0};
    Candidates c = make_candidates(l);
    sort_candidates(c);
    CHECK(ids(c) == std::vector<TokenId>{1, 3, 2, 0, 4});
}

TEST_CASE("non-finite logits stay orderable", "[sampler]") {
    const std::vector<float> l{NAN, INFINITY, -INFINITY, 0.0f};
    Candidates c = make_candidates(l);
    sort_candidates(c);
    CHECK(ids(c) == std::vector<TokenId>{1, 3, 0, 2});
    softmax(c);
    require_probs(c, {1, 0, 0, 0});
}

TEST_CASE("repetition penalty: llama.cpp semantics over the last N tokens", "[sampler]") {
    const std::vector<float> l{2.0f, -2.0f, 1.0f, 0.5f};
    const std::vector<TokenId> history{2, 0, 1, 3};  // last 3: {0, 1, 3}

    SECTION("positive divided, negative multiplied, outside the window untouched") {
        Candidates c = make_candidates(l);
        apply_repeat_penalty(c, history, 3, 2.0f);
        CHECK(logits(c) == std::vector<float>{1.0f, -4.0f, 1.0f, 0.25f});
    }
    SECTION("last_n = -1: the whole history") {
        Candidates c = make_candidates(l);
        apply_repeat_penalty(c, history, -1, 2.0f);
        CHECK(logits(c) == std::vector<float>{1.0f, -4.0f, 0.5f, 0.25f});
    }
    SECTION("last_n longer than the history") {
        Candidates c = make_candidates(l);
        apply_repeat_penalty(c, history, 64, 2.0f);
        CHECK(logits(c) == std::vector<float>{1.0f, -4.0f, 0.5f, 0.25f});
    }
    SECTION("a token repeated many times is penalised once") {
        Candidates c = make_candidates(l);
        const std::vector<TokenId> zeros{0, 0, 0, 0};
        apply_repeat_penalty(c, zeros, 64, 2.0f);
        CHECK(logits(c) == std::vector<float>{1.0f, -2.0f, 1.0f, 0.5f});
    }
    SECTION("off: penalty 1 or last_n 0") {
        Candidates c = make_candidates(l);
        apply_repeat_penalty(c, history, 64, 1.0f);
        apply_repeat_penalty(c, history, 0, 2.0f);
        CHECK(logits(c) == l);
    }
    SECTION("penalty below 1 encourages repetition") {
        Candidates c = make_candidates(l);
        apply_repeat_penalty(c, history, 64, 0.5f);
        CHECK(logits(c) == std::vector<float>{4.0f, -1.0f, 2.0f, 1.0f});
    }
}

TEST_CASE("top-k", "[sampler]") {
    const std::vector<float> l{1, 3, 2, 3, 0};
    Candidates c = make_candidates(l);
    SECTION("k = 2 keeps the two best (a tie at 3: both)") {
        apply_top_k(c, 2);
        CHECK(ids(c) == std::vector<TokenId>{1, 3});
    }
    SECTION("k = 3") {
        apply_top_k(c, 3);
        CHECK(ids(c) == std::vector<TokenId>{1, 3, 2});
    }
    SECTION("k = 0 is off, but sorts") {
        apply_top_k(c, 0);
        CHECK(ids(c) == std::vector<TokenId>{1, 3, 2, 0, 4});
    }
    SECTION("k larger than the vocabulary keeps all") {
        apply_top_k(c, 100);
        CHECK(c.size() == 5);
    }
    SECTION("a tie at the boundary goes to the lower id") {
        const std::vector<float> t{5, 1, 1, 1};
        Candidates d = make_candidates(t);
        apply_top_k(d, 2);
        CHECK(ids(d) == std::vector<TokenId>{0, 1});
    }
}

TEST_CASE("top-p keeps the smallest set reaching P", "[sampler]") {
    // p = 0.125, 0.5, 0.125, 0.25 by id; sorted: 1 (0.5), 3 (0.25), 0 (0.125), 2 (0.125).
    const auto l = log_of({0.125, 0.5, 0.125, 0.25});
    Candidates c = make_candidates(l);
    SECTION("P = 0.7: 0.5 < 0.7 <= 0.75, two survive, renormalised") {
        apply_top_p(c, 0.7f);
        CHECK(ids(c) == std::vector<TokenId>{1, 3});
        require_probs(c, {2.0 / 3, 1.0 / 3});
    }
    SECTION("P = 0.4: the best alone") {
        apply_top_p(c, 0.4f);
        CHECK(ids(c) == std::vector<TokenId>{1});
        require_probs(c, {1.0});
    }
    SECTION("P = 0.9: 0.875 < 0.9, all four") {
        apply_top_p(c, 0.9f);
        CHECK(ids(c) == std::vector<TokenId>{1, 3, 0, 2});
        require_probs(c, {0.5, 0.25, 0.125, 0.125});
    }
    SECTION("P = 1 is off") {
        apply_top_p(c, 1.0f);
        CHECK(c.size() == 4);
        require_probs(c, {0.5, 0.25, 0.125, 0.125});
    }
    SECTION("a tiny P still keeps one") {
        apply_top_p(c, 1e-6f);
        CHECK(ids(c) == std::vector<TokenId>{1});
    }
}

TEST_CASE("min-p keeps p >= M * p_max", "[sampler]") {
    const auto l = log_of({0.5, 0.25, 0.125, 0.125});
    Candidates c = make_candidates(l);
    SECTION("M = 0.3: threshold 0.15") {
        apply_min_p(c, 0.3f);
        CHECK(ids(c) == std::vector<TokenId>{0, 1});
    }
    SECTION("M = 0.6: threshold 0.3") {
        apply_min_p(c, 0.6f);
        CHECK(ids(c) == std::vector<TokenId>{0});
    }
    SECTION("M = 0.2: threshold 0.1 keeps all") {
        apply_min_p(c, 0.2f);
        CHECK(c.size() == 4);
    }
    SECTION("M = 0 is off") {
        apply_min_p(c, 0.0f);
        CHECK(c.size() == 4);
    }
    SECTION("M = 1 keeps the maximum and its ties") {
        const std::vector<float> t{2, 2, 1};
        Candidates d = make_candidates(t);
        apply_min_p(d, 1.0f);
        CHECK(ids(d) == std::vector<TokenId>{0, 1});
    }
}

TEST_CASE("temperature", "[sampler]") {
    const std::vector<float> l{1, 2, 3};
    Candidates c = make_candidates(l);
    SECTION("T = 0.5 doubles the logits") {
        apply_temperature(c, 0.5f);
        CHECK(logits(c) == std::vector<float>{2, 4, 6});
        softmax(c);
        // e^{2,4,6} / sum
        require_probs(c, {0.01587624, 0.11731043, 0.86681333});
    }
    SECTION("T = 2 halves them") {
        apply_temperature(c, 2.0f);
        softmax(c);
        require_probs(c, {0.18632372, 0.30719589, 0.50648039});
    }
    SECTION("T = 0 is greedy") {
        apply_temperature(c, 0.0f);
        CHECK(ids(c) == std::vector<TokenId>{2});
    }
    SECTION("T = 0 breaks ties to the lowest id") {
        const std::vector<float> t{3, 5, 5, 1};
        Candidates d = make_candidates(t);
        apply_temperature(d, 0.0f);
        CHECK(ids(d) == std::vector<TokenId>{1});
    }
}

TEST_CASE("the whole chain, by hand", "[sampler]") {
    // p = 0.4, 0.3, 0.2, 0.06, 0.04.
    // top-k 4:    0.4, 0.3, 0.2, 0.06 (/0.96) = .41667 .3125 .20833 .0625
    // top-p 0.85: cumulative .41667 .72917 .9375 -> three: 4/9, 3/9, 2/9
    // min-p 0.6:  threshold 0.6 * 4/9 = .2667 -> two: 4/7, 3/7
    // T = 0.5:    p^2 renormalised -> 16/25, 9/25
    SamplerOptions o;
    o.top_k = 4;
    o.top_p = 0.85f;
    o.min_p = 0.6f;
    o.temperature = 0.5f;
    o.seed = 7;
    const Sampler s(o);
    const auto l = log_of({0.4, 0.3, 0.2, 0.06, 0.04});
    const Candidates c = s.candidates(l, {});
    CHECK(ids(c) == std::vector<TokenId>{0, 1});
    require_probs(c, {0.64, 0.36});
}

TEST_CASE("the penalty runs before truncation", "[sampler]") {
    // Token 0 leads until penalised: 2 / 4 = 0.5 < 1, so greedy picks token 1.
    SamplerOptions o = no_truncation();
    o.temperature = 0.0f;
    o.repeat_penalty = 4.0f;
    Sampler s(o);
    const std::vector<float> l{2.0f, 1.0f, 0.0f};
    const std::vector<TokenId> history{0};
    CHECK(s.sample(l, {}) == 0);
    CHECK(s.sample(l, history) == 1);
}

TEST_CASE("defaults are llama.cpp's", "[sampler]") {
    const SamplerOptions o;
    CHECK(o.temperature == 0.8f);
    CHECK(o.top_k == 40);
    CHECK(o.top_p == 0.95f);
    CHECK(o.min_p == 0.05f);
    CHECK(o.repeat_penalty == 1.0f);
    CHECK(o.repeat_last_n == 64);
    CHECK_FALSE(o.seed.has_value());
    CHECK_NOTHROW(validate(o));
}

TEST_CASE("uniform_01 uses the top 53 bits of mt19937_64", "[sampler]") {
    // The C++ standard fixes the 10000th output of a default-seeded mt19937_64.
    std::mt19937_64 rng;
    rng.discard(9999);
    CHECK(uniform_01(rng) == double(9981545732273789042ull >> 11) * 0x1.0p-53);
}

TEST_CASE("draw walks the cumulative distribution", "[sampler]") {
    // The first output of mt19937_64(5489) is 14514284786278117030: u = 0.78683...
    // p = 0.5, 0.25, 0.25 -> cumulative 0.5, 0.75, 1.0 -> token 2.
    const auto l = log_of({0.5, 0.25, 0.25});
    Candidates c = make_candidates(l);
    std::mt19937_64 rng(5489);
    CHECK(draw(c, rng) == 2);
    require_probs(c, {0.5, 0.25, 0.25});
}

TEST_CASE("same seed, same draws; the effective seed reproduces", "[sampler]") {
    const std::vector<float> l{0.1f, 0.2f, 0.3f, 0.1f, 0.0f, 0.25f};
    SamplerOptions o = no_truncation();
    auto run = [&](const SamplerOptions& opts) {
        Sampler s(opts);
        std::vector<TokenId> out;
        for (int i = 0; i < 200; ++i) out.push_back(s.sample(l, {}));
        return out;
    };
    o.seed = 42;
    const auto a = run(o);
    CHECK(a == run(o));
    o.seed = 43;
    CHECK(a != run(o));

    SamplerOptions random = no_truncation();
    random.seed.reset();
    const Sampler r(random);
    random.seed = r.seed();
    CHECK(run(random) == run(random));
}

TEST_CASE("draws follow the truncated, tempered softmax (chi-square)", "[sampler]") {
    const std::vector<float> l{2.0f, 1.5f, 1.0f, 0.5f, 0.0f, -1.0f};
    SamplerOptions o;
    o.top_k = 5;
    o.top_p = 0.9f;
    o.min_p = 0.0f;
    o.temperature = 0.7f;
    o.seed = 20240601;

    // Expected, computed independently of the stages: the logits are already sorted.
    std::vector<double> p1(l.begin(), l.begin() + o.top_k);  // top-k
    double z = 0;
    for (double x : p1) z += std::exp(x);
    size_t keep = 0;
    for (double cum = 0; keep < p1.size() && cum < o.top_p; ++keep) cum += std::exp(p1[keep]) / z;
    REQUIRE(keep == 4);  // .4287 .6887 .8464 .9421: top-p removes one more
    std::vector<double> expected(l.size(), 0.0);
    double zt = 0;
    for (size_t i = 0; i < keep; ++i) zt += std::exp(l[i] / o.temperature);
    for (size_t i = 0; i < keep; ++i) expected[i] = std::exp(l[i] / o.temperature) / zt;

    Sampler s(o);
    const int n = 200000;
    std::vector<int> count(l.size(), 0);
    for (int i = 0; i < n; ++i) ++count.at(size_t(s.sample(l, {})));

    CHECK(count[4] == 0);
    CHECK(count[5] == 0);
    double chi2 = 0;
    for (size_t i = 0; i < keep; ++i) {
        const double e = expected[i] * n;
        chi2 += (count[i] - e) * (count[i] - e) / e;
    }
    INFO("chi-square " << chi2 << " with " << keep - 1 << " degrees of freedom");
    // 3 degrees of freedom: P(chi2 > 30) is about 1e-6. The seed is fixed, so this is stable.
    CHECK(chi2 < 30.0);
}

TEST_CASE("validation names the flag", "[sampler]") {
    auto bad = [](auto change) {
        SamplerOptions o;
        change(o);
        return o;
    };
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.temperature = -0.1f; })), Contains("--temp"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.temperature = NAN; })), Contains("--temp"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.top_p = 0.0f; })), Contains("--top-p"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.top_p = 1.5f; })), Contains("--top-p"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.top_k = -1; })), Contains("--top-k"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.min_p = -0.01f; })), Contains("--min-p"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.min_p = 1.01f; })), Contains("--min-p"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.repeat_penalty = 0.0f; })), Contains("--repeat-penalty"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.repeat_penalty = -1.0f; })), Contains("--repeat-penalty"));
    CHECK_THROWS_WITH(validate(bad([](auto& o) { o.repeat_last_n = -2; })), Contains("--repeat-last-n"));
    CHECK_THROWS_AS(validate(bad([](auto& o) { o.top_k = -1; })), UsageError);
    CHECK_THROWS_AS(Sampler(bad([](auto& o) { o.top_p = 2.0f; })), UsageError);

    // The edges that are allowed.
    CHECK_NOTHROW(validate(bad([](auto& o) { o.temperature = 0.0f; })));
    CHECK_NOTHROW(validate(bad([](auto& o) { o.top_p = 1.0f; })));
    CHECK_NOTHROW(validate(bad([](auto& o) { o.top_k = 0; })));
    CHECK_NOTHROW(validate(bad([](auto& o) { o.min_p = 0.0f; })));
    CHECK_NOTHROW(validate(bad([](auto& o) { o.min_p = 1.0f; })));
    CHECK_NOTHROW(validate(bad([](auto& o) { o.repeat_last_n = -1; })));
}

TEST_CASE("log_softmax: temperature 1, finite floor", "[sampler]") {
    const std::vector<float> l{1, 2, 3};
    const auto lp = journey::log_softmax(l);
    // logsumexp(1, 2, 3) = 3.40760596
    REQUIRE(lp.size() == 3);
    CHECK(lp[0] == Approx(-2.40760596));
    CHECK(lp[1] == Approx(-1.40760596));
    CHECK(lp[2] == Approx(-0.40760596));

    const std::vector<float> extreme{0.0f, 1e5f, -INFINITY, NAN};
    const auto e = journey::log_softmax(extreme);
    CHECK(e[0] == kLogprobFloor);
    CHECK(e[1] == Approx(0.0).margin(1e-6));
    CHECK(e[2] == kLogprobFloor);
    CHECK(e[3] == kLogprobFloor);
    for (float x : e) CHECK(std::isfinite(x));
}

TEST_CASE("top_logprobs: best first, ties to the lower id", "[sampler]") {
    const std::vector<float> lp{-1.0f, -0.5f, -2.0f, -0.5f};
    const auto top = top_logprobs(lp, 3);
    REQUIRE(top.size() == 3);
    CHECK(top[0].id == 1);
    CHECK(top[1].id == 3);
    CHECK(top[2].id == 0);
    CHECK(top[2].logprob == -1.0f);
    CHECK(top_logprobs(lp, 10).size() == 4);
    CHECK(top_logprobs(lp, 0).empty());
}
