#include "journey/thread_pool.h"

#include <algorithm>
#include <memory>

namespace journey {

ThreadPool::ThreadPool(int n_threads) : n_(std::max(1, n_threads)) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    start_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::run(const std::function<void(int, int)>& fn) {
    if (n_ == 1) return fn(0, 1);
    {
        std::lock_guard lock(mu_);
        job_ = &fn;
        pending_ = n_ - 1;
        ++generation_;
    }
    start_.notify_all();
    fn(0, n_);
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
}

void ThreadPool::work(int i) {
    unsigned seen = 0;
    for (;;) {
        const std::function<void(int, int)>* job;
        {
            std::unique_lock lock(mu_);
            start_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
        }
        (*job)(i, n_);
        std::lock_guard lock(mu_);
        if (--pending_ == 0) done_.notify_one();
    }
}

namespace {
std::unique_ptr<ThreadPool> g_pool;
}

ThreadPool& thread_pool() {
    if (!g_pool) g_pool = std::make_unique<ThreadPool>(1);
    return *g_pool;
}

void resize_thread_pool(int n) {
    if (!g_pool || g_pool->size() != n) g_pool = std::make_unique<ThreadPool>(n);
}

}  // namespace journey
