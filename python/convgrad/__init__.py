"""convgrad: the convolution ops of the oneDNN Graph API and their gradients, on x86 CPUs.

- The graph API mirrored: ``logical_tensor``, ``op``, ``graph``, ``partition``,
  ``compiled_partition``, ``tensor``, and ``convgrad.json`` (oneDNN Graph JSON).
- One function per op (``convolution``, ``convolution_backward_data``, ...), with the oneDNN
  Graph attribute names as keyword arguments, on any array with ``__dlpack__`` (torch tensors,
  NumPy arrays) or the buffer protocol, with any strides, without copying.
- ``convgrad.torch``: ``torch.nn`` convolution layers computed by convgrad (imported on demand).

Errors are ``convgrad.Error`` (a ``ValueError``) with the library's message.
"""
from ._convgrad import (  # noqa: F401
    Error,
    __version__,
    compile_op,
    compiled_partition,
    data_type,
    get_num_threads,
    graph,
    fpmath_mode,
    impl_choice,
    json,
    layout_type,
    logical_tensor,
    op,
    op_kind,
    partition,
    property_type,
    set_num_threads,
    tensor,
)
from ._ops import (  # noqa: F401
    clear_cache,
    conv_transpose,
    conv_transpose_backward_data,
    conv_transpose_backward_weights,
    convolution,
    convolution_backward_data,
    convolution_backward_weights,
)
