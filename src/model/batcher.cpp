#include "journey/model/batcher.h"

#include <thread>

namespace journey {

void Batcher::run(int workers, const std::function<void(int)>& work) {
    std::exception_ptr first_error;
    std::mutex error_m;
    {
        std::lock_guard lk(m_);
        working_ = workers;
    }
    std::vector<std::thread> threads;
    threads.reserve(size_t(workers));
    for (int i = 0; i < workers; ++i)
        threads.emplace_back([&, i] {
            turn_.lock();
            try {
                work(i);
            } catch (...) {
                std::lock_guard e(error_m);
                if (!first_error) first_error = std::current_exception();
            }
            turn_.unlock();
            std::lock_guard lk(m_);
            --working_;
            cv_.notify_all();
        });
    for (;;) {
        std::vector<Request*> round;
        {
            std::unique_lock lk(m_);
            cv_.wait(lk, [&] { return static_cast<int>(pending_.size()) == working_; });
            if (pending_.empty()) break;  // every worker has returned
            round.swap(pending_);
        }
        {
            std::lock_guard t(turn_);  // the last worker to hand in may not have let go of it yet
            run_round(round);
            std::lock_guard lk(m_);
            for (Request* r : round) r->done = true;
            cv_.notify_all();
        }
    }
    for (std::thread& t : threads) t.join();
    if (first_error) std::rethrow_exception(first_error);
}

void Batcher::run_round(std::vector<Request*>& round) {
    std::vector<Session*> sessions;
    std::vector<TokenId> tokens;
    std::vector<Request*> batched;
    for (Request* r : round) {
        if (r->tokens.size() == 1 && r->which == LogitsFor::last) {
            sessions.push_back(r->session);
            tokens.push_back(r->tokens[0]);
            batched.push_back(r);
            continue;
        }
        try {  // a prompt: alone (the prompt kernels are bound by compute, not by reading weights)
            r->result = r->session->eval_here(r->tokens, r->which);
        } catch (...) {
            r->error = std::current_exception();
        }
        ++stats_.passes;
    }
    if (batched.empty()) return;
    ++stats_.passes;
    stats_.batched_tokens += long(batched.size());
    stats_.largest = std::max(stats_.largest, long(batched.size()));
    try {
        const std::vector<std::span<const float>> out = Session::eval_tokens(sessions, tokens);
        for (size_t i = 0; i < batched.size(); ++i) batched[i]->result = out[i];
    } catch (...) {  // one session's error (a full context): each alone, so only its own fails
        for (Request* r : batched) {
            try {
                r->result = r->session->eval_here(r->tokens, r->which);
            } catch (...) {
                r->error = std::current_exception();
            }
        }
    }
}

std::span<const float> Batcher::eval(Session& s, std::span<const TokenId> tokens, LogitsFor which) {
    Request r{&s, tokens, which, {}, {}, false};
    {
        std::lock_guard lk(m_);
        pending_.push_back(&r);
        cv_.notify_all();
    }
    turn_.unlock();
    {
        std::unique_lock lk(m_);
        cv_.wait(lk, [&] { return r.done; });
    }
    turn_.lock();
    if (r.error) std::rethrow_exception(r.error);
    return r.result;
}

Batcher::Away::Away(Batcher* b) : b_(b) {
    if (!b_) return;
    {
        std::lock_guard lk(b_->m_);
        --b_->working_;
        b_->cv_.notify_all();
    }
    b_->turn_.unlock();
}

Batcher::Away::~Away() {
    if (!b_) return;
    b_->turn_.lock();
    std::lock_guard lk(b_->m_);
    ++b_->working_;
}

}  // namespace journey
