"""One function per op, with oneDNN Graph's attribute names and defaults as keyword arguments.

Every function takes arrays (torch tensors of any float type including bfloat16, NumPy arrays,
anything with ``__dlpack__`` or the buffer protocol), with any strides, and never copies them.
``out=`` receives the result, else it is allocated: a torch tensor for torch inputs, a NumPy
array otherwise; data outputs follow the memory order of the first input (channels-last in,
channels-last out), weight gradients are dense.

Attribute defaults follow oneDNN Graph: ``data_format="NXC"`` (channels last in the shape:
pass ``"NCX"`` for PyTorch's ``N, C, H, W`` shapes), ``weights_format="XIO"`` for the
Convolution family and ``"XOI"`` for the ConvTranspose family (PyTorch's weights are ``"OIX"``
and ``"IOX"``). ``strides`` and ``dilations`` default to 1, pads to 0.

Compiled partitions are cached by (op, attributes, input types, shapes and strides, output
strides, thread count): a repeated call does not compile again.
"""
from ._convgrad import _call, _clear_cache

_CONV, _CONV_BWD_DATA, _CONV_BWD_WEIGHTS, _CT, _CT_BWD_DATA, _CT_BWD_WEIGHTS = range(6)


def clear_cache():
    """Drops the cached compiled partitions; returns how many there were."""
    return _clear_cache()


def _spatial_attrs(x, strides, pads_begin, pads_end, dilations, groups, data_format,
                   weights_format, auto_pad):
    n = len(getattr(x, "shape", ())) - 2  # (a non-array is reported by the library)
    if n < 1:
        n = 1  # let the library report the rank error with its own message
    return (
        ("strides", tuple(strides) if strides is not None else (1,) * n),
        ("pads_begin", tuple(pads_begin) if pads_begin is not None else (0,) * n),
        ("pads_end", tuple(pads_end) if pads_end is not None else (0,) * n),
        ("dilations", tuple(dilations) if dilations is not None else (1,) * n),
        ("groups", groups),
        ("data_format", data_format),
        ("weights_format", weights_format),
        ("auto_pad", auto_pad),
    )


def convolution(src, weights, bias=None, *, strides=None, pads_begin=None, pads_end=None,
                dilations=None, groups=1, data_format="NXC", weights_format="XIO",
                auto_pad="None", out=None):
    """Convolution: dst = src * weights (+ bias)."""
    a = _spatial_attrs(src, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    return _call(_CONV, a, (src, weights, bias), out)


def convolution_backward_data(diff_dst, weights, *, dst_shape=None, strides=None,
                              pads_begin=None, pads_end=None, dilations=None, groups=1,
                              data_format="NXC", weights_format="XIO", auto_pad="None",
                              output_padding=None, out=None):
    """ConvolutionBackwardData: diff_src from diff_dst and weights. ``dst_shape`` is the
    diff_src shape (oneDNN's name); without it (or ``out``) it is inferred with
    ``output_padding``."""
    a = _spatial_attrs(diff_dst, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    if dst_shape is not None:
        a += (("dst_shape", tuple(dst_shape)),)
    if output_padding is not None:
        a += (("output_padding", tuple(output_padding)),)
    return _call(_CONV_BWD_DATA, a, (diff_dst, weights), out)


def convolution_backward_weights(src, diff_dst, *, weights_shape=None, strides=None,
                                 pads_begin=None, pads_end=None, dilations=None, groups=1,
                                 data_format="NXC", weights_format="XIO", auto_pad="None",
                                 out=None):
    """ConvolutionBackwardWeights: diff_weights (shape ``weights_shape`` in ``weights_format``
    order, or that of ``out``) from src and diff_dst."""
    a = _spatial_attrs(src, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    if weights_shape is not None:
        a += (("weights_shape", tuple(weights_shape)),)
    return _call(_CONV_BWD_WEIGHTS, a, (src, diff_dst), out)


def conv_transpose(src, weights, bias=None, *, strides=None, pads_begin=None, pads_end=None,
                   dilations=None, groups=1, data_format="NXC", weights_format="XOI",
                   auto_pad="None", output_padding=None, out=None):
    """ConvTranspose: dst = src *^T weights (+ bias)."""
    a = _spatial_attrs(src, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    if output_padding is not None:
        a += (("output_padding", tuple(output_padding)),)
    return _call(_CT, a, (src, weights, bias), out)


def conv_transpose_backward_data(diff_dst, weights, *, strides=None, pads_begin=None,
                                 pads_end=None, dilations=None, groups=1, data_format="NXC",
                                 weights_format="XOI", auto_pad="None", output_padding=None,
                                 out=None):
    """ConvTransposeBackwardData: diff_src from diff_dst and weights."""
    a = _spatial_attrs(diff_dst, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    if output_padding is not None:
        a += (("output_padding", tuple(output_padding)),)
    return _call(_CT_BWD_DATA, a, (diff_dst, weights), out)


def conv_transpose_backward_weights(src, diff_dst, *, weights_shape=None, strides=None,
                                    pads_begin=None, pads_end=None, dilations=None, groups=1,
                                    data_format="NXC", weights_format="XOI", auto_pad="None",
                                    output_padding=None, out=None):
    """ConvTransposeBackwardWeights: diff_weights from src (the ConvTranspose's input) and
    diff_dst."""
    a = _spatial_attrs(src, strides, pads_begin, pads_end, dilations, groups, data_format,
                       weights_format, auto_pad)
    if weights_shape is not None:
        a += (("weights_shape", tuple(weights_shape)),)
    if output_padding is not None:
        a += (("output_padding", tuple(output_padding)),)
    return _call(_CT_BWD_WEIGHTS, a, (src, diff_dst), out)
