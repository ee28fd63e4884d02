// Renders a parsed template (private to the jinja folder; template.h is the public face).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>

#include "builtins.h"
#include "journey/chat/jinja/ast.h"
#include "journey/chat/jinja/template.h"

namespace journey::jinja {

struct Frame;
using FramePtr = std::shared_ptr<Frame>;
struct Frame {
    std::unordered_map<std::string, Value> vars;
    FramePtr parent;
};

using Globals = std::unordered_map<std::string, Value>;

class Renderer {
public:
    // globals: the render call's variables; range, namespace, dict, raise_exception and
    // strftime_now are added.
    Renderer(const RenderOptions& options, Globals globals);
    std::string run(const Body& body);  // throws RenderError

private:
    enum class Flow { normal, break_, continue_ };
    struct DepthGuard {
        Renderer& r;
        explicit DepthGuard(Renderer& r);
        ~DepthGuard() { --r.depth_; }
    };

    const RenderOptions& opt_;
    Globals globals_;
    uint64_t steps_ = 0;
    size_t written_ = 0;
    int depth_ = 0;

    void tick();
    const Value& charge(const Value& v);
    void write(std::string& out, const std::string& s);
    Value lookup(const std::string& name, const FramePtr& frame) const;
    void assign(const std::vector<std::string>& targets, const Value& v, Frame& frame);

    Flow render(const Body& body, const FramePtr& frame, std::string& out);
    Flow render_node(const Node& n, const FramePtr& frame, std::string& out);
    Flow render_for(const Node& n, const FramePtr& frame, std::string& out);
    Value make_macro(const Node& n, const FramePtr& frame, const std::string& name);

    Value eval(const Expr& e, const FramePtr& frame);
    Value eval_inner(const Expr& e, const FramePtr& frame);
    Args eval_args(const Expr& e, const FramePtr& frame);
    Value eval_call(const Expr& e, const FramePtr& frame, const Value* caller);
    Value apply_filter_chain(const Expr& chain, const Value& input, const FramePtr& frame);
};

}  // namespace journey::jinja
