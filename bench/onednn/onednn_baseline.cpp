#include "onednn/onednn_baseline.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/float_convert.hpp"

namespace convgrad::bench {
namespace {

using detail::conv_direction;
using detail::conv_problem;
using dnnl::memory;
using md = dnnl::memory::desc;
using tag = dnnl::memory::format_tag;

// Values of the spatial axes the problem has (d, h, w order), minus `bias`.
memory::dims spatial(const conv_problem &p, const dim_t *v, dim_t bias = 0) {
    memory::dims r;
    for (int a = detail::max_spatial - p.nsp; a < detail::max_spatial; ++a) r.push_back(v[a] - bias);
    return r;
}

// A data tensor {mb, c, sp..} with the strides of the user's tensor (`l`), unless `any`.
md data_md(const conv_problem &p, dim_t c, const dim_t *sp, const detail::data_layout &l,
           memory::data_type dt, bool any) {
    memory::dims d{p.mb, c};
    const memory::dims s = spatial(p, sp);
    d.insert(d.end(), s.begin(), s.end());
    if (any) return md(d, dt, tag::any);
    memory::dims st{l.n, l.c};
    const memory::dims sst = spatial(p, l.sp);
    st.insert(st.end(), sst.begin(), sst.end());
    return md(d, dt, st);
}

// Weights with the strides of the user's tensor. oneDNN's dims: convolution {[g,] ocg, icg, K..};
// deconvolution {[g,] OC_t/G = icg, IC_t/G = ocg, K..}.
md weights_md(const conv_problem &p, bool deconv, memory::data_type dt, bool any) {
    memory::dims d, st;
    auto add = [&](dim_t size, dim_t stride) {
        d.push_back(size);
        st.push_back(stride);
    };
    if (p.g > 1) add(p.g, p.ocg * p.wei.oc);
    if (deconv) add(p.icg, p.wei.ic), add(p.ocg, p.wei.oc);
    else add(p.ocg, p.wei.oc), add(p.icg, p.wei.ic);
    const memory::dims k = spatial(p, p.k), kst = spatial(p, p.wei.sp);
    d.insert(d.end(), k.begin(), k.end());
    st.insert(st.end(), kst.begin(), kst.end());
    return any ? md(d, dt, tag::any) : md(d, dt, st);
}

// The primitive's tensors in oneDNN's terms: x is the primitive's src (diff_src), y its dst
// (diff_dst). For a convolution x is the big side; for a deconvolution the small side.
struct geometry {
    md x, w, b, y;  // b empty when there is no bias
    memory::dims strides, dilates, pad_l, pad_r;
};

struct conv_prims {
    using fwd = dnnl::convolution_forward;
    using bwd_d = dnnl::convolution_backward_data;
    using bwd_w = dnnl::convolution_backward_weights;
    static constexpr dnnl::algorithm alg = dnnl::algorithm::convolution_direct;
};
struct deconv_prims {
    using fwd = dnnl::deconvolution_forward;
    using bwd_d = dnnl::deconvolution_backward_data;
    using bwd_w = dnnl::deconvolution_backward_weights;
    static constexpr dnnl::algorithm alg = dnnl::algorithm::deconvolution_direct;
};

template <class T>
std::pair<dnnl::primitive_desc, dnnl::primitive> make_primitive(const geometry &g, conv_direction dir,
                                                                const dnnl::engine &eng) {
    const md no_bias;
    // Forward training: the backward primitives want its primitive descriptor as a hint.
    typename T::fwd::desc fd(dnnl::prop_kind::forward_training, T::alg, g.x, g.w,
                             dir == conv_direction::fwd ? g.b : no_bias, g.y, g.strides, g.dilates,
                             g.pad_l, g.pad_r);
    typename T::fwd::primitive_desc fpd(fd, eng);
    if (dir == conv_direction::fwd) return {fpd, typename T::fwd(fpd)};
    if (dir == conv_direction::bwd_data) {
        typename T::bwd_d::desc bd(T::alg, g.x, g.w, g.y, g.strides, g.dilates, g.pad_l, g.pad_r);
        typename T::bwd_d::primitive_desc bpd(bd, eng, fpd);
        return {bpd, typename T::bwd_d(bpd)};
    }
    typename T::bwd_w::desc wd(T::alg, g.x, g.w, no_bias, g.y, g.strides, g.dilates, g.pad_l, g.pad_r);
    typename T::bwd_w::primitive_desc wpd(wd, eng, fpd);
    return {wpd, typename T::bwd_w(wpd)};
}

// Uniform values in [-1, 1) in the tensor's data type (a cheap LCG: the values do not matter,
// only that they are ordinary numbers, no denormals or NaNs).
void fill(memory &m, uint32_t seed) {
    const md d = m.get_desc();
    const size_t bytes = d.get_size();
    auto next = [&] {
        seed = seed * 1664525u + 1013904223u;
        return float(int32_t(seed >> 8) - (1 << 23)) / float(1 << 23);
    };
    char *ptr = static_cast<char *>(m.get_data_handle());
    if (d.data_type() == memory::data_type::f32) {
        for (size_t i = 0; i < bytes / 4; ++i) reinterpret_cast<float *>(ptr)[i] = next();
    } else {
        for (size_t i = 0; i < bytes / 2; ++i) reinterpret_cast<uint16_t *>(ptr)[i] = detail::float_to_bf16(next());
    }
}

class runner final : public onednn_conv {
public:
    explicit runner(const conv_problem &p) {
        const bool deconv = is_conv_transpose_family(p.kind);
        const auto dt = p.dt == data_type::bf16 ? memory::data_type::bf16 : memory::data_type::f32;
        // The primitive's direction: the ConvTranspose family is the mirror of the problem.
        conv_direction dir = p.dir;
        if (deconv && p.dir != conv_direction::bwd_weights)
            dir = p.dir == conv_direction::fwd ? conv_direction::bwd_data : conv_direction::fwd;
        auto x_md = [&](bool any) {
            return deconv ? data_md(p, p.oc(), p.o, p.dst, dt, any) : data_md(p, p.ic(), p.i, p.src, dt, any);
        };
        auto y_md = [&](bool any) {
            return deconv ? data_md(p, p.ic(), p.i, p.src, dt, any) : data_md(p, p.oc(), p.o, p.dst, dt, any);
        };
        geometry g;
        g.x = x_md(true);
        g.y = y_md(true);
        g.w = weights_md(p, deconv, dt, true);
        const bool bias = p.with_bias && dir == conv_direction::fwd;
        const md bias_md = bias ? md({deconv ? p.ic() : p.oc()}, dt, tag::x) : md();
        g.b = bias ? md({deconv ? p.ic() : p.oc()}, dt, tag::any) : md();
        g.strides = spatial(p, p.s);
        g.dilates = spatial(p, p.dl, 1);  // oneDNN's dilations are 0-based
        g.pad_l = spatial(p, p.pb);
        g.pad_r = spatial(p, p.pe);
        auto [pd, prim] = deconv ? make_primitive<deconv_prims>(g, dir, eng_)
                                 : make_primitive<conv_prims>(g, dir, eng_);
        prim_ = prim;
        impl_ = pd.impl_info_str();

        const md w_plain = weights_md(p, deconv, dt, false);
        const role x = deconv ? role::small : role::big, y = deconv ? role::big : role::small;
        switch (dir) {
            case conv_direction::fwd:
                add_arg(pd, DNNL_ARG_SRC, x_md(false), x);
                add_arg(pd, DNNL_ARG_WEIGHTS, w_plain, role::wei);
                if (bias) add_arg(pd, DNNL_ARG_BIAS, bias_md, role::bias);
                add_arg(pd, DNNL_ARG_DST, y_md(false), role::out);
                break;
            case conv_direction::bwd_data:
                add_arg(pd, DNNL_ARG_DIFF_DST, y_md(false), y);
                add_arg(pd, DNNL_ARG_WEIGHTS, w_plain, role::wei);
                add_arg(pd, DNNL_ARG_DIFF_SRC, x_md(false), role::out);
                break;
            case conv_direction::bwd_weights:
                add_arg(pd, DNNL_ARG_SRC, x_md(false), x);
                add_arg(pd, DNNL_ARG_DIFF_DST, y_md(false), y);
                add_arg(pd, DNNL_ARG_DIFF_WEIGHTS, w_plain, role::out);
                break;
        }
        strm_.wait();
    }

