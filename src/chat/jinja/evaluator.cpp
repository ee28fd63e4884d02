// The template's statements run over a chain of scopes, the way Jinja scopes them: a for
// loop's body gets a fresh scope each iteration, a macro gets its own, if/set do not.
#include "evaluator.h"

#include <algorithm>
#include <cstring>

namespace journey::jinja {

namespace {

constexpr int64_t kMaxRange = 100000;  // Jinja's sandbox: MAX_RANGE
constexpr size_t kMaxItems = 1u << 20;

Value function(std::string name, std::function<Value(Args&)> fn) {
    return Value(std::make_shared<const Callable>(Callable{std::move(name), std::move(fn)}));
}

int64_t int_of(const Value& v, const char* what) {
    if (v.is_int()) return std::get<int64_t>(v.v);
    if (v.is_bool()) return std::get<bool>(v.v);
    throw RenderError(std::string(what) + ": '" + type_name(v) + "' object cannot be interpreted as an integer");
}

}  // namespace

Renderer::Renderer(const RenderOptions& options, Globals globals) : opt_(options), globals_(std::move(globals)) {
    globals_.emplace("range", function("range", [](Args& a) {
        int64_t start = 0, stop, step = 1;
        if (a.pos.size() == 1) stop = int_of(a.pos[0], "range");
        else if (a.pos.size() == 2 || a.pos.size() == 3) {
            start = int_of(a.pos[0], "range");
            stop = int_of(a.pos[1], "range");
            if (a.pos.size() == 3) step = int_of(a.pos[2], "range");
        } else throw RenderError("range expected 1 to 3 arguments, got " + std::to_string(a.pos.size()));
        if (step == 0) throw RenderError("range() arg 3 must not be zero");
        const long double n = step > 0 ? (stop > start ? ((long double)stop - start + step - 1) / step : 0)
                                        : (start > stop ? ((long double)start - stop - step - 1) / -step : 0);
        if (n > kMaxRange) throw RenderError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        List out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
        return Value(std::move(out));
    }));
    globals_.emplace("namespace", function("namespace", [](Args& a) {
        auto d = std::make_shared<Dict>();
        try {
            for (const Value& p : a.pos) {
                if (!p.is_dict()) throw RenderError("namespace() takes a mapping");
                for (const auto& [k, v] : p.dict().items()) d->set(k, v);
            }
            for (const auto& [k, v] : a.kw) d->set(k, v);
        } catch (const std::invalid_argument& e) {
            throw RenderError(e.what());
        }
        d->is_namespace = true;
        return Value(d);
    }));
    globals_.emplace("dict", function("dict", [](Args& a) {
        auto d = std::make_shared<Dict>();
        for (const Value& p : a.pos) {
            if (!p.is_dict()) throw RenderError("dict() takes a mapping");
            for (const auto& [k, v] : p.dict().items()) d->set(k, v);
        }
        for (const auto& [k, v] : a.kw) d->set(k, v);
        return Value(d);
    }));
    globals_.emplace("raise_exception", function("raise_exception", [](Args& a) -> Value {
        throw RaisedError(a.pos.empty() ? std::string() : to_str(a.pos[0]));
    }));
    globals_.emplace("strftime_now", function("strftime_now", [this](Args& a) {
        const std::string fmt = to_str(arg(a, 0, "format"));
        if (fmt.empty()) return Value("");
        if (fmt.size() > 256) throw RenderError("strftime_now: format longer than 256 bytes");
        std::tm tm{};
        if (opt_.now) tm = *opt_.now;
        else {
            const std::time_t t = std::time(nullptr);
            localtime_r(&t, &tm);
        }
        std::string buf(fmt.size() * 64 + 64, '\0');
        const size_t n = std::strftime(buf.data(), buf.size(), fmt.c_str(), &tm);
        buf.resize(n);
        return Value(buf);
    }));
}

void Renderer::tick() {
    if (++steps_ > opt_.max_steps)
        throw RenderError("rendering took more than " + std::to_string(opt_.max_steps) + " steps (a template is bounded)");
}

Renderer::DepthGuard::DepthGuard(Renderer& r) : r(r) {
    if (++r.depth_ > r.opt_.max_depth)
        throw RenderError("rendering nested deeper than " + std::to_string(r.opt_.max_depth) + " levels (macro recursion?)");
}

// What a filter, call or operator made: its size counts as work, and no string may outgrow the
// output limit, nor a list a million items (doubling a value in a loop is cheap to write).
const Value& Renderer::charge(const Value& v) {
    size_t size = 0;
    if (v.is_string()) {
        size = v.str().size();
        if (size > opt_.max_output_bytes)
            throw RenderError("a string larger than " + std::to_string(opt_.max_output_bytes) + " bytes (a template is bounded)");
        size /= 16;
    } else if (v.is_list()) {
        size = v.list().size();
        if (size > kMaxItems) throw RenderError("a list of more than " + std::to_string(kMaxItems) + " items (a template is bounded)");
    }
    steps_ += size;
    if (steps_ > opt_.max_steps)
        throw RenderError("rendering took more than " + std::to_string(opt_.max_steps) + " steps (a template is bounded)");
    return v;
}

void Renderer::write(std::string& out, const std::string& s) {
    written_ += s.size();
    if (written_ > opt_.max_output_bytes)
        throw RenderError("output larger than " + std::to_string(opt_.max_output_bytes) + " bytes (a template is bounded)");
    out += s;
}

std::string Renderer::run(const Body& body) {
    auto root = std::make_shared<Frame>();
    std::string out;
    render(body, root, out);
    return out;
}

Value Renderer::lookup(const std::string& name, const FramePtr& frame) const {
    for (const Frame* f = frame.get(); f; f = f->parent.get()) {
        auto it = f->vars.find(name);
        if (it != f->vars.end()) return it->second;
    }
    auto it = globals_.find(name);
    if (it != globals_.end()) return it->second;
    return Undefined{"'" + name + "' is undefined"};
}

Renderer::Flow Renderer::render(const Body& body, const FramePtr& frame, std::string& out) {
    for (const auto& node : body) {
        const Flow f = render_node(*node, frame, out);
        if (f != Flow::normal) return f;
    }
    return Flow::normal;
}

void Renderer::assign(const std::vector<std::string>& targets, const Value& v, Frame& frame) {
    if (targets.size() == 1) {
        frame.vars[targets[0]] = v;
        return;
    }
    const List items = iterate(v);
    if (items.size() != targets.size())
        throw RenderError(items.size() > targets.size() ? "too many values to unpack (expected " + std::to_string(targets.size()) + ")"
                                                        : "not enough values to unpack (expected " + std::to_string(targets.size()) + ", got " + std::to_string(items.size()) + ")");
    for (size_t k = 0; k < targets.size(); ++k) frame.vars[targets[k]] = items[k];
}

Renderer::Flow Renderer::render_node(const Node& n, const FramePtr& frame, std::string& out) {
    tick();
    DepthGuard guard(*this);
    try {
        switch (n.kind) {
        case Node::Kind::text: write(out, n.text); return Flow::normal;
        case Node::Kind::output: write(out, to_str(eval(*n.expr, frame))); return Flow::normal;
        case Node::Kind::if_:
            for (const auto& [cond, body] : n.branches)
                if (truthy(eval(*cond, frame))) return render(body, frame, out);
            return render(n.else_body, frame, out);
        case Node::Kind::for_: return render_for(n, frame, out);
        case Node::Kind::set: {
            const Value v = eval(*n.expr, frame);
            if (n.attr.empty()) {
                assign(n.targets, v, *frame);
                return Flow::normal;
            }
            const Value ns = lookup(n.targets[0], frame);
            if (!ns.is_dict() || !ns.dict().is_namespace) throw RenderError("Cannot assign attribute on non-namespace object");
            try {
                ns.dict().set(n.attr, v);
            } catch (const std::exception& e) {
                throw RenderError(e.what());
            }
            return Flow::normal;
        }
        case Node::Kind::set_block: {
            std::string body;
            render(n.body, frame, body);
            frame->vars[n.targets[0]] = n.filter ? apply_filter_chain(*n.filter, body, frame) : Value(body);
            return Flow::normal;
        }
        case Node::Kind::macro: frame->vars[n.text] = make_macro(n, frame, n.text); return Flow::normal;
        case Node::Kind::call_block: {
            const Value caller = make_macro(n, frame, "caller");
            write(out, to_str(eval_call(*n.expr, frame, &caller)));
            return Flow::normal;
        }
        case Node::Kind::filter_block: {
            std::string body;
            render(n.body, frame, body);
            write(out, to_str(apply_filter_chain(*n.filter, body, frame)));
            return Flow::normal;
        }
        case Node::Kind::break_: return Flow::break_;
        case Node::Kind::continue_: return Flow::continue_;
        case Node::Kind::scope: return render(n.body, frame, out);
        }
    } catch (RenderError& e) {
        if (!e.located) {
            e.pos = n.pos;
            e.located = true;
        }
        throw;
    }
    return Flow::normal;
}

Renderer::Flow Renderer::render_for(const Node& n, const FramePtr& frame, std::string& out) {
    const Value seq = eval(*n.expr, frame);
    if (seq.is_none()) throw RenderError("'NoneType' object is not iterable");
    List items = iterate(seq);
    if (n.filter) {
        List kept;
        for (Value& item : items) {
            tick();
            auto f = std::make_shared<Frame>();
            f->parent = frame;
            assign(n.targets, item, *f);
            if (truthy(eval(*n.filter, f))) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    if (items.empty()) return render(n.else_body, frame, out);
    const int64_t len = int64_t(items.size());
    for (int64_t i = 0; i < len; ++i) {
        tick();  // an empty body still costs an iteration
        auto f = std::make_shared<Frame>();
        f->parent = frame;
        assign(n.targets, items[size_t(i)], *f);
        auto loop = std::make_shared<Dict>();
        loop->set("index", i + 1);
        loop->set("index0", i);
        loop->set("revindex", len - i);
        loop->set("revindex0", len - i - 1);
        loop->set("first", i == 0);
        loop->set("last", i == len - 1);
        loop->set("length", len);
        loop->set("depth", int64_t{1});
        loop->set("depth0", int64_t{0});
        loop->set("previtem", i > 0 ? items[size_t(i - 1)] : Value(Undefined{"there is no previous item"}));
        loop->set("nextitem", i + 1 < len ? items[size_t(i + 1)] : Value(Undefined{"there is no next item"}));
        loop->set("cycle", function("cycle", [i](Args& a) -> Value {
            if (a.pos.empty()) throw RenderError("no items for cycling given");
            return a.pos[size_t(i) % a.pos.size()];
        }));
        f->vars["loop"] = Value(loop);
        const Flow flow = render(n.body, f, out);
        if (flow == Flow::break_) break;
    }
    return Flow::normal;
}

// A macro (or a call block's caller) as a function: arguments bound by position, then by
// keyword, then defaults; its body renders in a fresh scope over the one it was defined in.
Value Renderer::make_macro(const Node& n, const FramePtr& frame, const std::string& name) {
    std::weak_ptr<Frame> defined_in = frame;
    const Node* node = &n;
    return function(name, [this, node, defined_in, name](Args& a) -> Value {
        FramePtr parent = defined_in.lock();
        if (!parent) throw RenderError("macro '" + name + "' called after its scope ended");
        DepthGuard guard(*this);
        auto f = std::make_shared<Frame>();
        f->parent = parent;
        if (a.pos.size() > node->params.size())
            throw RenderError("macro '" + name + "' takes not more than " + std::to_string(node->params.size()) + " argument(s)");
        for (size_t k = 0; k < node->params.size(); ++k) {
            const auto& [pname, def] = node->params[k];
            if (k < a.pos.size()) f->vars[pname] = a.pos[k];
            else if (def) f->vars[pname] = eval(*def, f);
            else f->vars[pname] = Undefined{"'" + pname + "' is undefined"};
        }
        for (const auto& kv : a.kw) {  // not a structured binding: clang 14 cannot capture one
            const std::string& k = kv.first;
            const bool known = k == "caller" || std::any_of(node->params.begin(), node->params.end(), [&](const auto& p) { return p.first == k; });
            if (!known) throw RenderError("macro '" + name + "' takes no keyword argument '" + k + "'");
            f->vars[k] = kv.second;
        }
        std::string out;
        render(node->body, f, out);
        return Value(out);
    });
}

Value Renderer::apply_filter_chain(const Expr& chain, const Value& input, const FramePtr& frame) {
    if (chain.kind != Expr::Kind::filter) return input;
    const Value v = apply_filter_chain(*chain.args[0], input, frame);
    Args a = eval_args(chain, frame);
    return apply_filter(chain.name, v, a);
}

Args Renderer::eval_args(const Expr& e, const FramePtr& frame) {
    Args a;
    for (size_t k = 1; k < e.args.size(); ++k) a.pos.push_back(eval(*e.args[k], frame));
    for (const auto& [name, x] : e.kwargs) a.kw.emplace_back(name, eval(*x, frame));
    return a;
}

Value Renderer::eval_call(const Expr& e, const FramePtr& frame, const Value* caller) {
    const Value callee = eval(*e.args[0], frame);
    Args a = eval_args(e, frame);
    if (caller) a.kw.emplace_back("caller", *caller);
    if (callee.is_undefined()) fail_undefined(callee);
    if (!callee.is_callable()) throw RenderError("'" + type_name(callee) + "' object is not callable");
    return callee.callable().fn(a);
}

Value Renderer::eval(const Expr& e, const FramePtr& frame) {
    tick();
    DepthGuard guard(*this);
    try {
        return eval_inner(e, frame);
    } catch (RenderError& err) {
        if (!err.located) {
            err.pos = e.pos;
            err.located = true;
        }
        throw;
    } catch (const std::length_error& err) {  // nesting past kMaxNesting
        RenderError r(err.what());
        r.pos = e.pos;
        r.located = true;
        throw r;
    } catch (const std::invalid_argument& err) {
        RenderError r(err.what());
        r.pos = e.pos;
        r.located = true;
        throw r;
    }
}

Value Renderer::eval_inner(const Expr& e, const FramePtr& frame) {
    switch (e.kind) {
    case Expr::Kind::literal: return e.value;
    case Expr::Kind::name: return lookup(e.name, frame);
    case Expr::Kind::list:
    case Expr::Kind::tuple: {
        List items;
        for (const auto& x : e.args) items.push_back(eval(*x, frame));
        return Value(std::move(items), e.kind == Expr::Kind::tuple);
    }
    case Expr::Kind::dict: {
        auto d = std::make_shared<Dict>();
        for (size_t k = 0; k + 1 < e.args.size(); k += 2) {
            const Value key = eval(*e.args[k], frame);
            if (!key.is_string()) throw RenderError("dict keys must be strings here, not " + type_name(key));
            d->set(key.str(), eval(*e.args[k + 1], frame));
        }
        return Value(d);
    }
    case Expr::Kind::attr: return get_attr(eval(*e.args[0], frame), e.name);
    case Expr::Kind::item: {
        const Value obj = eval(*e.args[0], frame);
        return get_item(obj, eval(*e.args[1], frame));
    }
    case Expr::Kind::slice: {
        const Value obj = eval(*e.args[0], frame);
        Value parts[3];
        for (int k = 0; k < 3; ++k)
            if (e.args[size_t(k) + 1]) parts[k] = eval(*e.args[size_t(k) + 1], frame);
        return slice(obj, parts[0], parts[1], parts[2]);
    }
    case Expr::Kind::call: return charge(eval_call(e, frame, nullptr));
    case Expr::Kind::filter: {
        const Value v = charge(eval(*e.args[0], frame));
        Args a = eval_args(e, frame);
        return charge(apply_filter(e.name, v, a));
    }
    case Expr::Kind::test: {
        const Value v = eval(*e.args[0], frame);
        Args a = eval_args(e, frame);
        return apply_test(e.name, v, a) != e.negated;
    }
    case Expr::Kind::unary: {
        const Value v = eval(*e.args[0], frame);
        if (e.name == "not") return !truthy(v);
        if (v.is_int() || v.is_bool()) {
            const int64_t i = v.is_int() ? std::get<int64_t>(v.v) : int64_t(std::get<bool>(v.v));
            if (e.name == "+") return i;
            if (i == INT64_MIN) throw RenderError("integer overflow");
            return -i;
        }
        if (v.is_float()) return e.name == "+" ? v : Value(-std::get<double>(v.v));
        if (v.is_undefined()) fail_undefined(v);
        throw RenderError("bad operand type for unary " + e.name + ": '" + type_name(v) + "'");
    }
    case Expr::Kind::binary: {
        const Value a = eval(*e.args[0], frame);
        if (e.name == "and") return truthy(a) ? eval(*e.args[1], frame) : a;
        if (e.name == "or") return truthy(a) ? a : eval(*e.args[1], frame);
        return charge(binary_op(e.name, charge(a), charge(eval(*e.args[1], frame))));
    }
    case Expr::Kind::compare: {
        Value left = eval(*e.args[0], frame);
        for (size_t k = 0; k < e.ops.size(); ++k) {
            Value right = eval(*e.args[k + 1], frame);
            if (!compare_op(e.ops[k], left, right)) return false;
            left = std::move(right);
        }
        return true;
    }
    case Expr::Kind::cond:
        if (truthy(eval(*e.args[0], frame))) return eval(*e.args[1], frame);
        return e.args[2] ? eval(*e.args[2], frame) : Value(Undefined{"the inline if-expression evaluated to false and no else section was defined."});
    }
    return Undefined{};
}

}  // namespace journey::jinja
