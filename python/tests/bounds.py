"""Shared helpers: the error bound convgrad's results are held to against float64.

For an output element r = sum of K products (exact in float64 for inputs that are already
rounded to the tested dtype), convgrad accumulates in float32 in some order and rounds once to
the output type. The worst-case error of a float32 sum of K terms is gamma_K * sum|terms| with
gamma_K = K u / (1 - K u), u = 2^-24; rounding the result to the output type adds u_out |r|
(u_out = 2^-24 f32, 2^-8 bf16, 2^-11 f16) and, for f16, half its smallest subnormal (2^-25).
``sum|terms|`` is the same computation in float64 on the absolute values of the inputs. The
bound is a rigorous one, not a tolerance tuned until green; the reference's own float64 error
(~1e-16 relative) is far below it.
"""

import pytest
import torch


U32 = 2.0 ** -24
UNIT_ROUNDOFF = {torch.float32: U32, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
SUBNORMAL_HALF = {torch.float32: 2.0 ** -150, torch.bfloat16: 2.0 ** -134, torch.float16: 2.0 ** -25}


def gamma(k):
    ku = k * U32
    assert ku < 0.5
    return ku / (1.0 - ku)


def error_bound(ref, abs_ref, terms, dtype):
    """Elementwise bound on |convgrad - ref| for sums of `terms` products rounded to dtype."""
    u = UNIT_ROUNDOFF[dtype]
    return u * ref.abs() + (1.0 + u) * gamma(terms) * abs_ref + SUBNORMAL_HALF[dtype]


def assert_within(got, ref, abs_ref, terms, dtype, what):
    got = got.double()
    assert got.shape == ref.shape, f"{what}: shape {tuple(got.shape)} != {tuple(ref.shape)}"
    bound = error_bound(ref, abs_ref, terms, dtype)
    err = (got - ref).abs()
    bad = err > bound
    if bad.any():
        i = int(bad.flatten().nonzero()[0])
        pytest.fail(f"{what}: {int(bad.sum())} of {err.numel()} elements outside the bound; "
                    f"first at flat index {i}: got {got.flatten()[i].item()!r}, "
                    f"want {ref.flatten()[i].item()!r} +- {bound.flatten()[i].item():.3g}")
    # The bound must be meaningful: far below the values' own size.
    nz = abs_ref > 0
    if nz.any():
        assert float((bound[nz] / abs_ref[nz]).max()) < 0.05, f"{what}: bound too loose to test"
