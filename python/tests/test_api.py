"""The mirrored graph API, JSON, state_dict round trips, convert(), and errors."""
import copy

import numpy as np
import pytest
import torch
import torch.nn as nn

import convgrad
import convgrad.torch as cgt


def test_graph_compile_execute_and_json_round_trip():
    o = convgrad.op(1, convgrad.op_kind.ConvTransposeBackwardWeights, "ctw")
    o.set_attr("strides", [2, 2]).set_attr("pads_begin", [1, 1]).set_attr("pads_end", [1, 1])
    o.set_attr("dilations", [1, 1]).set_attr("data_format", "NCX")
    o.set_attr("weights_format", "IOX").set_attr("weights_shape", [4, 3, 4, 4])
    o.add_input(convgrad.logical_tensor(0, convgrad.data_type.f32, [2, 4, 5, 5]))
    o.add_input(convgrad.logical_tensor(1, convgrad.data_type.f32, [2, 3, 10, 10]))
    o.add_output(convgrad.logical_tensor.unknown(2, convgrad.data_type.f32))
    g = convgrad.graph()
    g.add_op(o)
    g.finalize()
    part = g.get_partitions()[0]
    cp = part.compile(part.input_ports, part.output_ports)
    out_lt = cp.outputs[0]
    assert out_lt.shape == [4, 3, 4, 4] and cp.kernel_name
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 5)).astype(np.float32)
    gy = np.random.default_rng(1).standard_normal((2, 3, 10, 10)).astype(np.float32)
    gw = np.zeros((4, 3, 4, 4), np.float32)
    cp.execute([convgrad.tensor(part.input_ports[0], x), convgrad.tensor(part.input_ports[1], gy)],
               [convgrad.tensor(out_lt, gw)])
    xt = torch.from_numpy(x).double().requires_grad_()
    wt = torch.zeros(4, 3, 4, 4, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.conv_transpose2d(xt, wt, stride=2, padding=1)
    (ref,) = torch.autograd.grad(y, wt, torch.from_numpy(gy).double())
    np.testing.assert_allclose(gw, ref.numpy(), rtol=1e-4, atol=1e-4)

    text = convgrad.json.write(convgrad.json.from_graph(g))
    doc = convgrad.json.parse(text, "roundtrip")
    assert convgrad.json.write(doc) == text
    assert doc.ops[0].kind == convgrad.op_kind.ConvTransposeBackwardWeights
    assert doc.ops[0].attrs["weights_shape"] == [4, 3, 4, 4]
    assert doc.graph_inputs() == [0, 1] and doc.graph_outputs() == [2]
    assert len(doc.to_graph().get_partitions()) == 1


def test_graph_tensor_mismatch_is_an_error():
    o = convgrad.op(0, "Convolution")
    for k, v in [("strides", [1]), ("pads_begin", [0]), ("pads_end", [0]), ("dilations", [1]),
                 ("data_format", "NCX"), ("weights_format", "OIX")]:
        o.set_attr(k, v)
    o.add_input(convgrad.logical_tensor(0, convgrad.data_type.f32, [1, 2, 5]))
    o.add_input(convgrad.logical_tensor(1, convgrad.data_type.f32, [3, 2, 2]))
    o.add_output(convgrad.logical_tensor.unknown(2, convgrad.data_type.f32))
    cp = convgrad.compile_op(o)
    bad = np.zeros((1, 2, 6), np.float32)
    with pytest.raises(convgrad.Error, match="shape differs from the compiled one"):
        cp.execute([convgrad.tensor(cp.inputs[0], bad),
                    convgrad.tensor(cp.inputs[1], np.zeros((3, 2, 2), np.float32))],
                   [convgrad.tensor(cp.outputs[0], np.zeros((1, 3, 4), np.float32))])


LAYERS = [(cgt.Conv1d, nn.Conv1d, (4, 6, 3), dict(stride=2, padding=1, groups=2)),
          (cgt.Conv2d, nn.Conv2d, (4, 6, 3), dict(dilation=2, bias=False)),
          (cgt.Conv3d, nn.Conv3d, (2, 4, 2), dict(padding="same")),
          (cgt.ConvTranspose1d, nn.ConvTranspose1d, (4, 6, 3), dict(stride=2, output_padding=1)),
          (cgt.ConvTranspose2d, nn.ConvTranspose2d, (4, 6, 4), dict(stride=2, padding=1, groups=2)),
          (cgt.ConvTranspose3d, nn.ConvTranspose3d, (2, 3, 2), dict(stride=2))]


@pytest.mark.parametrize("cg_cls,torch_cls,args,kw", LAYERS, ids=[c[0].__name__ for c in LAYERS])
def test_state_dict_round_trips(cg_cls, torch_cls, args, kw):
    torch.manual_seed(0)
    a, b = cg_cls(*args, **kw), torch_cls(*args, **kw)
    sd = a.state_dict()
    assert {k: v.shape for k, v in sd.items()} == {k: v.shape for k, v in b.state_dict().items()}
    b.load_state_dict(sd)
    c = cg_cls(*args, **kw)
    c.load_state_dict(b.state_dict())
    for k, v in c.state_dict().items():
        assert torch.equal(v, sd[k]), k


def test_convert_in_place_keeps_weights_and_matches_torch():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                          nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.Flatten(),
                          nn.Linear(4 * 16 * 16, 2))
    ref = copy.deepcopy(model)
    conv, params = model[0], list(model.parameters())
    assert cgt.convert(model) is model
    assert type(model[0]) is cgt.Conv2d and type(model[2]) is cgt.ConvTranspose2d
    assert model[0] is conv and all(p is q for p, q in zip(model.parameters(), params))
    x = torch.randn(2, 3, 8, 8)
    torch.testing.assert_close(model(x), ref(x), rtol=1e-4, atol=1e-5)
    single = nn.Conv1d(2, 2, 1)
    assert type(cgt.convert(single)) is cgt.Conv1d


