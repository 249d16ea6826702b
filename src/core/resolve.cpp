// Shape inference and validation of the six ops (SEMANTICS §4-§5), ending in one conv_problem.
//
// Everything is expressed on the "mirror" convolution: its src is the big side (X), its dst the
// small side (Y), its weights have an O axis (dst channels, all groups) and an I axis (src
// channels per group). The ConvTranspose family's IOX weights are exactly OIX weights of the
// mirror convolution, so one set of checks and one problem serve all six ops.
#include "core/resolve.hpp"

#include <algorithm>
#include <string_view>

#include "core/checked.hpp"
#include "core/op_attrs.hpp"
#include "core/op_error.hpp"

namespace convgrad::detail {
namespace {

// How one op's tensors map onto the mirror convolution.
struct op_roles {
    conv_direction dir;
    // Index of the op input (>= 0) or -1 for the output, for the conv src, dst and weights.
    int src, dst, wei;
    const char *src_name, *dst_name, *wei_name;
};

op_roles roles_of(op_kind k) {
    switch (k) {
        case op_kind::Convolution:
            return {conv_direction::fwd, 0, -1, 1, "src", "dst", "weights"};
        case op_kind::ConvolutionBackwardData:
            return {conv_direction::bwd_data, -1, 0, 1, "diff_src", "diff_dst", "weights"};
        case op_kind::ConvolutionBackwardWeights:
            return {conv_direction::bwd_weights, 0, 1, -1, "src", "diff_dst", "diff_weights"};
        case op_kind::ConvTranspose:  // = ConvolutionBackwardData of the mirror
            return {conv_direction::bwd_data, -1, 0, 1, "dst", "src", "weights"};
        case op_kind::ConvTransposeBackwardData:  // = Convolution of the mirror
            return {conv_direction::fwd, 0, -1, 1, "diff_dst", "diff_src", "weights"};
        case op_kind::ConvTransposeBackwardWeights:  // = ConvolutionBackwardWeights, roles swapped
            return {conv_direction::bwd_weights, 1, 0, -1, "diff_dst", "src", "diff_weights"};
    }
    return {};
}

// A data tensor seen as N, C, spatial, whatever its data_format.
struct data_view {
    dim_t n, c;
    dims sp;
};

data_view view_data(const dims &shape, bool ncx) {
    const int r = int(shape.size());
    data_view v{shape[0], ncx ? shape[1] : shape[r - 1], {}};
    for (int j = 0; j < r - 2; ++j) v.sp.push_back(shape[ncx ? 2 + j : 1 + j]);
    return v;
}

dims make_data_shape(dim_t n, dim_t c, const dims &sp, bool ncx) {
    dims s{n};
    if (ncx) s.push_back(c);
    s.insert(s.end(), sp.begin(), sp.end());
    if (!ncx) s.push_back(c);
    return s;
}

data_layout data_strides(const logical_tensor &lt, bool ncx) {
    const dims &st = lt.strides();
    const int r = int(st.size()), S = r - 2;
    data_layout l;
    l.n = st[0];
    l.c = ncx ? st[1] : st[r - 1];
    for (int j = 0; j < S; ++j) l.sp[max_spatial - S + j] = st[ncx ? 2 + j : 1 + j];
    return l;
}

std::string axis_label(weights_format f, int axis, int r) {
    const std::string fmt = to_string(f);
    char letter = 'X';
    if (fmt[0] == 'X') letter = axis == r - 1 ? fmt[2] : axis == r - 2 ? fmt[1] : 'X';
    else letter = axis == 0 ? fmt[0] : axis == 1 ? fmt[1] : 'X';
    return "axis " + std::to_string(axis) + " (" + letter + " of " + fmt + ")";
}

class resolver {
public:
    resolver(const op &o, const std::vector<logical_tensor> &ins,
             const std::vector<logical_tensor> &outs)
        : o_(o), err_(o), a_(read_attrs(o)), roles_(roles_of(o.kind())) {
        r_.inputs = pick(o.inputs(), ins, "input");
        r_.outputs = pick(o.outputs(), outs, "output");
        for (const auto &lt : ins) check_belongs(lt, o.inputs(), "input");
        for (const auto &lt : outs) check_belongs(lt, o.outputs(), "output");
    }

