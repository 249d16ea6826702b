#include <algorithm>
#include <set>

#include "api/compiled_op.hpp"
#include "api/verbose.hpp"
#include "core/op_attrs.hpp"
#include "core/op_error.hpp"
#include "threading/parallel.hpp"

namespace convgrad {

using detail::op_error;

void graph::add_op(const op &o) {
    if (finalized_)
        throw error(status::invalid_arguments, o.describe() + ": the graph is already finalized");
    for (const auto &existing : ops_)
        if (existing->id() == o.id())
            throw error(status::invalid_graph_op,
                        o.describe() + ": op id " + std::to_string(o.id()) + " is already used");
    detail::validate_op_schema(o);
    ops_.push_back(std::make_shared<const op>(o));
}

void graph::finalize() {
    // A tensor id is produced by at most one op.
    std::set<size_t> produced;
    for (const auto &o : ops_)
        for (const auto &lt : o->outputs())
            if (!produced.insert(lt.id()).second)
                throw error(status::invalid_graph_op,
                            o->describe() + ": output tensor id " + std::to_string(lt.id()) +
                                " is produced by another op too");
    finalized_ = true;
}

std::vector<partition> graph::get_partitions() const {
    if (!finalized_)
        throw error(status::invalid_arguments, "graph: finalize() before get_partitions()");
    std::vector<partition> parts;
    for (const auto &o : ops_) {
        partition p;
        p.op_ids_ = {o->id()};
        p.op_ = o;
        p.fpmath_ = fpmath_;
        parts.push_back(std::move(p));
    }
    return parts;
}

const std::vector<logical_tensor> &partition::input_ports() const { return op_->inputs(); }
const std::vector<logical_tensor> &partition::output_ports() const { return op_->outputs(); }

compiled_partition partition::compile(const std::vector<logical_tensor> &inputs,
                                      const std::vector<logical_tensor> &outputs,
                                      impl_choice choice) const {
    auto c = std::make_shared<compiled_op>(*op_);
    c->r = detail::resolve_op(*op_, inputs, outputs);
    // `any`: bf16 where this machine multiplies it faster than f32 (and a bf16 kernel takes the
    // problem: below).
    c->r.prob.math_dt = detail::math_type(fpmath_, c->r.prob.dt, detail::bf16_multiplies_faster());
    detail::check_thread_count(*op_);
    auto d = detail::dispatch(c->r.prob, detail::effective_features(), choice == impl_choice::reference);
    if (fpmath_ == fpmath_mode::any && c->r.prob.math_dt != c->r.prob.dt && choice == impl_choice::best &&
        !d.k->rounds_to_math_type()) {
        // The kernel that took it multiplies in f32 anyway: a rounding pass would only cost time
        // and precision, and `any` allows f32.
        c->r.prob.math_dt = c->r.prob.dt;
        d = detail::dispatch(c->r.prob, detail::effective_features(), false);
    }
    c->impl = d.impl;
    c->kernel_name = d.impl->name;
    c->k = std::move(d.k);
    // Total scratch, checked up front like tensor sizes (docs/semantics.md, "Limits").
    const double scratch = c->r.prob.scratch_bound(detail::requested_threads());
    if (scratch > double(int64_t(1) << 52))
        op_error(*op_).fail(status::out_of_memory, "kernel " + c->kernel_name,
                            "its scratch memory would exceed 2^52 bytes (4 PiB)",
                            "<= 4503599627370496", detail::str(scratch));
    detail::verbose_compile(*c, d.refusals);
    compiled_partition cp;
    cp.impl_ = std::move(c);
    return cp;
}

compiled_partition compile_op(const op &o, impl_choice choice, fpmath_mode mode) {
    graph g(mode);
    g.add_op(o);
    g.finalize();
    return g.get_partitions()[0].compile(o.inputs(), o.outputs(), choice);
}

compiled_partition::compiled_partition() = default;
compiled_partition::~compiled_partition() = default;
compiled_partition::compiled_partition(const compiled_partition &) = default;
compiled_partition &compiled_partition::operator=(const compiled_partition &) = default;
compiled_partition::compiled_partition(compiled_partition &&) noexcept = default;
compiled_partition &compiled_partition::operator=(compiled_partition &&) noexcept = default;

namespace {
const compiled_op &get(const std::shared_ptr<const compiled_op> &p) {
    if (!p) throw error(status::invalid_arguments, "compiled_partition: empty (not compiled)");
    return *p;
}
}  // namespace

logical_tensor compiled_partition::query_logical_tensor(size_t id) const {
    const auto &c = get(impl_);
    for (const auto *list : {&c.r.inputs, &c.r.outputs})
        for (const auto &lt : *list)
            if (lt.id() == id) return lt;
    throw error(status::invalid_arguments, c.source.describe() + ": no tensor with id " +
                                               std::to_string(id) + " in this partition");
}

const std::vector<logical_tensor> &compiled_partition::inputs() const { return get(impl_).r.inputs; }
const std::vector<logical_tensor> &compiled_partition::outputs() const { return get(impl_).r.outputs; }
const dims &compiled_partition::pads_begin() const { return get(impl_).r.pads_begin; }
const dims &compiled_partition::pads_end() const { return get(impl_).r.pads_end; }
const std::string &compiled_partition::kernel_name() const { return get(impl_).kernel_name; }
std::string compiled_partition::problem_desc() const { return get(impl_).r.prob.desc(); }
double compiled_partition::flops() const { return 2.0 * get(impl_).r.prob.macs(); }
const op &compiled_partition::get_op() const { return get(impl_).source; }

void compiled_partition::execute(const std::vector<tensor> &inputs,
                                 const std::vector<tensor> &outputs) const {
    get(impl_).execute(inputs, outputs);
}

}  // namespace convgrad
