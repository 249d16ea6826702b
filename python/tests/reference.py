"""float64 references in PyTorch for every op, with pads_begin != pads_end allowed."""
import torch
import torch.nn.functional as F

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_CONV_T = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def _pad_arg(begin, end):
    # F.pad wants (last axis begin, end, previous axis begin, end, ...)
    out = []
    for b, e in zip(reversed(begin), reversed(end)):
        out += [b, e]
    return out


def conv(x, w, b, stride, pads_begin, pads_end, dilation, groups):
    n = x.dim() - 2
    x = F.pad(x, _pad_arg(pads_begin, pads_end))
    return _CONV[n](x, w, b, stride, 0, dilation, groups)


def conv_transpose(x, w, b, stride, pads_begin, pads_end, dilation, groups, output_padding):
    """Y = s(X-1) + Ke - pb - pe + op: the full transposed conv, op zeros appended, cropped."""
    n = x.dim() - 2
    full = _CONV_T[n](x, w, None, stride, 0, 0, groups, dilation)
    full = F.pad(full, _pad_arg([0] * n, list(output_padding)))
    idx = [slice(None), slice(None)]
    for j in range(n):
        size = full.shape[2 + j]
        idx.append(slice(pads_begin[j], size - pads_end[j]))
    y = full[tuple(idx)]
    if b is not None:
        y = y + b.view(1, -1, *([1] * n))
    return y
