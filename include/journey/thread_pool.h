// A tiny persistent pool for our own parallel loops (gemv, the BF16 gemm). It is sized by -t,
// like OpenBLAS, and the two never run at once: a forward pass calls one or the other, in turn.
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
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

private:
    int n_;
    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable start_, done_;
    const std::function<void(int, int)>* job_ = nullptr;
    unsigned generation_ = 0;
    int pending_ = 0;
    bool stop_ = false;

    void work(int i);
};

// The process-wide pool, resized by set_num_threads().
ThreadPool& thread_pool();
void resize_thread_pool(int n_threads);

}  // namespace journey
