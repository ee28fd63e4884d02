// The pool's contract: run(fn) calls fn(i, n) exactly once for every i in [0, n) and returns
// only after all of them, whether the workers were spinning (runs back to back) or asleep
// (a pause longer than the spin), and from the very first run after construction.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "journey/kernels/thread_pool.h"

using journey::ThreadPool;

namespace {

// One run: every thread adds its index+1 to its own slot; the slots are checked after run().
void check_one_run(ThreadPool& pool, std::vector<std::atomic<int>>& hits) {
    for (auto& h : hits) h.store(0);
    pool.run([&](int i, int n) {
        REQUIRE(n == pool.size());
        hits[static_cast<size_t>(i)].fetch_add(i + 1);
    });
    for (size_t i = 0; i < hits.size(); ++i) REQUIRE(hits[i].load() == static_cast<int>(i) + 1);
}

}  // namespace

TEST_CASE("thread pool: every index exactly once per run, spinning or asleep", "[threads]") {
    for (int n : {1, 2, 3, 4}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        for (int trial = 0; trial < 20; ++trial) {  // a run straight after construction, repeatedly
            ThreadPool pool(n);
            check_one_run(pool, hits);
        }
        ThreadPool pool(n);
        for (int k = 0; k < 2000; ++k) check_one_run(pool, hits);  // back to back: workers spin
        for (int k = 0; k < 5; ++k) {                              // after a pause: workers sleep
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
            check_one_run(pool, hits);
        }
    }
}

TEST_CASE("thread pool: work done inside run is visible after it returns", "[threads]") {
    ThreadPool pool(2);
    std::vector<int> data(1 << 16, 0);  // plain ints: run() must order the writes before its return
    for (int round = 1; round <= 50; ++round) {
        pool.run([&](int i, int n) {
            const size_t lo = data.size() * static_cast<size_t>(i) / static_cast<size_t>(n);
            const size_t hi = data.size() * static_cast<size_t>(i + 1) / static_cast<size_t>(n);
            for (size_t j = lo; j < hi; ++j) data[j] += 1;
        });
        size_t wrong = 0;
        for (int v : data) wrong += v != round;
        REQUIRE(wrong == 0);
    }
}