    resolved_op run();

private:
    std::vector<logical_tensor> pick(const std::vector<logical_tensor> &own,
                                     const std::vector<logical_tensor> &given, const char *what);
    void check_belongs(const logical_tensor &lt, const std::vector<logical_tensor> &own,
                       const char *what);
    const char *input_name(int i) const;
    void check_input(int i);
    void check_lengths();
    void check_weights(const dims &wshape, const std::string &subject);
    void resolve_pads(const dims &big);
    dim_t small_size(int j, dim_t big) const;  // conv output size; throws when the kernel overhangs
    void check_relation(const dims &big, const dims &small, const std::string &subject);
    void infer_fwd();
    void infer_bwd_data();
    void infer_bwd_weights();
    /// A shape the user gave for the output, and where it came from (for messages).
    struct given_shape {
        dims shape;
        std::string subject;
        bool found = false;
    };
    given_shape shape_from_input_or_attr(const char *attr_name);
    given_shape given_output_shape(const char *attr_name);
    dim_t kernel_extent(int j) const;  // (K-1)*dilation+1, checked
    dim_t big_size(int j, dim_t small, dim_t output_padding, const char *what) const;
    void check_output_padding(const dims &output_padding) const;
    void set_output(const dims &shape);
    void check_output_matches(const dims &inferred);
    void finish_problem();

    [[noreturn]] void shape_fail(const std::string &subj, const std::string &rule,
                                 const std::string &exp, const std::string &act) const {
        err_.fail(status::invalid_shape, subj, rule, exp, act);
    }
    std::string in_subject(int i) const { return err_.tensor_subject(input_name(i), r_.inputs[i]); }
    std::string out_subject() const {
        return err_.tensor_subject(roles_.src < 0   ? roles_.src_name
                                   : roles_.dst < 0 ? roles_.dst_name
                                                    : roles_.wei_name,
                                   r_.outputs[0]);
    }