def test_errors_are_value_errors_naming_op_tensor_and_rule():
    assert issubclass(convgrad.Error, ValueError)
    with pytest.raises(convgrad.Error, match=r"Convolution.*'src'.*channels") as e:
        convgrad.convolution(torch.zeros(1, 5, 4), torch.zeros(2, 2, 1), data_format="NCX",
                             weights_format="OIX")
    assert e.value.status == "invalid_shape"
    with pytest.raises(convgrad.Error, match="float32, bfloat16 or float16"):
        convgrad.convolution(np.zeros((1, 2, 4)), np.zeros((2, 2, 1)), data_format="NCX",
                             weights_format="OIX")
    with pytest.raises(convgrad.Error, match="expected an array"):
        convgrad.convolution([[[1.0]]], np.zeros((1, 1, 1), np.float32))
    with pytest.raises(convgrad.Error, match="weights_shape"):
        convgrad.convolution_backward_weights(np.zeros((1, 2, 4), np.float32),
                                              np.zeros((1, 2, 4), np.float32), data_format="NCX")
    with pytest.raises(convgrad.Error, match="set_num_threads"):
        convgrad.set_num_threads(-2)
    with pytest.raises(convgrad.Error, match="NumPy has no bfloat16|data type"):
        out = np.zeros((1, 1, 4), np.float16)
        convgrad.convolution(np.zeros((1, 1, 4), np.float32), np.zeros((1, 1, 1), np.float32),
                             data_format="NCX", weights_format="OIX", out=out)
    with pytest.raises(convgrad.Error, match="groups"):
        convgrad.convolution(np.zeros((1, 2, 4), np.float32), np.zeros((2, 2, 1), np.float32),
                             data_format="NCX", weights_format="OIX", groups=0)


