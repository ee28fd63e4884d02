// A tiny persistent pool for our own parallel loops (gemv, the quantized and BF16 products). It
// is sized by -t, like OpenBLAS, and the two never run at once: a forward pass calls one or the
// other, in turn.
//
// Generating one token runs ~50 short parallel loops back to back, each a few hundred
// microseconds. Waking a sleeping thread through the kernel costs tens of microseconds, so
// the threads spin briefly before they sleep: a worker that has just finished a loop is still
// spinning when the next one starts, and one that sees no work for a while sleeps (C++20
// atomic wait, a futex on Linux) and costs nothing.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace journey {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);  // n_threads - 1 workers; the caller is thread 0
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_; }
    // Calls fn(i, size()) once on each of the size() threads (i = 0 on the caller); returns
    // when every call has returned. fn must split its work by i itself and must not throw.
    void run(const std::function<void(int, int)>& fn);
    // Called from inside a job on a worker (i > 0; a no-op on the caller's thread): once this
    // worker has reported its part done, it asks for the lines of [p, p + n) into L2 while it
    // waits, stopping early if the next job comes. For the lines it will read first in the next
    // product (lookahead.h): its waiting time then moves them from memory instead of idling.
    static void warm_when_done(const std::byte* p, size_t n);

private:
    int n_;
    std::vector<std::thread> workers_;
    const std::function<void(int, int)>* job_ = nullptr;  // published by generation_
    std::atomic<unsigned> generation_{0};                  // +1 per run; odd values never mean stop
    std::atomic<int> pending_{0};                          // workers still inside the current job
    std::atomic<bool> stop_{false};

    void work(int i);
};

// The process-wide pool, resized by set_num_threads().
ThreadPool& thread_pool();
void resize_thread_pool(int n_threads);

// While one lives, thread_pool() on this thread is a pool of one: every parallel loop of a pass
// this thread runs, it runs alone. For work shared out across threads at a coarser grain than
// the loops (patch's grid cells, each a whole pass on its own thread); the kernels give the same
// bits at any thread count, so a pass run this way is bit for bit the pass at -t N.
class SerialScope {
public:
    SerialScope();
    ~SerialScope();
    SerialScope(const SerialScope&) = delete;
    SerialScope& operator=(const SerialScope&) = delete;

private:
    ThreadPool one_{1};
    ThreadPool* outer_;
};

}  // namespace journey