    const op &o_;
    op_error err_;
    conv_attrs a_;
    op_roles roles_;
    resolved_op r_;
    int rank_ = 0, S_ = 0;
    dim_t G_ = 1;
    // Mirror-convolution quantities.
    dim_t mb_ = 0, c_src_ = 0, c_dst_ = 0, w_o_ = 0, w_i_ = 0;
    dims ksz_, big_, small_;
};

std::vector<logical_tensor> resolver::pick(const std::vector<logical_tensor> &own,
                                           const std::vector<logical_tensor> &given,
                                           const char *) {
    std::vector<logical_tensor> out;
    for (const auto &lt : own) {
        auto it = std::find_if(given.begin(), given.end(),
                               [&](const logical_tensor &g) { return g.id() == lt.id(); });
        out.push_back(it == given.end() ? lt : *it);
    }
    return out;
}

void resolver::check_belongs(const logical_tensor &lt, const std::vector<logical_tensor> &own,
                             const char *what) {
    if (std::none_of(own.begin(), own.end(), [&](const auto &x) { return x.id() == lt.id(); }))
        err_.fail(status::invalid_arguments, std::string(what) + " tensor id " + str(lt.id()),
                  std::string("is not an ") + what + " of the op");
}

const char *resolver::input_name(int i) const {
    if (i == roles_.src) return roles_.src_name;
    if (i == roles_.dst) return roles_.dst_name;
    if (i == roles_.wei) return roles_.wei_name;
    if (i == 2)
        switch (o_.kind()) {
            case op_kind::Convolution:
            case op_kind::ConvTranspose: return "bias";
            case op_kind::ConvolutionBackwardData: return "dst_shape";
            default: return "weights_shape";
        }
    return "input";
}

void resolver::check_input(int i) {
    logical_tensor &lt = r_.inputs[i];
    const std::string subj = in_subject(i);
    if (!lt.has_known_shape())
        shape_fail(subj, "input shapes must be known at compile time", "a known shape",
                   to_string(lt.shape()) + (lt.ndims() < 0 ? " (unknown rank)" : ""));
    for (dim_t d : lt.shape())
        if (d < 0) shape_fail(subj, "dims must be non-negative", ">= 0", to_string(lt.shape()));
    // Strides are the user's when given (strided layout, every stride known), else dense.
    const dims &given = lt.strides();
    const bool strides_given = lt.layout() == layout_type::strided && !given.empty() &&
                               std::none_of(given.begin(), given.end(),
                                            [](dim_t x) { return x == unknown_dim; });
    if (strides_given && given.size() != lt.shape().size())
        shape_fail(subj, "needs one stride per dim", str(lt.shape().size()), str(given.size()));
    try {
        if (!strides_given)
            lt = logical_tensor(lt.id(), lt.dtype(), lt.shape(), dense_strides(lt.shape()),
                                lt.property());
        for (size_t d = 0; d < lt.shape().size(); ++d)
            if (lt.strides()[d] < 0 || (lt.strides()[d] == 0 && lt.shape()[d] > 1))
                shape_fail(subj, "strides must be positive (no broadcast)", "> 0",
                           to_string(lt.strides()));
        (void)lt.size_bytes();  // throws on overflow
    } catch (const error &e) {
        if (e.code() != status::out_of_memory) throw;
        err_.fail(e.code(), subj, e.what());
    }
}

void resolver::check_lengths() {
    const auto S = size_t(S_);
    auto need = [&](const char *name, const dims &v) {
        if (v.size() != S)
            err_.fail(status::invalid_shape, op_error::attr_subject(name),
                      "needs one entry per spatial axis of the data tensors", str(S), str(v.size()));
    };
    need("strides", a_.strides);
    need("dilations", a_.dilations);
    need("pads_begin", a_.pads_begin);
    need("pads_end", a_.pads_end);
    if (a_.output_padding) {
        const dims &op = *a_.output_padding;
        if (op.size() < S)
            err_.fail(status::invalid_shape, op_error::attr_subject("output_padding"),
                      "needs at least one entry per spatial axis", ">= " + str(S), str(op.size()));
        for (size_t j = S; j < op.size(); ++j)
            if (op[j] != 0)
                err_.fail(status::invalid_shape, op_error::attr_subject("output_padding"),
                          "entries beyond the spatial axes must be 0", "0", to_string(op));
    }
}

// Reads the weights shape (in weights_format) and checks channels against the data tensors.
void resolver::check_weights(const dims &w, const std::string &subject) {
    if (int(w.size()) != rank_)
        shape_fail(subject, "weights rank must equal the data rank", str(rank_), str(w.size()));
    const weights_axes ax = axes_of(a_.wformat, rank_);
    w_o_ = w[ax.o];
    w_i_ = w[ax.i];
    ksz_.assign(w.begin() + ax.k0, w.begin() + ax.k0 + S_);
    for (dim_t d : w)
        if (d < 1) shape_fail(subject, "weights dims must be positive", ">= 1", to_string(w));
    // The mirror convolution's O axis holds all groups: output channels of a Convolution,
    // input channels of a ConvTranspose.
    if (w_o_ % G_ != 0)
        shape_fail(subject,
                   axis_label(a_.wformat, ax.o, rank_) +
                       (is_conv_transpose_family(o_.kind()) ? " (input channels)"
                                                            : " (output channels)") +
                       " must be divisible by groups",
                   "a multiple of " + str(G_), str(w_o_));
}

dim_t resolver::small_size(int j, dim_t big) const {
    const dim_t ke = checked_add(checked_mul(ksz_[j] - 1, a_.dilations[j], "effective kernel"), 1,
                                 "effective kernel");
    const dim_t padded = checked_add(checked_add(big, r_.pads_begin[j], "padded size"),
                                     r_.pads_end[j], "padded size");
    if (padded < ke) return -1;
    return (padded - ke) / a_.strides[j] + 1;
}

void resolver::resolve_pads(const dims &big) {
    r_.pads_begin = a_.pads_begin;
    r_.pads_end = a_.pads_end;
    if (a_.auto_pad == auto_pad_kind::none) return;
    const bool ct = is_conv_transpose_family(o_.kind());
    for (int j = 0; j < S_; ++j) {
        dim_t total = 0;
        if (a_.auto_pad != auto_pad_kind::valid) {
            const dim_t s = a_.strides[j];
            const dim_t ke = kernel_extent(j);
            // SEMANTICS §4: the ConvTranspose family pads as the ConvTranspose forward does.
            const dim_t rem = ct ? 0 : big[j] % s;
            total = std::max<dim_t>(ke - (rem == 0 ? s : rem), 0);
        }
        const dim_t lo = a_.auto_pad == auto_pad_kind::same_lower ? total - total / 2 : total / 2;
        r_.pads_begin[j] = lo;
        r_.pads_end[j] = total - lo;
    }
}

void resolver::check_relation(const dims &big, const dims &small, const std::string &subject) {
    for (int j = 0; j < S_; ++j) {
        const dim_t expect = small_size(j, big[j]);
        if (expect != small[j])
            shape_fail(subject,
                       "spatial axis " + str(j) + ": sizes must satisfy (" +
                           std::string(roles_.src_name) + " + pads_begin + pads_end - " +
                           "((K-1)*dilation+1)) / stride + 1 == " + roles_.dst_name +
                           " (pads " + str(r_.pads_begin[j]) + "," + str(r_.pads_end[j]) +
                           ", K " + str(ksz_[j]) + ", stride " + str(a_.strides[j]) +
                           ", dilation " + str(a_.dilations[j]) + ", " + roles_.src_name + " " +
                           str(big[j]) + ")",
                       expect < 0 ? "a kernel that fits the padded input" : str(expect),
                       str(small[j]));
    }
}

void resolver::check_output_matches(const dims &inferred) {
    const logical_tensor &out = r_.outputs[0];
    if (out.ndims() < 0) return;
    bool ok = out.ndims() == int(inferred.size());
    for (size_t d = 0; ok && d < inferred.size(); ++d)
        ok = out.shape()[d] == unknown_dim || out.shape()[d] == inferred[d];
    if (!ok)
        shape_fail(out_subject(), "given output shape differs from the inferred one",
                   to_string(inferred), to_string(out.shape()));
}

void resolver::set_output(const dims &shape) {
    logical_tensor &out = r_.outputs[0];
    const data_type dt = out.dtype() == data_type::undef ? r_.prob.dt : out.dtype();
    const std::string subj = out_subject();
    dims st;
    if (out.layout() == layout_type::strided && out.has_known_strides() &&
        out.strides().size() == shape.size()) {
        st = out.strides();
        // Outputs are written: no two elements may share an address.
        std::vector<size_t> order(shape.size());
        for (size_t d = 0; d < order.size(); ++d) order[d] = d;
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return st[x] < st[y]; });
        dim_t span = 1;
        for (size_t d : order) {
            if (shape[d] == 1) continue;
            if (st[d] < span)
                shape_fail(subj, "output strides must not overlap", "non-overlapping strides",
                           to_string(st) + " for shape " + to_string(shape));
            span = checked_mul(st[d], shape[d], "output extent");
        }
    } else {
        try {
            st = dense_strides(shape);
        } catch (const error &e) {
            err_.fail(e.code(), subj, e.what());
        }
    }
    out = logical_tensor(out.id(), dt, shape, st, out.property());
    try {
        (void)out.size_bytes();
    } catch (const error &e) {
        err_.fail(e.code(), subj, e.what());
    }
}