    void run_plain() override {
        for (auto &a : args_)
            if (a.reorder && !a.output) a.reorder->execute(strm_, a.user, a.mem);
        prim_.execute(strm_, prim_args_);
        for (auto &a : args_)
            if (a.reorder && a.output) a.reorder->execute(strm_, a.mem, a.user);
        strm_.wait();
    }
    void run_blocked() override {
        prim_.execute(strm_, prim_args_);
        strm_.wait();
    }
    std::string impl_name() const override { return impl_; }

    void set_plain_inputs(const detail::conv_args &in) override {
        for (auto &a : args_) {
            if (a.output) continue;
            const void *from = a.r == role::big ? in.src : a.r == role::small ? in.dst
                             : a.r == role::wei ? in.wei : in.bias;
            std::memcpy(a.user.get_data_handle(), from, a.user.get_desc().get_size());
            if (a.reorder) a.reorder->execute(strm_, a.user, a.mem);
        }
        strm_.wait();
    }
    const void *plain_output() const override {
        for (auto &a : args_)
            if (a.output) return a.user.get_data_handle();
        return nullptr;
    }

private:
    // Which tensor of the canonical problem an argument is.
    enum class role { big, small, wei, bias, out };
    struct arg {
        memory user, mem;  // the plain user tensor and the primitive's (the same when equal)
        std::optional<dnnl::reorder> reorder;  // user -> mem for inputs, mem -> user for the output
        role r = role::out;
        bool output = false;
    };

