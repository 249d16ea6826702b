"""The six op functions against PyTorch float64 autograd over a seeded sweep: 1-D/2-D/3-D,
stride, dilation, asymmetric pads, output_padding, groups and depthwise, NCX and channels-last
strides, sliced (non-dense) inputs, NumPy and torch arrays, f32/bf16/f16. Bounds: bounds.py."""
import math
import random

import numpy as np
import pytest
import torch

import convgrad
import reference
from bounds import assert_within

DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def random_case(rng):
    n = rng.choice([1, 2, 2, 3])
    depthwise = rng.random() < 0.2
    g = rng.choice([2, 3, 8]) if depthwise else rng.choice([1, 1, 2, 3])
    icg = 1 if depthwise else rng.choice([1, 2, 3, 5, 8])
    ocg = 1 if depthwise else rng.choice([1, 2, 4, 7])
    k = [rng.choice([1, 2, 3]) for _ in range(n)]
    s = [rng.choice([1, 1, 2, 3]) for _ in range(n)]
    d = [rng.choice([1, 1, 2]) for _ in range(n)]
    pb = [rng.choice([0, 0, 1, 2]) for _ in range(n)]
    pe = [rng.choice([0, 0, 1, 2]) for _ in range(n)]
    size = [rng.choice([3, 4, 5, 7, 9]) if n < 3 else rng.choice([3, 4, 5]) for _ in range(n)]
    for j in range(n):  # the kernel must fit the padded input
        ke = (k[j] - 1) * d[j] + 1
        size[j] = max(size[j], ke - pb[j] - pe[j])
    op_pad = [rng.randrange(0, s[j]) for j in range(n)]
    return dict(n=n, g=g, icg=icg, ocg=ocg, k=k, s=s, d=d, pb=pb, pe=pe, size=size,
                op=op_pad, mb=rng.choice([1, 2, 3]), bias=rng.random() < 0.5)


def to_layout(t, how):
    """The same values with other strides: dense NCX, channels-last, or a strided slice."""
    if how == "ncx":
        return t.contiguous()
    if how == "nxc":
        perm = [0] + list(range(2, t.dim())) + [1]
        inv = [perm.index(i) for i in range(t.dim())]
        return t.permute(perm).contiguous().permute(inv)
    big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1] + 1, dtype=t.dtype)  # every other element
    big[..., 1::2] = t
    return big[..., 1::2]


def as_array(t, family):
    if family == "numpy":
        return t.numpy()
    return t


def rounded(shape, dtype, gen):
    """Random values rounded to dtype; returns (the dtype tensor, its exact float64 copy)."""
    v = (torch.rand(*shape, generator=gen, dtype=torch.float64) * 2 - 1).to(dtype)
    return v, v.double()


def back(out):
    return torch.from_numpy(out) if isinstance(out, np.ndarray) else out