// The s32 shape input's values when known at compile time, else the attribute (SEMANTICS §5).
resolver::given_shape resolver::shape_from_input_or_attr(const char *attr_name) {
    if (r_.inputs.size() == 3) {
        const logical_tensor &sh = r_.inputs[2];
        if (sh.ndims() >= 0 && sh.has_known_shape() &&
            (sh.ndims() != 1 || sh.shape()[0] != rank_))
            shape_fail(in_subject(2), "must be a 1-D s32 tensor with one value per output dim",
                       "[" + str(rank_) + "]", to_string(sh.shape()));
        if (sh.values()) {
            if (int(sh.values()->size()) != rank_)
                shape_fail(in_subject(2), "needs one value per output dim", str(rank_),
                           str(sh.values()->size()));
            return {*sh.values(), in_subject(2), true};
        }
    }
    if (a_.shape_attr) {
        if (int(a_.shape_attr->size()) != rank_)
            shape_fail(op_error::attr_subject(attr_name), "needs one value per output dim",
                       str(rank_), str(a_.shape_attr->size()));
        return {*a_.shape_attr, op_error::attr_subject(attr_name), true};
    }
    return {{}, op_error::attr_subject(attr_name), false};
}

// The output's shape when the output tensor has one, else the shape input or attribute: the
// order of SEMANTICS §5 for the ops whose output shape cannot be inferred from the inputs alone.
resolver::given_shape resolver::given_output_shape(const char *attr_name) {
    const logical_tensor &out = r_.outputs[0];
    if (out.has_known_shape()) return {out.shape(), out_subject(), true};
    return shape_from_input_or_attr(attr_name);
}

