// Sequences decoded together (continuous batching, `--parallel N`). Each sequence runs the
// ordinary loop (generate(), a batch record) on a worker thread of its own; its session's eval()
// (Session::set_batcher) hands the work to the batcher and waits. The batcher's thread, the one
// that called run(), waits until every worker at work has handed in an eval, then runs them:
// the one-token evals in one pass (Session::eval_tokens: each weight read once for all of them,
// every session's logits the bits it gets alone), short prompts together up to a prompt piece of
// rows (Session::eval_prompts), long prompts alone. Nothing runs at the same time as anything else: a worker holds the
// batcher's turn while it works and gives it up only while it waits, and the batcher holds it
// while it runs a pass; so the loops need no locks of their own, and every sequence's results
// are exactly those it gets when the sequences run one after another.
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <vector>

#include "journey/model/session.h"

namespace journey {

class Batcher {
public:
    // Runs work(0) .. work(workers - 1) each on a thread of its own, and the evals they hand in
    // on this thread, until all have returned. The first exception a worker throws is rethrown
    // here, after all have returned.
    void run(int workers, const std::function<void(int worker)>& work);

    // A worker's Session::eval: blocks until the batcher has run it.
    std::span<const float> eval(Session& s, std::span<const TokenId> tokens, LogitsFor which);

    // While one exists, its worker may block on something outside (reading stdin) without
    // holding up the others' evals; it has no turn meanwhile.
    class Away {
    public:
        explicit Away(Batcher* b);
        ~Away();
        Away(const Away&) = delete;
        Away& operator=(const Away&) = delete;

    private:
        Batcher* b_;
    };

    // Evals run so far: passes, and the sequences' one-token evals among them (stderr summary).
    struct Stats {
        long passes = 0, batched_tokens = 0, largest = 0;
    };
    const Stats& stats() const { return stats_; }

private:
    struct Request {
        Session* session;
        std::span<const TokenId> tokens;
        LogitsFor which;
        std::span<const float> result;
        std::exception_ptr error;
        bool done = false;
    };
    std::mutex m_;                // guards working_, pending_ and every Request's done
    std::condition_variable cv_;
    std::mutex turn_;             // held by whoever runs
    int working_ = 0;             // workers alive and not away
    std::vector<Request*> pending_;
    Stats stats_;

    void run_round(std::vector<Request*>& round);
    template <class Together>
    void run_together(std::vector<Request*>& group, Together together);
};

}  // namespace journey