    void add_arg(const dnnl::primitive_desc &pd, int id, const md &plain, role r) {
        const bool output = r == role::out;
        arg a;
        a.r = r;
        a.output = output;
        a.user = memory(plain, eng_);
        if (!output) fill(a.user, uint32_t(id * 7919 + 1));
        const md want = pd.query_md(dnnl::query::exec_arg_md, id);
        if (want == plain) {
            a.mem = a.user;
        } else {
            a.mem = memory(want, eng_);
            a.reorder = output ? dnnl::reorder(a.mem, a.user) : dnnl::reorder(a.user, a.mem);
            if (!output) a.reorder->execute(strm_, a.user, a.mem);  // the blocked run's data
        }
        prim_args_[id] = a.mem;
        args_.push_back(std::move(a));
    }

    dnnl::engine eng_{dnnl::engine::kind::cpu, 0};
    dnnl::stream strm_{eng_};
    dnnl::primitive prim_;
    std::string impl_;
    std::vector<arg> args_;
    std::unordered_map<int, memory> prim_args_;
};

template <class F>
double time_ms(F &&run, int reps, bool fastest) {
    run();  // warm-up: first-touch of buffers, JIT caches, thread pool
    run();
    std::vector<double> t;
    for (int r = 0; r < std::max(reps, 1); ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (fastest) return *std::min_element(t.begin(), t.end());
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    return t[t.size() / 2];
}

}  // namespace

std::unique_ptr<onednn_conv> onednn_conv::create(const conv_problem &p, std::string &why_not) {
    if (p.dt == data_type::f16) {
        why_not = "no f16 convolution in oneDNN 2.6";
        return nullptr;
    }
    if (p.dt != data_type::f32 && p.dt != data_type::bf16) {
        why_not = std::string("data type ") + to_string(p.dt) + " not benchmarked";
        return nullptr;
    }
    try {
        return std::make_unique<runner>(p);
    } catch (const dnnl::error &e) {
        why_not = std::string("oneDNN: ") + e.what() + " (status " + std::to_string(int(e.status)) + ")";
    } catch (const std::exception &e) {  // e.g. std::bad_alloc for huge problems
        why_not = e.what();
    }
    return nullptr;
}

onednn_timing time_onednn(const conv_problem &p, int threads, int reps, bool fastest) {
    onednn_timing t;
    const int saved_threads = omp_get_max_threads();
    omp_set_num_threads(threads);
    try {
        if (auto c = onednn_conv::create(p, t.note)) {
            t.plain_ms = time_ms([&] { c->run_plain(); }, reps, fastest);
            t.blocked_ms = time_ms([&] { c->run_blocked(); }, reps, fastest);
            t.note = "impl=" + c->impl_name();
        }
    } catch (const dnnl::error &e) {
        t.plain_ms = t.blocked_ms = NAN;
        t.note = std::string("oneDNN: ") + e.what();
    } catch (const std::exception &e) {
        t.plain_ms = t.blocked_ms = NAN;
        t.note = e.what();
    }
    omp_set_num_threads(saved_threads);
    return t;
}

}  // namespace convgrad::bench