dim_t resolver::kernel_extent(int j) const {
    return checked_add(checked_mul(ksz_[j] - 1, a_.dilations[j], "kernel"), 1, "kernel");
}

// The big side's size along axis j that a small side of `small` implies (the ConvTranspose
// forward's output size): stride*(small-1) + (K-1)*dilation+1 - pads_begin - pads_end +
// output_padding, checked; `what` names the size in an overflow message.
dim_t resolver::big_size(int j, dim_t small, dim_t output_padding, const char *what) const {
    dim_t y = checked_mul(a_.strides[j], small - 1, what);
    y = checked_add(y, kernel_extent(j), what);
    y = checked_sub(y, checked_add(r_.pads_begin[j], r_.pads_end[j], "pads"), what);
    return checked_add(y, output_padding, what);
}

void resolver::check_output_padding(const dims &output_padding) const {
    for (int j = 0; j < S_; ++j)
        if (output_padding[j] >= a_.strides[j])
            err_.fail(status::invalid_shape, op_error::attr_subject("output_padding"),
                      "must be smaller than the stride on every axis",
                      "< " + to_string(a_.strides), to_string(output_padding));
}

// Convolution and ConvTransposeBackwardData: src (big) and weights known, dst inferred.
void resolver::infer_fwd() {
    const data_view src = view_data(r_.inputs[roles_.src].shape(), a_.ncx);
    check_weights(r_.inputs[roles_.wei].shape(), in_subject(roles_.wei));
    mb_ = src.n;
    c_src_ = src.c;
    big_ = src.sp;
    const dim_t want_src = checked_mul(G_, w_i_, "groups * the weights' input channels");
    if (c_src_ != want_src)
        shape_fail(in_subject(roles_.src),
                   "channels must equal groups * " +
                       axis_label(a_.wformat, axes_of(a_.wformat, rank_).i, rank_) + " of weights",
                   str(want_src) + " (groups " + str(G_) + ")", str(c_src_));
    c_dst_ = w_o_;
    resolve_pads(big_);
    if (o_.kind() == op_kind::ConvTransposeBackwardData && a_.output_padding)
        check_output_padding(*a_.output_padding);
    small_.resize(S_);
    for (int j = 0; j < S_; ++j) {
        small_[j] = small_size(j, big_[j]);
        if (small_[j] < 1)
            shape_fail(in_subject(roles_.src),
                       "spatial axis " + str(j) + ": the effective kernel ((K-1)*dilation+1 = " +
                           str((ksz_[j] - 1) * a_.dilations[j] + 1) +
                           ") must fit the padded input (size + pads_begin + pads_end)",
                       ">= " + str((ksz_[j] - 1) * a_.dilations[j] + 1),
                       str(big_[j] + r_.pads_begin[j] + r_.pads_end[j]));
    }
    const dims out = make_data_shape(mb_, c_dst_, small_, a_.ncx);
    check_output_matches(out);
    set_output(out);
}

