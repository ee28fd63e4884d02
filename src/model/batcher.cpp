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

// Runs `group` (requests of one kind) together through `together`, or each alone when it fails
// (one session's error, a full context, is then its own only).
template <class Together>
void Batcher::run_together(std::vector<Request*>& group, Together together) {
    if (group.empty()) return;
    ++stats_.passes;
    if (group.size() > 1) {
        stats_.batched_tokens += long(group.size());
        stats_.largest = std::max(stats_.largest, long(group.size()));
        try {
            together();
            return;
        } catch (...) {
        }
    }
    for (Request* r : group) {
        try {
            r->result = r->session->eval_here(r->tokens, r->which);
        } catch (...) {
            r->error = std::current_exception();
        }
    }
}

void Batcher::run_round(std::vector<Request*>& round) {
    // One-token evals: all in one pass. Prompts: short ones together, up to a prompt piece of
    // rows per pass (several records' prompts read the weights once); long ones alone (bound by
    // compute, not by reading weights).
    std::vector<Request*> tokens, prompts[2];
    for (Request* r : round) {
        if (r->tokens.size() == 1 && r->which == LogitsFor::last) tokens.push_back(r);
        else if (r->tokens.size() >= 2 && r->tokens.size() <= size_t(kPromptPiece) / 2)
            prompts[r->which == LogitsFor::all].push_back(r);
        else {
            std::vector<Request*> alone{r};
            run_together(alone, [] {});
        }
    }
    for (auto& group : prompts) {
        for (size_t at = 0; at < group.size();) {
            std::vector<Request*> pass;
            size_t rows = 0;
            for (; at < group.size() && rows + group[at]->tokens.size() <= size_t(kPromptPiece); ++at) {
                pass.push_back(group[at]);
                rows += group[at]->tokens.size();
            }
            run_together(pass, [&] {
                std::vector<Session*> sessions;
                std::vector<std::span<const TokenId>> each;
                for (Request* r : pass) {
                    sessions.push_back(r->session);
                    each.push_back(r->tokens);
                }
                const auto out = Session::eval_prompts(sessions, each, pass[0]->which);
                for (size_t i = 0; i < pass.size(); ++i) pass[i]->result = out[i];
            });
        }
    }
    run_together(tokens, [&] {
        std::vector<Session*> sessions;
        std::vector<TokenId> ids;
        for (Request* r : tokens) {
            sessions.push_back(r->session);
            ids.push_back(r->tokens[0]);
        }
        const auto out = Session::eval_tokens(sessions, ids);
        for (size_t i = 0; i < tokens.size(); ++i) tokens[i]->result = out[i];
    });
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
