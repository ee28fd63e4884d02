#include "journey/kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <immintrin.h>

namespace journey {
namespace {

// Spins until pred() holds or ~200 us have passed; returns pred(). The first ~20 us use the
// CPU's pause hint only; after that each check also yields, so that on a machine with more
// runnable threads than cores a spinning worker gives its core to one with work.
template <class Pred>
bool spin_until(Pred pred) {
    using namespace std::chrono;
    const auto t0 = steady_clock::now();
    for (int k = 0;; ++k) {
        if (pred()) return true;
        _mm_pause();
        if ((k & 63) != 63) continue;
        const auto waited = steady_clock::now() - t0;
        if (waited > microseconds(200)) return pred();
        if (waited > microseconds(20)) std::this_thread::yield();
    }
}

thread_local const std::byte* t_warm = nullptr;  // a worker's lines to ask for once done
thread_local size_t t_warm_n = 0;
thread_local bool t_is_worker = false;

}  // namespace

void ThreadPool::warm_when_done(const std::byte* p, size_t n) {
    if (!t_is_worker) return;
    t_warm = p;
    t_warm_n = n;
}

ThreadPool::ThreadPool(int n_threads) : n_(n_threads < 1 ? 1 : n_threads) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
    if (n_ == 1) return fn(0, 1);
    job_ = &fn;
    pending_.store(n_ - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);  // publishes job_ and pending_
    generation_.notify_all();
    fn(0, n_);
    if (!spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; }))
        for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(p);
    job_ = nullptr;
}

void ThreadPool::work(int i) {
    t_is_worker = true;
    unsigned seen = 0;  // the value at construction: a run may come before this thread starts
    for (;;) {
        if (!spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; }))
            generation_.wait(seen, std::memory_order_acquire);
        seen = generation_.load(std::memory_order_acquire);
        if (stop_.load()) return;
        (*job_)(i, n_);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
        // 64 lines at a time, while no new job has come
        for (size_t at = 0; at < t_warm_n && generation_.load(std::memory_order_relaxed) == seen; at += 4096)
            for (size_t b = at; b < std::min(t_warm_n, at + 4096); b += 64)
                _mm_prefetch(reinterpret_cast<const char*>(t_warm + b), _MM_HINT_T1);
        t_warm_n = 0;
    }
}

namespace {
std::unique_ptr<ThreadPool> g_pool;
thread_local ThreadPool* t_serial = nullptr;  // a SerialScope's pool of one on this thread
}  // namespace

SerialScope::SerialScope() : outer_(t_serial) { t_serial = &one_; }
SerialScope::~SerialScope() { t_serial = outer_; }

ThreadPool& thread_pool() {
    if (t_serial) return *t_serial;
    if (!g_pool) g_pool = std::make_unique<ThreadPool>(1);
    return *g_pool;
}

void resize_thread_pool(int n) {
    if (!g_pool || g_pool->size() != n) g_pool = std::make_unique<ThreadPool>(n);
}

}  // namespace journey