// ConvolutionBackwardData and ConvTranspose: dst (small) and weights known, src (big) inferred.
void resolver::infer_bwd_data() {
    const data_view dst = view_data(r_.inputs[roles_.dst].shape(), a_.ncx);
    check_weights(r_.inputs[roles_.wei].shape(), in_subject(roles_.wei));
    mb_ = dst.n;
    c_dst_ = dst.c;
    small_ = dst.sp;
    if (c_dst_ != w_o_)
        shape_fail(in_subject(roles_.dst),
                   "channels must equal " +
                       axis_label(a_.wformat, axes_of(a_.wformat, rank_).o, rank_) + " of weights",
                   str(w_o_), str(c_dst_));
    c_src_ = checked_mul(G_, w_i_, "channels");
    const dims op = a_.output_padding ? *a_.output_padding : dims(S_, 0);

    if (o_.kind() == op_kind::ConvTranspose) {
        resolve_pads({});
        check_output_padding(op);
        big_.resize(S_);
        for (int j = 0; j < S_; ++j) {
            const dim_t y = big_size(j, small_[j], op[j], "output size");
            if (y < 1)
                shape_fail(in_subject(roles_.dst),
                           "spatial axis " + str(j) +
                               ": output size stride*(size-1) + (K-1)*dilation+1 - pads_begin - "
                               "pads_end + output_padding must be positive",
                           ">= 1", str(y));
            big_[j] = y;
        }
        const dims out = make_data_shape(mb_, c_src_, big_, a_.ncx);
        check_output_matches(out);
        set_output(out);
        return;
    }

    // ConvolutionBackwardData: diff_src from the output tensor, the dst_shape input, the
    // dst_shape attribute, or output_padding, in that order (SEMANTICS §5).
    const given_shape gs = given_output_shape("dst_shape");
    const dims &given = gs.shape;
    const std::string &given_subject = gs.subject;
    if (gs.found) {
        if (int(given.size()) != rank_)
            shape_fail(given_subject, "diff_src rank must equal the diff_dst rank", str(rank_),
                       str(given.size()));
        const data_view g = view_data(given, a_.ncx);
        if (g.n != mb_)
            shape_fail(given_subject, "batch must equal that of diff_dst", str(mb_), str(g.n));
        if (g.c != c_src_)
            shape_fail(given_subject,
                       "channels must equal groups * " +
                           axis_label(a_.wformat, axes_of(a_.wformat, rank_).i, rank_) +
                           " of weights",
                       str(c_src_), str(g.c));
        for (dim_t d : g.sp)
            if (d < 1) shape_fail(given_subject, "spatial dims must be positive", ">= 1", to_string(given));
        big_ = g.sp;
        resolve_pads(big_);
        check_relation(big_, small_, given_subject);
    } else {
        if (a_.auto_pad != auto_pad_kind::none)
            err_.fail(status::invalid_shape, out_subject(),
                      "with auto_pad other than None the shape of diff_src must be given (output "
                      "tensor, dst_shape input or dst_shape attribute)");
        resolve_pads({});
        big_.resize(S_);
        for (int j = 0; j < S_; ++j) {
            const dim_t x = big_size(j, small_[j], op[j], "diff_src size");
            if (x < 1)
                shape_fail(out_subject(),
                           "spatial axis " + str(j) + ": inferred diff_src size must be positive",
                           ">= 1", str(x));
            big_[j] = x;
        }
        check_relation(big_, small_, op_error::attr_subject("output_padding"));
    }
    const dims shape = make_data_shape(mb_, c_src_, big_, a_.ncx);
    check_output_matches(shape);
    set_output(shape);
}