def test_layer_errors_never_fall_back():
    layer = cgt.Conv2d(2, 2, 3)
    with pytest.raises(convgrad.Error, match="float64 is not supported"):
        layer.double()(torch.zeros(1, 2, 5, 5, dtype=torch.float64))
    with pytest.raises(convgrad.Error, match="weight dtype"):
        cgt.Conv2d(2, 2, 3)(torch.zeros(1, 2, 5, 5, dtype=torch.bfloat16))
    with pytest.raises(convgrad.Error, match="4-D"):
        cgt.Conv2d(2, 2, 3)(torch.zeros(5, 5))
    with pytest.raises(convgrad.Error, match="output_padding"):  # torch allows < dilation
        cgt.ConvTranspose1d(1, 1, 2, stride=1, dilation=2, output_padding=1)(torch.zeros(1, 1, 4))
    with pytest.raises(convgrad.Error, match="zeros"):
        cgt.ConvTranspose1d(1, 1, 2, padding_mode="zeros")._cg_check  # construct is fine
        m = cgt.ConvTranspose1d(1, 1, 2)
        m.padding_mode = "reflect"
        m(torch.zeros(1, 1, 4))
    # Second derivatives are not implemented: an error, not a silently wrong result.
    x = torch.randn(1, 2, 5, 5, requires_grad=True)
    y = cgt.Conv2d(2, 2, 3)(x)
    (g,) = torch.autograd.grad(y.square().sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|not differentiable|double"):
        g.sum().backward()


def test_expanded_gradient_from_sum_and_negative_strides():
    # y.sum().backward() hands the layer a gradient with stride 0 everywhere.
    torch.manual_seed(3)
    a, b = cgt.Conv2d(3, 4, 3), nn.Conv2d(3, 4, 3)
    b.load_state_dict(a.state_dict())
    xa, xb = torch.randn(2, 3, 6, 6, requires_grad=True), None
    xb = xa.detach().clone().requires_grad_()
    a(xa).sum().backward()
    b(xb).sum().backward()
    torch.testing.assert_close(xa.grad, xb.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(a.weight.grad, b.weight.grad, rtol=1e-4, atol=1e-4)
    # NumPy views with negative strides: refused with the library's rule, never read wrongly.
    x = np.zeros((1, 2, 6), np.float32)[:, :, ::-1]
    with pytest.raises(convgrad.Error, match="strides must be positive"):
        convgrad.convolution(x, np.zeros((1, 2, 1), np.float32), data_format="NCX",
                             weights_format="OIX")


def test_calls_from_several_python_threads_agree():
    import threading
    x, w = torch.randn(4, 8, 16, 16), torch.randn(8, 8, 3, 3)
    want = convgrad.convolution(x, w, data_format="NCX", weights_format="OIX")
    results, errors = [None] * 4, []

    def work(i):
        try:
            for _ in range(10):
                results[i] = convgrad.convolution(x, w, data_format="NCX", weights_format="OIX")
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for r in results:
        assert torch.equal(r, want)


def test_fpmath_mode_bf16_rounds_the_inputs_once():
    """graph(fpmath_mode.bf16): an f32 op multiplies its inputs rounded to bf16, sums in f32."""
    def conv(mode):
        o = convgrad.op(0, convgrad.op_kind.Convolution, "c")
        o.set_attr("strides", [1]).set_attr("pads_begin", [0]).set_attr("pads_end", [0])
        o.set_attr("dilations", [1]).set_attr("data_format", "NCX").set_attr("weights_format", "OIX")
        o.add_input(convgrad.logical_tensor(0, convgrad.data_type.f32, [1, 8, 5]))
        o.add_input(convgrad.logical_tensor(1, convgrad.data_type.f32, [2, 8, 3]))
        o.add_output(convgrad.logical_tensor.unknown(2, convgrad.data_type.f32))
        g = convgrad.graph(mode)
        g.add_op(o)
        g.finalize()
        part = g.get_partitions()[0]
        assert part.fpmath_mode == mode
        return part, part.compile(part.input_ports, part.output_ports)

    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (1, 8, 5)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 8, 3)).astype(np.float32)
    results = {}
    for mode in (convgrad.fpmath_mode.strict, convgrad.fpmath_mode.bf16):
        part, cp = conv(mode)
        y = np.zeros((1, 2, 3), np.float32)
        cp.execute([convgrad.tensor(part.input_ports[0], x), convgrad.tensor(part.input_ports[1], w)],
                   [convgrad.tensor(cp.outputs[0], y)])
        results[mode] = y
    bf = lambda a: torch.from_numpy(a).to(torch.bfloat16).double()
    want = torch.nn.functional.conv1d(bf(x), bf(w)).numpy()
    np.testing.assert_allclose(results[convgrad.fpmath_mode.bf16], want, rtol=1e-5, atol=1e-5)
    assert np.abs(results[convgrad.fpmath_mode.strict] - want).max() > 1e-4
