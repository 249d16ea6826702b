#include "desc.hpp"

#include <cctype>
#include <map>
#include <sstream>

#include "core/checked.hpp"

namespace convgrad::tool {

namespace {
[[noreturn]] void bad(const std::string &text, const std::string &why) {
    throw error(status::invalid_arguments, "problem descriptor '" + text + "': " + why);
}
const char axis_names[3] = {'d', 'h', 'w'};
}  // namespace

std::string conv_desc::str(bool with_mb) const {
    std::ostringstream os;
    auto axes = [&](const char *p, const dim_t *v) {
        for (int a = 3 - nsp; a < 3; ++a) os << p << axis_names[a] << v[a];
    };
    os << "g" << g;
    if (with_mb) os << "mb" << mb;
    os << "ic" << ic;
    axes("i", i);
    os << "oc" << oc;
    axes("o", o);
    axes("k", k);
    axes("s", s);
    axes("p", pb);
    bool any_dl = false, any_pe = false;
    for (int a = 3 - nsp; a < 3; ++a) any_dl |= dl[a] != 0, any_pe |= pe[a] != pb[a];
    if (any_dl) axes("d", dl);
    if (any_pe)
        for (int a = 3 - nsp; a < 3; ++a) os << "_pe" << axis_names[a] << pe[a];
    return os.str();
}

namespace {

// A descriptor value in int64 arithmetic that throws on overflow (through detail::checked_*), so
// that the size formulas below read as formulas.
struct ck {
    dim_t v;
};
ck operator+(ck a, ck b) {
    return {detail::checked_add(a.v, b.v, "a size the descriptor implies")};
}
ck operator-(ck a, ck b) {
    return {detail::checked_sub(a.v, b.v, "a size the descriptor implies")};
}
ck operator*(ck a, ck b) {
    return {detail::checked_mul(a.v, b.v, "a size the descriptor implies")};
}
const ck one{1};

// One spatial axis: sets the output size (or end pad) the others imply and returns whether the
// sizes agree. Values are checked positive (pads, dilation >= 0) before.
bool resolve_axis(conv_desc &d, int a, bool deconv, bool o_given, bool pe_given, dim_t o,
                  dim_t pe) {
    const ck i{d.i[a]}, k{d.k[a]}, s{d.s[a]}, dl{d.dl[a]}, pb{d.pb[a]};
    const ck ke = (k - one) * (dl + one) + one;
    d.pe[a] = pe_given ? pe : d.pb[a];
    if (o_given) {
        d.o[a] = o;
        if (!pe_given) {  // the end pad the output size implies
            d.pe[a] =
                deconv ? ((i - one) * s + ke - pb - ck{o}).v : ((ck{o} - one) * s + ke - pb - i).v;
            if (d.pe[a] < 0 && !deconv) d.pe[a] = 0;  // rows beyond the last window
        }
    } else {
        d.o[a] = deconv ? ((i - one) * s + ke - pb - ck{d.pe[a]}).v
                        : (i + pb + ck{d.pe[a]} - ke).v / s.v + 1;
    }
    if (d.o[a] < 1 || d.pe[a] < 0) return true;  // reported by the caller
    const dim_t big = deconv ? d.o[a] : d.i[a], small = deconv ? d.i[a] : d.o[a];
    const ck padded = ck{big} + pb + ck{d.pe[a]};
    return padded.v >= ke.v && (padded - ke).v / s.v + 1 == small;
}

}  // namespace

conv_desc parse_desc(const std::string &text, bool deconv, bool empty_batch) {
    conv_desc d;
    std::map<std::string, dim_t> kv;
    size_t p = 0;
    while (p < text.size()) {
        if (text[p] == '_') {
            ++p;
            continue;
        }
        if (text[p] == 'n' &&
            (p + 1 >= text.size() || !std::isdigit(static_cast<unsigned char>(text[p + 1])))) {
            // name: n"text" or nTEXT up to the end
            std::string rest = text.substr(p + 1);
            if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"')
                rest = rest.substr(1, rest.size() - 2);
            d.name = rest;
            break;
        }
        size_t q = p;
        while (q < text.size() && std::isalpha(static_cast<unsigned char>(text[q]))) ++q;
        const std::string key = text.substr(p, q - p);
        size_t r = q;
        while (r < text.size() && std::isdigit(static_cast<unsigned char>(text[r]))) ++r;
        if (key.empty() || r == q) bad(text, "expected KEYnumber at offset " + std::to_string(p));
        static const char *known[] = {"g",  "mb", "ic", "id", "ih",  "iw",  "oc", "od", "oh",
                                      "ow", "kd", "kh", "kw", "sd",  "sh",  "sw", "dd", "dh",
                                      "dw", "pd", "ph", "pw", "ped", "peh", "pew"};
        bool ok = false;
        for (const char *k : known) ok |= key == k;
        if (!ok) bad(text, "unknown key '" + key + "'");
        if (kv.count(key)) bad(text, "key '" + key + "' given twice");
        dim_t v = 0;
        if (!detail::parse_int64(std::string_view(text).substr(q, r - q), v))
            bad(text, "value of '" + key + "' does not fit a 64-bit integer");
        kv[key] = v;
        p = r;
    }
    auto has = [&](const std::string &k) { return kv.count(k) > 0; };
    auto get = [&](const std::string &k, dim_t def) { return has(k) ? kv.at(k) : def; };
    if (!has("ic") || !has("oc")) bad(text, "ic and oc are required");
    d.g = get("g", 1);
    d.mb = get("mb", 2);
    d.ic = kv.at("ic");
    d.oc = kv.at("oc");
    if (d.g < 1 || d.ic < 1 || d.oc < 1 || d.mb < (empty_batch ? 0 : 1))
        bad(text, "g, mb, ic, oc must be positive");
    if (d.ic % d.g || d.oc % d.g) bad(text, "ic and oc must be divisible by g");
    // Number of spatial axes.
    const bool has_d = has("id") || has("od") || has("kd");
    const bool has_h = has("ih") || has("oh") || has("kh");
    d.nsp = has_d ? 3 : has_h ? 2 : 1;
    if (!has("i" + std::string(1, axis_names[3 - d.nsp]))) {
        if (!(d.nsp == 1 && has("iw")))
            bad(text, std::string("the input size i") + axis_names[3 - d.nsp] + " is required");
    }
    // The first given axis fills the absent later ones (benchdnn: square and cubic problems).
    for (int a = 3 - d.nsp; a < 3; ++a) {
        const std::string n(1, axis_names[a]);
        const std::string first(1, axis_names[3 - d.nsp]);
        auto axis_val = [&](const char *pre, dim_t def) {
            if (has(pre + n)) return kv.at(pre + n);
            if (has(pre + first)) return kv.at(pre + first);
            return def;
        };
        d.i[a] = axis_val("i", 1);
        d.k[a] = axis_val("k", 1);
        d.s[a] = axis_val("s", 1);
        d.dl[a] = axis_val("d", 0);
        d.pb[a] = axis_val("p", 0);
        if (d.i[a] < 1 || d.k[a] < 1 || d.s[a] < 1 || d.dl[a] < 0 || d.pb[a] < 0)
            bad(text, "sizes, kernels and strides must be positive, pads and dilations >= 0");
        bool consistent = false;
        try {
            consistent = resolve_axis(d, a, deconv, has("o" + n) || has("o" + first), has("pe" + n),
                                      axis_val("o", 1), has("pe" + n) ? kv.at("pe" + n) : 0);
        } catch (const error &e) {
            // The values are user input: a size they imply that does not fit int64 is a bad
            // descriptor, not a wrapped size.
            if (e.code() != status::out_of_memory) throw;
            bad(text, std::string("sizes along ") + axis_names[a] + " overflow 64-bit integers (" +
                          e.what() + ")");
        }
        if (d.o[a] < 1)
            bad(text, std::string("output size o") + axis_names[a] + " is not positive");
        if (d.pe[a] < 0)
            bad(text, std::string("sizes along ") + axis_names[a] +
                          " are inconsistent (negative end pad " + std::to_string(d.pe[a]) + ")");
        if (!consistent)
            bad(text, std::string("sizes along ") + axis_names[a] +
                          " do not satisfy o = (i + pb + pe - ke)/s + 1");
    }
    return d;
}

op make_op(op_kind kind, const conv_desc &d, data_type dt, bool ncx) {
    const bool deconv = is_conv_transpose_family(kind);
    auto sp = [&](const dim_t *v) {
        dims x;
        for (int a = 3 - d.nsp; a < 3; ++a) x.push_back(v[a]);
        return x;
    };
    auto data_shape = [&](dim_t c, const dim_t *v) {
        dims s{d.mb};
        if (ncx) s.push_back(c);
        for (dim_t x : sp(v)) s.push_back(x);
        if (!ncx) s.push_back(c);
        return s;
    };
    dims dil = sp(d.dl);
    for (auto &x : dil) x += 1;
    op o(0, kind, to_string(kind));
    o.set_attr("strides", sp(d.s))
        .set_attr("pads_begin", sp(d.pb))
        .set_attr("pads_end", sp(d.pe))
        .set_attr("dilations", dil)
        .set_attr("groups", int64_t(d.g))
        .set_attr("data_format", std::string(ncx ? "NCX" : "NXC"))
        .set_attr("weights_format",
                  std::string(ncx ? (deconv ? "IOX" : "OIX") : (deconv ? "XOI" : "XIO")));
    const dims src = data_shape(d.ic, d.i), dst = data_shape(d.oc, d.o);
    // Conv XIO: [K.., IC/G, OC], OIX: [OC, IC/G, K..]; ConvTranspose XOI: [K.., OC/G, IC],
    // IOX: [IC, OC/G, K..].
    dims wei = ncx ? dims{} : sp(d.k);
    if (ncx)
        wei = deconv ? dims{d.ic, d.oc / d.g} : dims{d.oc, d.ic / d.g};
    else if (deconv)
        wei.push_back(d.oc / d.g), wei.push_back(d.ic);
    else
        wei.push_back(d.ic / d.g), wei.push_back(d.oc);
    if (ncx)
        for (dim_t x : sp(d.k)) wei.push_back(x);
    auto lt = [&](size_t id, const dims &s) { return logical_tensor(id, dt, s); };
    switch (kind) {
        case op_kind::Convolution:
        case op_kind::ConvTranspose:
            o.add_input(lt(0, src)).add_input(lt(1, wei)).add_output(lt(2, dst));
            break;
        case op_kind::ConvolutionBackwardData:
        case op_kind::ConvTransposeBackwardData:
            o.add_input(lt(0, dst)).add_input(lt(1, wei)).add_output(lt(2, src));
            break;
        case op_kind::ConvolutionBackwardWeights:
        case op_kind::ConvTransposeBackwardWeights:
            o.add_input(lt(0, src)).add_input(lt(1, dst)).add_output(lt(2, wei));
            break;
    }
    return o;
}

double terms_per_output(op_kind kind, const std::string &problem_desc) {
    const conv_desc c = parse_desc(problem_desc, false, true);
    const double ksp = double(c.k[0]) * double(c.k[1]) * double(c.k[2]);
    switch (kind) {
        case op_kind::Convolution:
        case op_kind::ConvTransposeBackwardData:
            return double(c.ic / c.g) * ksp;
        case op_kind::ConvolutionBackwardData:
        case op_kind::ConvTranspose:
            return double(c.oc / c.g) * ksp;
        case op_kind::ConvolutionBackwardWeights:
        case op_kind::ConvTransposeBackwardWeights:
            return double(c.mb) * double(c.o[0]) * double(c.o[1]) * double(c.o[2]);
    }
    return 1;
}

}  // namespace convgrad::tool