// Both BackwardWeights ops: src (big) and dst (small) known, weights inferred from a given shape.
void resolver::infer_bwd_weights() {
    const data_view src = view_data(r_.inputs[roles_.src].shape(), a_.ncx);
    const data_view dst = view_data(r_.inputs[roles_.dst].shape(), a_.ncx);
    if (src.n != dst.n)
        shape_fail(in_subject(roles_.dst), std::string("batch must equal that of ") + roles_.src_name,
                   str(src.n), str(dst.n));
    mb_ = src.n;
    c_src_ = src.c;
    c_dst_ = dst.c;
    big_ = src.sp;
    small_ = dst.sp;
    const given_shape gs = given_output_shape("weights_shape");
    const dims &w = gs.shape;
    const std::string &subject = gs.subject;
    if (!gs.found)
        err_.fail(status::invalid_shape, out_subject(),
                  "the diff_weights shape must be given: output tensor shape, weights_shape input "
                  "values at compile time, or the weights_shape attribute");
    check_weights(w, subject);
    const weights_axes ax = axes_of(a_.wformat, rank_);
    if (c_dst_ != w_o_)
        shape_fail(in_subject(roles_.dst),
                   "channels must equal " + axis_label(a_.wformat, ax.o, rank_) + " of diff_weights",
                   str(w_o_), str(c_dst_));
    // (Groups and the weights' channels may each be any 64-bit value: their product is checked
    // before it is compared, fuzz_op found 2^32 * 2^32.)
    const dim_t want_src = checked_mul(G_, w_i_, "groups * the diff_weights' input channels");
    if (c_src_ != want_src)
        shape_fail(in_subject(roles_.src),
                   "channels must equal groups * " + axis_label(a_.wformat, ax.i, rank_) +
                       " of diff_weights",
                   str(want_src) + " (groups " + str(G_) + ")", str(c_src_));
    if (o_.kind() == op_kind::ConvTransposeBackwardWeights && a_.output_padding)
        check_output_padding(*a_.output_padding);
    resolve_pads(big_);
    check_relation(big_, small_, in_subject(roles_.dst));
    check_output_matches(w);
    set_output(w);
}

void resolver::finish_problem() {
    conv_problem &p = r_.prob;
    p.kind = o_.kind();
    p.dir = roles_.dir;
    p.nsp = S_;
    p.mb = mb_;
    p.g = G_;
    p.icg = c_src_ / G_;
    p.ocg = c_dst_ / G_;
    for (int j = 0; j < S_; ++j) {
        const int a = max_spatial - S_ + j;
        p.i[a] = big_[j];
        p.o[a] = small_[j];
        p.k[a] = ksz_[j];
        p.s[a] = a_.strides[j];
        p.dl[a] = a_.dilations[j];
        p.pb[a] = r_.pads_begin[j];
        p.pe[a] = r_.pads_end[j];
    }
    auto tensor_of = [&](int idx) -> const logical_tensor & {
        return idx < 0 ? r_.outputs[0] : r_.inputs[idx];
    };
    p.src = data_strides(tensor_of(roles_.src), a_.ncx);
    p.dst = data_strides(tensor_of(roles_.dst), a_.ncx);
    const logical_tensor &w = tensor_of(roles_.wei);
    const weights_axes ax = axes_of(a_.wformat, rank_);
    p.wei.oc = w.strides()[ax.o];
    p.wei.ic = w.strides()[ax.i];
    for (int j = 0; j < S_; ++j) p.wei.sp[max_spatial - S_ + j] = w.strides()[ax.k0 + j];
    p.shorten_strides_past_image();
    p.read_only_windowed_pixels();
    r_.src_input = roles_.src;
    r_.dst_input = roles_.dst;
    r_.wei_input = roles_.wei;
}