def check_family(c, dtype, layout, family, gen, transposed):
    n, g = c["n"], c["g"]
    cin, cout = g * c["icg"], g * c["ocg"]
    common = dict(strides=c["s"], pads_begin=c["pb"], pads_end=c["pe"], dilations=c["d"],
                  groups=g, data_format="NCX")
    if not transposed:
        wshape = [cout, c["icg"]] + c["k"]
        x, x64 = rounded([c["mb"], cin] + c["size"], dtype, gen)
    else:
        # ConvTranspose from cin to cout: its input is the small side of the mirror convolution.
        wshape = [cin, c["ocg"]] + c["k"]
        small = [(c["size"][j] + c["pb"][j] + c["pe"][j] - (c["k"][j] - 1) * c["d"][j] - 1)
                 // c["s"][j] + 1 for j in range(n)]
        x, x64 = rounded([c["mb"], cin] + small, dtype, gen)
    w, w64 = rounded(wshape, dtype, gen)
    b, b64 = rounded([cout], dtype, gen) if c["bias"] else (None, None)

    def ref(xx, ww, bb):
        if transposed:
            return reference.conv_transpose(xx, ww, bb, c["s"], c["pb"], c["pe"], c["d"], g, c["op"])
        return reference.conv(xx, ww, bb, c["s"], c["pb"], c["pe"], c["d"], g)

    xr, wr = x64.clone().requires_grad_(), w64.clone().requires_grad_()
    y64 = ref(xr, wr, b64)
    gy, gy64 = rounded(list(y64.shape), dtype, gen)
    gx64, gw64 = torch.autograd.grad(y64, (xr, wr), gy64)
    # Sums of |terms|: the same computations on absolute values.
    xa, wa = x64.abs().requires_grad_(), w64.abs().requires_grad_()
    ya = ref(xa, wa, b64.abs() if b64 is not None else None)
    gxa, gwa = torch.autograd.grad(ya, (xa, wa), gy64.abs())

    kprod = math.prod(c["k"])
    spatial_out = math.prod(y64.shape[2:])
    X = as_array(to_layout(x, layout), family)
    W = as_array(to_layout(w, layout if rng_bool(gen) else "ncx"), family)
    B = as_array(b, family) if b is not None else None
    GY = as_array(to_layout(gy, layout), family)
    what = f"{'CT' if transposed else 'conv'} {c} {dtype} {layout} {family}"
    if not transposed:
        y = convgrad.convolution(X, W, B, weights_format="OIX", **common)
        gx = convgrad.convolution_backward_data(GY, W, dst_shape=list(x.shape),
                                                weights_format="OIX", **common)
        gw = convgrad.convolution_backward_weights(X, GY, weights_shape=wshape,
                                                   weights_format="OIX", **common)
        terms_fwd, terms_bd = c["icg"] * kprod + 1, c["ocg"] * kprod
    else:
        y = convgrad.conv_transpose(X, W, B, weights_format="IOX", output_padding=c["op"], **common)
        gx = convgrad.conv_transpose_backward_data(GY, W, weights_format="IOX", **common)
        gw = convgrad.conv_transpose_backward_weights(X, GY, weights_shape=wshape,
                                                      weights_format="IOX", **common)
        terms_fwd, terms_bd = c["icg"] * kprod + 1, c["ocg"] * kprod
    expect_type = np.ndarray if family == "numpy" else torch.Tensor
    for out in (y, gx, gw):
        assert isinstance(out, expect_type), what
    assert_within(back(y), y64.detach(), ya.detach(), terms_fwd, dtype, "dst " + what)
    assert_within(back(gx), gx64, gxa, terms_bd, dtype, "diff_src " + what)
    terms_w = c["mb"] * (spatial_out if not transposed else math.prod(x.shape[2:]))
    assert_within(back(gw), gw64, gwa, terms_w, dtype, "diff_weights " + what)
    # Data outputs follow the first input's memory order (channels-last in, channels-last out).
    # (Only where the input is not also dense in NCX order: size-1 axes make both true.)
    if layout == "nxc" and family == "torch":
        if not X.is_contiguous() and back(y).shape[1] > 1:
            assert back(y).stride()[1] == 1, what
        if not GY.is_contiguous() and back(gx).shape[1] > 1:
            assert back(gx).stride()[1] == 1, what


def rng_bool(gen):
    return bool(torch.randint(0, 2, (1,), generator=gen))


def sweep(seed, count):
    rng = random.Random(seed)
    for i in range(count):
        c = random_case(rng)
        dtype = DTYPES[i % 3]
        layout = ["ncx", "nxc", "sliced"][(i // 3) % 3]
        family = "torch" if dtype == torch.bfloat16 or i % 2 else "numpy"
        yield i, c, dtype, layout, family


@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "conv_transpose"])
def test_ops_against_float64_autograd(transposed):
    gen = torch.Generator().manual_seed(7 if transposed else 3)
    checked = 0
    for i, c, dtype, layout, family in sweep(11 + transposed, 150):
        check_family(c, dtype, layout, family, gen, transposed)
        checked += 1
    assert checked == 150


def test_out_argument_is_written_and_returned():
    x = torch.randn(2, 3, 6, 6)
    w = torch.randn(4, 3, 3, 3)
    out = torch.full((2, 4, 4, 4), float("nan"))
    got = convgrad.convolution(x, w, data_format="NCX", weights_format="OIX", out=out)
    assert got is out
    torch.testing.assert_close(out, torch.nn.functional.conv2d(x, w), rtol=1e-5, atol=1e-5)


def test_channels_last_numpy_and_nxc_defaults():
    # oneDNN's defaults: NXC data, XIO weights.
    x = np.random.default_rng(0).standard_normal((2, 5, 5, 3)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 3, 3, 4)).astype(np.float32)
    y = convgrad.convolution(x, w)
    ref = torch.nn.functional.conv2d(torch.from_numpy(x).permute(0, 3, 1, 2),
                                     torch.from_numpy(w).permute(3, 2, 0, 1)).permute(0, 2, 3, 1)
    np.testing.assert_allclose(y, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_read_only_numpy_input_through_the_buffer_protocol():
    x = np.ones((1, 2, 4), np.float32)
    x.setflags(write=False)  # NumPy refuses DLPack export of read-only arrays
    y = convgrad.convolution(x, np.ones((1, 2, 1), np.float32), data_format="NCX",
                             weights_format="OIX")
    np.testing.assert_array_equal(y, np.full((1, 1, 4), 2, np.float32))


def test_repeated_calls_hit_the_cache():
    convgrad.clear_cache()
    x, w = torch.randn(1, 2, 5), torch.randn(3, 2, 2)
    for _ in range(5):
        convgrad.convolution(x, w, data_format="NCX", weights_format="OIX")
    assert convgrad._convgrad._cache_size() == 1
    convgrad.convolution(x.bfloat16(), w.bfloat16(), data_format="NCX", weights_format="OIX")
    assert convgrad._convgrad._cache_size() == 2


def test_threads_setting():
    before = convgrad.get_num_threads()
    convgrad.set_num_threads(2)
    assert convgrad.get_num_threads() == 2
    x, w = torch.randn(4, 16, 32, 32), torch.randn(16, 16, 3, 3)
    y2 = convgrad.convolution(x, w, data_format="NCX", weights_format="OIX")
    convgrad.set_num_threads(1)
    y1 = convgrad.convolution(x, w, data_format="NCX", weights_format="OIX")
    torch.testing.assert_close(y1, y2)
    convgrad.set_num_threads(0)
    assert convgrad.get_num_threads() >= 1
    convgrad.set_num_threads(before)


def test_strided_out_view_is_written_in_place():
    # No copies: the result lands in a non-contiguous view of a bigger tensor, and the elements
    # between the view's stay untouched.
    x, w = torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3)
    big = torch.zeros(2, 4, 4, 8)
    view = big[..., ::2]
    assert convgrad.convolution(x, w, data_format="NCX", weights_format="OIX", out=view) is view
    torch.testing.assert_close(big[..., ::2], torch.nn.functional.conv2d(x, w), rtol=1e-5, atol=1e-5)
    assert torch.count_nonzero(big[..., 1::2]) == 0
