// Graphs, partitions, compiled partitions and tensors: describe once, compile once, execute often.
#pragma once

#include <memory>
#include <vector>

#include "convgrad/op.hpp"

namespace convgrad {

/// A logical tensor bound to user memory. The memory is not owned.
class tensor {
public:
    tensor() = default;
    tensor(const logical_tensor &lt, void *handle) : lt_(lt), handle_(handle) {}
    const logical_tensor &get_logical_tensor() const { return lt_; }
    void *get_data_handle() const { return handle_; }

private:
    logical_tensor lt_;
    void *handle_ = nullptr;
};

enum class impl_choice {
    best,       // the first optimized kernel that accepts the problem (reference last)
    reference,  // the plain reference kernel: slow, used to check results
};

class compiled_partition;

/// A piece of a graph that is compiled and executed as a unit (one op per partition).
class CONVGRAD_API partition {
public:
    const std::vector<size_t> &op_ids() const { return op_ids_; }
    const op &get_op() const { return *op_; }
    /// The graph's fpmath_mode, which compile() applies.
    fpmath_mode get_fpmath_mode() const { return fpmath_; }
    const std::vector<logical_tensor> &input_ports() const;
    const std::vector<logical_tensor> &output_ports() const;

    /// Infers shapes and layouts, validates everything, chooses a kernel. `inputs` and `outputs`
    /// override the op's logical tensors by id (inputs must have known shapes; outputs may be
    /// unknown or "any"). Throws convgrad::error naming the op, tensor or attribute and the rule.
    compiled_partition compile(const std::vector<logical_tensor> &inputs,
                               const std::vector<logical_tensor> &outputs,
                               impl_choice choice = impl_choice::best) const;

private:
    friend class graph;
    std::vector<size_t> op_ids_;
    std::shared_ptr<const op> op_;
    fpmath_mode fpmath_ = fpmath_mode::strict;
};

struct compiled_op;  // internal

class CONVGRAD_API compiled_partition {
public:
    compiled_partition();
    ~compiled_partition();
    compiled_partition(const compiled_partition &);
    compiled_partition &operator=(const compiled_partition &);
    compiled_partition(compiled_partition &&) noexcept;
    compiled_partition &operator=(compiled_partition &&) noexcept;

    /// The logical tensor with this id, with inferred shape and strides.
    logical_tensor query_logical_tensor(size_t id) const;
    const std::vector<logical_tensor> &inputs() const;
    const std::vector<logical_tensor> &outputs() const;
    /// Pads after auto_pad resolution, one per spatial axis.
    const dims &pads_begin() const;
    const dims &pads_end() const;
    /// Name of the kernel that executes this partition.
    const std::string &kernel_name() const;
    /// The normalized problem in benchdnn style, e.g. "g1mb2ic32ih28oc128oh14kh2sh2ph0".
    std::string problem_desc() const;
    /// Floating-point operations of one execution (2 per multiply-add).
    double flops() const;
    const op &get_op() const;

    /// Runs on user buffers: `inputs` and `outputs` in the op's order, each tensor's logical
    /// tensor id must match. Thread-safe: a compiled partition may be executed concurrently.
    void execute(const std::vector<tensor> &inputs, const std::vector<tensor> &outputs) const;

private:
    friend class partition;
    std::shared_ptr<const compiled_op> impl_;
};

class CONVGRAD_API graph {
public:
    graph() = default;
    /// A graph whose f32 ops may compute with lower-precision products as `mode` allows
    /// (oneDNN Graph's fpmath_mode; docs/semantics.md). The default is strict.
    explicit graph(fpmath_mode mode) : fpmath_(mode) {}
    fpmath_mode get_fpmath_mode() const { return fpmath_; }

    /// Validates the op's schema (input/output counts, attribute names, types and values, data
    /// types) and adds it. Throws convgrad::error (invalid_graph_op) with the reason.
    void add_op(const op &o);
    /// No more ops; connects ops through tensor ids.
    void finalize();
    bool is_finalized() const { return finalized_; }
    /// One partition per op, in the order the ops were added.
    std::vector<partition> get_partitions() const;
    const std::vector<std::shared_ptr<const op>> &ops() const { return ops_; }

private:
    std::vector<std::shared_ptr<const op>> ops_;
    bool finalized_ = false;
    fpmath_mode fpmath_ = fpmath_mode::strict;
};

/// Shortcut for a single op: validate, compile and return the compiled partition.
CONVGRAD_API compiled_partition compile_op(const op &o, impl_choice choice = impl_choice::best,
                                        fpmath_mode mode = fpmath_mode::strict);

}  // namespace convgrad