resolved_op resolver::run() {
    const op_kind k = o_.kind();
    if (r_.inputs.size() < 2 || r_.outputs.size() != 1)
        err_.fail(status::invalid_graph_op, "inputs", "op has the wrong number of tensors");
    for (int i = 0; i < int(r_.inputs.size()); ++i) check_input(i);
    G_ = a_.groups;

    // Data type shared by all float tensors (the schema check made them agree where known):
    // the first float input's, so that a mismatch names the tensor that differs.
    data_type dt = data_type::undef;
    for (int i = 0; i < int(r_.inputs.size()) && dt == data_type::undef; ++i) {
        const bool is_shape = i == 2 && k != op_kind::Convolution && k != op_kind::ConvTranspose;
        if (!is_shape) dt = r_.inputs[i].dtype();
    }
    if (dt != data_type::f32 && dt != data_type::bf16 && dt != data_type::f16)
        err_.fail(status::invalid_data_type, in_subject(0), "unsupported data type",
                  "f32, bf16 or f16", to_string(dt));
    for (int i = 0; i < int(r_.inputs.size()); ++i) {
        const bool is_shape = i == 2 && k != op_kind::Convolution && k != op_kind::ConvTranspose;
        const data_type want = is_shape ? data_type::s32 : dt;
        if (r_.inputs[i].dtype() != want)
            err_.fail(status::invalid_data_type, in_subject(i), "data type", to_string(want),
                      to_string(r_.inputs[i].dtype()));
    }
    if (r_.outputs[0].dtype() != data_type::undef && r_.outputs[0].dtype() != dt)
        err_.fail(status::invalid_data_type, out_subject(), "data type must equal the inputs'",
                  to_string(dt), to_string(r_.outputs[0].dtype()));
    r_.prob.dt = dt;
    r_.prob.math_dt = dt;  // strict; a graph's fpmath_mode may lower it (graph.cpp)

    // Rank from the data input(s).
    const int data_in = roles_.src >= 0 ? roles_.src : roles_.dst;
    rank_ = r_.inputs[data_in].ndims();
    if (rank_ < 3 || rank_ > 5)
        shape_fail(in_subject(data_in), "data tensors have rank 3, 4 or 5 (1-D, 2-D, 3-D)",
                   "3..5", str(rank_));
    S_ = rank_ - 2;
    for (int i : {roles_.src, roles_.dst, roles_.wei})
        if (i >= 0 && r_.inputs[i].ndims() != rank_)
            shape_fail(in_subject(i), "rank must equal that of " + std::string(input_name(data_in)),
                       str(rank_), str(r_.inputs[i].ndims()));
    // Only the batch of a data tensor may be empty (zero-sized batch); channels and spatial
    // sizes are positive.
    for (int i : {roles_.src, roles_.dst}) {
        if (i < 0) continue;
        const data_view v = view_data(r_.inputs[i].shape(), a_.ncx);
        bool ok = v.c >= 1;
        for (dim_t d : v.sp) ok = ok && d >= 1;
        if (!ok)
            shape_fail(in_subject(i), "channels and spatial dims must be positive (only the batch may be 0)",
                       ">= 1", to_string(r_.inputs[i].shape()));
    }
    check_lengths();

    switch (roles_.dir) {
        case conv_direction::fwd: infer_fwd(); break;
        case conv_direction::bwd_data: infer_bwd_data(); break;
        case conv_direction::bwd_weights: infer_bwd_weights(); break;
    }
    for (dim_t c : {c_src_, c_dst_})
        if (c < 1) shape_fail(in_subject(data_in), "channel counts must be positive", ">= 1", str(c));
    finish_problem();

    // Bias of the forward ops: one value per output channel.
    if (r_.inputs.size() == 3) {
        if (k == op_kind::Convolution || k == op_kind::ConvTranspose) {
            const logical_tensor &b = r_.inputs[2];
            const dim_t oc = k == op_kind::Convolution ? c_dst_ : c_src_;
            if (b.ndims() != 1 || b.shape()[0] != oc)
                shape_fail(in_subject(2), "bias is 1-D with one value per output channel",
                           "[" + str(oc) + "]", to_string(b.shape()));
            r_.prob.with_bias = true;
            r_.prob.bias_stride = b.strides()[0];
            r_.bias_input = 2;
        } else {
            const logical_tensor &sh = r_.inputs[2];
            if (sh.ndims() != 1 || sh.shape()[0] != rank_)
                shape_fail(in_subject(2), "must be a 1-D s32 tensor with one value per output dim",
                           "[" + str(rank_) + "]", to_string(sh.shape()));
            r_.shape_input = 2;
            r_.shape_values = r_.outputs[0].shape();
        }
    }
    return r_;
}

}  // namespace

resolved_op resolve_op(const op &o, const std::vector<logical_tensor> &inputs,
                       const std::vector<logical_tensor> &outputs) {
    validate_op_schema(o);
    try {
        return resolver(o, inputs, outputs).run();
    } catch (const error &e) {
        // Size arithmetic (checked.hpp, logical_tensor sizes) does not know the op.
        const std::string who = o.describe();
        if (std::string_view(e.what()).substr(0, who.size()) == who) throw;
        throw error(e.code(), who + ": " + e.what());
    }
}

}  // namespace convgrad::detail
