"""PyTorch layers computed by convgrad: Conv1d/2d/3d and ConvTranspose1d/2d/3d.

They subclass the ``torch.nn`` layers: same constructor arguments, parameter names and shapes
(``state_dict`` loads both ways), and forward and backward run convgrad's Convolution /
ConvolutionBackwardData / ConvolutionBackwardWeights (or the ConvTranspose trio) through one
``torch.autograd.Function``; only the bias gradient (a sum) is left to torch. Inputs may be
float32, bfloat16 or float16, contiguous or channels_last (any strides, in fact). Anything
convgrad cannot do (another dtype or device, a double backward) raises ``convgrad.Error``:
there is no silent fallback to torch's own convolution.

``convert(model)`` swaps the class of every ``torch.nn.Conv*``/``ConvTranspose*`` module of a
model in place (same objects, same parameters) and returns the model.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

from ._convgrad import Error, _call

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "convert"]

_CONV, _CONV_BWD_DATA, _CONV_BWD_WEIGHTS, _CT, _CT_BWD_DATA, _CT_BWD_WEIGHTS = range(6)
_SUPPORTED = (torch.float32, torch.bfloat16, torch.float16)


def _usable_grad(g, like):
    # autograd may hand over an expanded gradient (stride 0 on a long axis, e.g. from sum()):
    # convgrad refuses overlapping elements, so give it a real tensor in `like`'s memory order.
    if any(s == 0 and n > 1 for s, n in zip(g.stride(), g.shape)):
        return torch.empty_like(like).copy_(g)
    return g


class _ConvFunction(torch.autograd.Function):
    """y = conv(x, w) + b with the three core ops of one family; ``spec`` carries the attrs."""

    @staticmethod
    def forward(ctx, x, weight, bias, spec):
        ctx.save_for_backward(x, weight)
        ctx.spec = spec
        return _call(spec.fwd, spec.attrs, (x, weight, bias), None)

    @staticmethod
    @once_differentiable
    def backward(ctx, gy):
        x, weight = ctx.saved_tensors
        spec = ctx.spec
        gy = _usable_grad(gy, gy)
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = torch.empty_like(x)  # same memory format as the input, as torch's own layers
            # ConvolutionBackwardData is told the input's size (several sizes give one output).
            attrs = spec.attrs + ((("dst_shape", tuple(x.shape)),) if spec.fwd == _CONV else ())
            _call(spec.bwd_data, attrs, (gy, weight), gx)
        if ctx.needs_input_grad[1]:
            gw = torch.empty_like(weight)  # same strides as the parameter (DDP buckets expect it)
            _call(spec.bwd_weights, spec.attrs + (("weights_shape", tuple(weight.shape)),),
                  (x, gy), gw)
        if ctx.needs_input_grad[2]:
            # Summed in float32 and rounded once (torch's own bf16/f16 sum may round twice).
            gb = gy.sum(dim=[0] + list(range(2, gy.dim())), dtype=torch.float32).to(gy.dtype)
        return gx, gw, gb, None


class _Spec:
    """The op kinds and attribute tuples of one layer configuration."""
    __slots__ = ("fwd", "bwd_data", "bwd_weights", "attrs")

    def __init__(self, transposed, stride, pads_begin, pads_end, dilation, groups,
                 output_padding):
        self.fwd, self.bwd_data, self.bwd_weights = (
            (_CT, _CT_BWD_DATA, _CT_BWD_WEIGHTS) if transposed
            else (_CONV, _CONV_BWD_DATA, _CONV_BWD_WEIGHTS))
        self.attrs = (
            ("strides", tuple(stride)), ("pads_begin", tuple(pads_begin)),
            ("pads_end", tuple(pads_end)), ("dilations", tuple(dilation)),
            ("groups", int(groups)), ("data_format", "NCX"),
            ("weights_format", "IOX" if transposed else "OIX"))
        if transposed:
            self.attrs += (("output_padding", tuple(output_padding)),)


class _ConvgradLayer:
    """What the six layers share: checks and the call into convgrad."""
    _cg_dims = 0

    def _cg_check(self, x):
        name = type(self).__name__
        if x.device.type != "cpu":
            raise Error(f"convgrad.torch.{name}: input is on {x.device}; convgrad runs on the CPU")
        if x.dtype not in _SUPPORTED:
            raise Error(f"convgrad.torch.{name}: input dtype {x.dtype} is not supported; "
                        "convgrad computes in float32, bfloat16 and float16")
        if self.weight.dtype != x.dtype:
            raise Error(f"convgrad.torch.{name}: weight dtype {self.weight.dtype} differs from "
                        f"input dtype {x.dtype}")
        if self.weight.device.type != "cpu":
            raise Error(f"convgrad.torch.{name}: weight is on {self.weight.device}; "
                        "convgrad runs on the CPU")
        if x.dim() not in (self._cg_dims + 1, self._cg_dims + 2):
            raise Error(f"convgrad.torch.{name}: expected a {self._cg_dims + 2}-D (batched) or "
                        f"{self._cg_dims + 1}-D (unbatched) input; got {x.dim()}-D with shape "
                        f"{tuple(x.shape)}")

    def _cg_run(self, x, pads_begin, pads_end, output_padding=None):
        self._cg_check(x)
        key = (tuple(self.stride), tuple(pads_begin), tuple(pads_end), tuple(self.dilation),
               self.groups, tuple(output_padding) if output_padding is not None else None)
        spec = self.__dict__.get("_cg_spec")
        if spec is None or spec[0] != key:
            spec = (key, _Spec(self.transposed, self.stride, pads_begin, pads_end, self.dilation,
                               self.groups, output_padding))
            self.__dict__["_cg_spec"] = spec
        unbatched = x.dim() == self._cg_dims + 1
        if unbatched:
            x = x.unsqueeze(0)
        y = _ConvFunction.apply(x, self.weight, self.bias, spec[1])
        return y.squeeze(0) if unbatched else y


def _conv_pads(m):
    """pads_begin, pads_end of a Conv layer (padding may be an int tuple, 'same' or 'valid')."""
    if isinstance(m.padding, str):
        if m.padding == "valid":
            return (0,) * m._cg_dims, (0,) * m._cg_dims
        total = [d * (k - 1) for d, k in zip(m.dilation, m.kernel_size)]  # 'same', as torch
        begin = tuple(t // 2 for t in total)
        return begin, tuple(t - b for t, b in zip(total, begin))
    return tuple(m.padding), tuple(m.padding)


class _ConvNd(_ConvgradLayer):
    def forward(self, input):
        if input.dim() == self._cg_dims + 1:  # unbatched (F.pad's modes need the batch axis)
            return self.forward(input.unsqueeze(0)).squeeze(0)
        if self.padding_mode != "zeros":
            # The padding itself is a torch op (its gradient too), the convolution is convgrad's.
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            zeros = (0,) * self._cg_dims
            return self._cg_run(input, zeros, zeros)
        return self._cg_run(input, *_conv_pads(self))


class _ConvTransposeNd(_ConvgradLayer):
    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise Error(f"convgrad.torch.{type(self).__name__}: only 'zeros' padding mode is "
                        "supported (as in torch)")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, self._cg_dims, self.dilation)
        return self._cg_run(input, self.padding, self.padding, output_padding)


class Conv1d(_ConvNd, nn.Conv1d):
    """torch.nn.Conv1d computed by convgrad."""
    _cg_dims = 1


class Conv2d(_ConvNd, nn.Conv2d):
    """torch.nn.Conv2d computed by convgrad."""
    _cg_dims = 2


class Conv3d(_ConvNd, nn.Conv3d):
    """torch.nn.Conv3d computed by convgrad."""
    _cg_dims = 3


class ConvTranspose1d(_ConvTransposeNd, nn.ConvTranspose1d):
    """torch.nn.ConvTranspose1d computed by convgrad."""
    _cg_dims = 1


class ConvTranspose2d(_ConvTransposeNd, nn.ConvTranspose2d):
    """torch.nn.ConvTranspose2d computed by convgrad."""
    _cg_dims = 2


class ConvTranspose3d(_ConvTransposeNd, nn.ConvTranspose3d):
    """torch.nn.ConvTranspose3d computed by convgrad."""
    _cg_dims = 3


_REPLACEMENTS = {nn.Conv1d: Conv1d, nn.Conv2d: Conv2d, nn.Conv3d: Conv3d,
                 nn.ConvTranspose1d: ConvTranspose1d, nn.ConvTranspose2d: ConvTranspose2d,
                 nn.ConvTranspose3d: ConvTranspose3d}


def convert(model):
    """Makes every torch.nn convolution module of ``model`` (the model itself included) a
    convgrad layer, in place: the modules keep their identity, parameters and buffers, so
    optimizers and hooks that refer to them stay valid. Only the exact torch.nn classes are
    converted (a subclass may override forward). Returns ``model``."""
    for m in model.modules():
        cls = _REPLACEMENTS.get(type(m))
        if cls is not None:
            m.__class__ = cls
    return model
