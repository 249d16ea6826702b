"""convgrad.torch layers against the same torch.nn layer in float64 (autograd), over a seeded
sweep: 1-D/2-D/3-D, stride, dilation, padding (ints, 'same', 'valid'), output_padding, groups,
depthwise, bias or not, contiguous and channels_last, f32/bf16/f16. Output, input gradient,
weight gradient and bias gradient are each held to the bound of bounds.py."""
import math
import random

import pytest
import torch
import torch.nn as nn

import convgrad.torch as cgt
from bounds import assert_within

CLASSES = {
    (False, 1): (cgt.Conv1d, nn.Conv1d), (False, 2): (cgt.Conv2d, nn.Conv2d),
    (False, 3): (cgt.Conv3d, nn.Conv3d), (True, 1): (cgt.ConvTranspose1d, nn.ConvTranspose1d),
    (True, 2): (cgt.ConvTranspose2d, nn.ConvTranspose2d),
    (True, 3): (cgt.ConvTranspose3d, nn.ConvTranspose3d),
}
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def random_layer(rng, transposed, n):
    depthwise = rng.random() < 0.2
    g = rng.choice([2, 4]) if depthwise else rng.choice([1, 1, 2, 3])
    cin = g * (1 if depthwise else rng.choice([1, 2, 3, 4]))
    cout = g * (1 if depthwise else rng.choice([1, 2, 5]))
    k = rng.choice([1, 2, 3])
    s = rng.choice([1, 1, 2])
    d = rng.choice([1, 1, 2])
    kw = dict(stride=s, dilation=d, groups=g, bias=rng.random() < 0.7)
    if transposed:
        kw["padding"] = rng.choice([0, 1])
        kw["output_padding"] = rng.randrange(0, s)  # torch also allows < dilation: an error here
    else:
        pad = rng.choice([0, 1, 2, "same", "valid"])
        if pad == "same":
            kw["stride"] = 1  # torch allows 'same' only with stride 1
        kw["padding"] = pad
    size = [rng.choice([4, 5, 8]) if n < 3 else rng.choice([3, 4, 5]) for _ in range(n)]
    size = [max(x, (k - 1) * d + 1) for x in size]
    return (cin, cout, k), kw, size, rng.choice([1, 2, 3])


def to_format(t, channels_last):
    if not channels_last:
        return t.contiguous()
    perm = [0] + list(range(2, t.dim())) + [1]
    inv = [perm.index(i) for i in range(t.dim())]
    return t.permute(perm).contiguous().permute(inv)


def run_case(transposed, n, args, kw, size, mb, dtype, channels_last, seed):
    cg_cls, torch_cls = CLASSES[(transposed, n)]
    torch.manual_seed(seed)
    layer = cg_cls(*args, **kw).to(dtype)
    ref = torch_cls(*args, **kw).double()
    ref.load_state_dict(layer.state_dict())  # the dtype-rounded weights, exactly
    absref = torch_cls(*args, **kw).double()
    absref.load_state_dict({k: v.abs() for k, v in ref.state_dict().items()})
    if channels_last:
        layer.weight.data = to_format(layer.weight.data, True)

    x = (torch.rand(mb, args[0], *size, dtype=torch.float64) * 2 - 1).to(dtype)
    xc = to_format(x.clone(), channels_last).requires_grad_()
    y = layer(xc)
    gy = (torch.rand(*y.shape, dtype=torch.float64) * 2 - 1).to(dtype)
    y.backward(to_format(gy, channels_last))

    x64 = x.detach().double().requires_grad_()
    y64 = ref(x64)
    y64.backward(gy.double())
    xa = x.detach().double().abs().requires_grad_()
    ya = absref(xa)
    ya.backward(gy.double().abs())

    what = f"{cg_cls.__name__}{args}{kw} x{tuple(x.shape)} {dtype} channels_last={channels_last}"
    assert y.dtype == dtype, what
    if channels_last and not xc.is_contiguous() and args[1] > 1 and math.prod(y.shape[2:]) > 1:
        assert y.stride()[1] == 1, what + ": output not channels-last"
    k = math.prod(layer.kernel_size)
    assert_within(y.detach(), y64.detach(), ya.detach(), args[0] // kw["groups"] * k + 1, dtype,
                  "output " + what)
    assert_within(xc.grad, x64.grad, xa.grad, args[1] // kw["groups"] * k, dtype,
                  "input grad " + what)
    small = math.prod((x if transposed else y).shape[2:])
    assert_within(layer.weight.grad, ref.weight.grad, absref.weight.grad, mb * small, dtype,
                  "weight grad " + what)
    assert layer.weight.grad.stride() == layer.weight.stride(), what
    if kw["bias"]:
        assert_within(layer.bias.grad, ref.bias.grad, absref.bias.grad,
                      mb * math.prod(y.shape[2:]), dtype, "bias grad " + what)


@pytest.mark.parametrize("transposed", [False, True], ids=["Conv", "ConvTranspose"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_layers_against_float64_autograd(transposed, n):
    rng = random.Random(100 * n + transposed)
    for i in range(60):
        args, kw, size, mb = random_layer(rng, transposed, n)
        run_case(transposed, n, args, kw, size, mb, DTYPES[i % 3], (i // 3) % 2 == 1, seed=i)


def test_unbatched_input_and_padding_modes():
    torch.manual_seed(0)
    for mode in ["zeros", "reflect", "replicate", "circular"]:
        a = cgt.Conv2d(3, 4, 3, padding=1, padding_mode=mode)
        b = nn.Conv2d(3, 4, 3, padding=1, padding_mode=mode)
        b.load_state_dict(a.state_dict())
        x = torch.randn(2, 3, 7, 6)
        torch.testing.assert_close(a(x), b(x), rtol=1e-5, atol=1e-5)
        # Unbatched input (torch 1.13's own layers take it only with zeros padding).
        torch.testing.assert_close(a(x[0]), a(x)[0], rtol=0, atol=0)


def test_conv_transpose_output_size_argument():
    torch.manual_seed(1)
    a = cgt.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    b = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    b.load_state_dict(a.state_dict())
    x = torch.randn(1, 4, 5, 5)
    ya, yb = a(x, output_size=[10, 10]), b(x, output_size=[10, 10])
    assert ya.shape == (1, 2, 10, 10)
    torch.testing.assert_close(ya, yb, rtol=1e-5, atol=1e-5)


def test_bf16_conv_transpose_where_torch_has_none():
    torch.manual_seed(2)
    a = cgt.ConvTranspose2d(8, 4, 4, stride=2, padding=1).bfloat16()
    x = torch.randn(2, 8, 6, 6).bfloat16().requires_grad_()
    a(x).float().square().sum().backward()
    assert x.grad.dtype == torch.bfloat16 and torch.isfinite(x.grad.float()).all()
    assert a.weight.grad.abs().sum() > 0
