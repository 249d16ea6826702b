"""python3 -m convgrad.bench: convgrad layers against PyTorch's own, forward + backward, layer by
layer and for whole training steps, of a DCGAN generator and discriminator, a U-Net decoder and
a ResNet-50 bottleneck, in both memory formats, measured interleaved in one run (PyTorch, then
convgrad, repeated; medians). Prints a table with ratios; --plot=FILE.png draws the comparison.
--from-json=FILE plots the records of `convgrad bench --json` (convgrad against oneDNN) instead.
"""
import argparse
import copy
import json
import math
import statistics
import time

import torch
import torch.nn as nn

import convgrad
import convgrad.torch as cgt
from convgrad import models

CONV_TYPES = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
              nn.ConvTranspose3d)


def workloads(quick):
    """(name, model, inputs) with DCGAN at batch 16 64x64, U-Net decoder to 128x128 at batch 4,
    the small Conv2d(8, 8, 5) of issue 10 at batch 32 32x32, and two ResNet-50 bottlenecks
    (conv2_x 56x56 and conv4_x 14x14) at batch 8."""
    mb = 4 if quick else 16
    torch.manual_seed(0)
    unet = models.UNetDecoder()
    skips = [torch.randn(4 if not quick else 1, c, s, s) for c, s in [(128, 32), (64, 64), (32, 128)]]
    return [
        ("dcgan_G", models.dcgan_generator(), (torch.randn(mb, 100, 1, 1),)),
        ("dcgan_D", models.dcgan_discriminator(), (torch.randn(mb, 3, 64, 64),)),
        ("unet_dec", unet, (torch.randn(4 if not quick else 1, 256, 16, 16), skips)),
        # The small layer of issue 10: Conv2d(8, 8, 5, padding=2), batch 32, 32x32.
        ("small", nn.Sequential(nn.Conv2d(8, 8, 5, padding=2)), (torch.randn(32, 8, 32, 32),)),
        ("resnet_b2", models.Bottleneck(64, 64), (torch.randn(mb // 2, 64, 56, 56),)),
        ("resnet_b4", models.Bottleneck(1024, 256), (torch.randn(mb // 2, 1024, 14, 14),)),
    ]


def conv_layers(name, model, inputs):
    """Every convolution of the model with the shape of its input (a forward pass records it)."""
    found, hooks = [], []
    for mname, m in model.named_modules():
        if isinstance(m, CONV_TYPES):
            hooks.append(m.register_forward_hook(
                lambda mod, inp, out, mname=mname: found.append((f"{name}.{mname}", mod, inp[0].shape))))
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    return found


def describe(m, shape):
    kind = "ConvT" if m.transposed else "Conv"
    k = "x".join(map(str, m.kernel_size))
    s = m.stride[0]
    extra = f" g{m.groups}" if m.groups > 1 else ""
    return f"{kind} {m.in_channels}->{m.out_channels} k{k} s{s}{extra} in {'x'.join(map(str, shape))}"


def to_format(t, channels_last):
    return t.contiguous(memory_format=torch.channels_last if channels_last else torch.contiguous_format)


def timed(fn, min_time, min_reps):
    """Median of repetitions of fn (after one warm-up)."""
    t0 = time.perf_counter()
    fn()
    if time.perf_counter() - t0 > 1.0:
        min_reps = 1  # a slow case: one timed run per round keeps the benchmark bounded
    times, start = [], time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def interleaved(fns, rounds, min_time, min_reps):
    """Times each function in turn, `rounds` times; the median of each function's rounds."""
    results = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            results[i].append(timed(fn, min_time, min_reps))
    return [statistics.median(r) for r in results]


def layer_step(layer, x, gy):
    def run():
        x.grad = None
        layer.zero_grad(set_to_none=True)
        layer(x).backward(gy)
    return run


def bench_layers(args):
    rows = []
    for name, model, inputs in workloads(args.quick):
        for lname, mod, shape in conv_layers(name, model, inputs):
            for cl in args.formats:
                torch_layer = copy.deepcopy(mod)
                cg_layer = cgt.convert(copy.deepcopy(mod))
                if cl:
                    torch_layer.to(memory_format=torch.channels_last)
                    cg_layer.to(memory_format=torch.channels_last)
                x = to_format(torch.randn(shape), cl).requires_grad_()
                with torch.no_grad():
                    gy = to_format(torch.randn(torch_layer(x).shape), cl)
                t_torch, t_cg = interleaved([layer_step(torch_layer, x, gy), layer_step(cg_layer, x, gy)],
                                            args.rounds, args.min_time, 3)
                rows.append(dict(model=name, layer=lname, desc=describe(mod, shape),
                                 format="channels_last" if cl else "contiguous",
                                 torch_ms=t_torch * 1e3, convgrad_ms=t_cg * 1e3,
                                 speedup=t_torch / t_cg))
                print(f"  {lname:28s} {rows[-1]['format']:13s} torch {t_torch*1e3:9.3f} ms  "
                      f"convgrad {t_cg*1e3:9.3f} ms  x{t_torch/t_cg:6.2f}", flush=True)
    return rows


def training_step(parts, inputs):
    """A forward + backward + SGD step of the model(s); DCGAN: discriminator and generator."""
    if len(parts) == 2:  # (G, D)
        gen, disc = parts
        opt = torch.optim.SGD(list(gen.parameters()) + list(disc.parameters()), lr=1e-4)
        bce = nn.BCEWithLogitsLoss()
        z, real = inputs

        def run():
            opt.zero_grad(set_to_none=True)
            fake = gen(z)
            ones = torch.ones(real.shape[0], 1)
            loss_d = bce(disc(real), ones) + bce(disc(fake.detach()), torch.zeros_like(ones))
            loss_g = bce(disc(fake), ones)
            (loss_d + loss_g).backward()
            opt.step()
        return run
    (model,) = parts
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)

    def run():
        opt.zero_grad(set_to_none=True)
        model(*inputs).square().mean().backward()
        opt.step()
    return run


def bench_steps(args):
    rows = []
    w = {name: (model, inputs) for name, model, inputs in workloads(args.quick)}
    cases = [("dcgan G+D", (w["dcgan_G"][0], w["dcgan_D"][0]),
              (w["dcgan_G"][1][0], w["dcgan_D"][1][0])),
             ("unet_dec", (w["unet_dec"][0],), w["unet_dec"][1]),
             ("resnet_b2", (w["resnet_b2"][0],), w["resnet_b2"][1]),
             ("resnet_b4", (w["resnet_b4"][0],), w["resnet_b4"][1])]
    for name, parts, inputs in cases:
        for cl in args.formats:
            fmt = torch.channels_last if cl else torch.contiguous_format

            def prep(p, convert):
                p = copy.deepcopy(p).to(memory_format=fmt)
                return cgt.convert(p) if convert else p
            ins = tuple([to_format(t, cl) for t in i] if isinstance(i, list) else to_format(i, cl)
                        for i in inputs)
            t_torch, t_cg = interleaved(
                [training_step([prep(p, False) for p in parts], ins),
                 training_step([prep(p, True) for p in parts], ins)],
                args.rounds, args.min_time, 3)
            rows.append(dict(model=name, layer="training step", desc="whole training step",
                             format="channels_last" if cl else "contiguous",
                             torch_ms=t_torch * 1e3, convgrad_ms=t_cg * 1e3, speedup=t_torch / t_cg))
            print(f"  step {name:23s} {rows[-1]['format']:13s} torch {t_torch*1e3:9.3f} ms  "
                  f"convgrad {t_cg*1e3:9.3f} ms  x{t_torch/t_cg:6.2f}", flush=True)
    return rows


def call_overhead():
    """Python call overhead per op on a cached tiny layer: convgrad.convolution(..., out=) from
    Python against the same compiled partition executed in a C++ loop; and per layer step."""
    x, w = torch.randn(1, 4, 4, 4), torch.randn(4, 4, 3, 3)
    kw = dict(data_format="NCX", weights_format="OIX", pads_begin=(1, 1), pads_end=(1, 1))
    out = convgrad.convolution(x, w, **kw)
    reps = 20000
    convgrad.convolution(x, w, out=out, **kw)
    t0 = time.perf_counter()
    for _ in range(reps):
        convgrad.convolution(x, w, out=out, **kw)
    t_py = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    for _ in range(reps):
        convgrad.convolution(x, w, **kw)
    t_alloc = (time.perf_counter() - t0) / reps
    o = convgrad.op(0, convgrad.op_kind.Convolution)
    for k, v in [("strides", [1, 1]), ("pads_begin", [1, 1]), ("pads_end", [1, 1]),
                 ("dilations", [1, 1]), ("data_format", "NCX"), ("weights_format", "OIX")]:
        o.set_attr(k, v)
    o.add_input(convgrad.logical_tensor(0, convgrad.data_type.f32, list(x.shape)))
    o.add_input(convgrad.logical_tensor(1, convgrad.data_type.f32, list(w.shape)))
    o.add_output(convgrad.logical_tensor.unknown(2, convgrad.data_type.f32))
    cp = convgrad.compile_op(o)
    t_cpp = convgrad._convgrad._time_execute(
        cp, [convgrad.tensor(cp.inputs[0], x), convgrad.tensor(cp.inputs[1], w)],
        [convgrad.tensor(cp.outputs[0], out)], reps)
    return dict(python_us=t_py * 1e6, python_alloc_us=t_alloc * 1e6, cpp_us=t_cpp * 1e6,
                overhead_us=(t_py - t_cpp) * 1e6, overhead_alloc_us=(t_alloc - t_cpp) * 1e6)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def print_table(rows, overhead, threads):
    print(f"\nconvgrad {convgrad.__version__} vs PyTorch {torch.__version__}, f32, "
          f"{threads} threads, forward + backward, median ms (speedup = torch / convgrad)\n")
    print("| layer | format | torch ms | convgrad ms | speedup |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {label(r)} | {r['format']} | {r['torch_ms']:.2f} | "
              f"{r['convgrad_ms']:.2f} | {r['speedup']:.2f}x |")
    print()
    for fmt in dict.fromkeys(r["format"] for r in rows):
        sel = [r["speedup"] for r in rows if r["format"] == fmt and r["layer"] != "training step"]
        slow = [r for r in rows if r["format"] == fmt and r["layer"] != "training step"
                and r["speedup"] < 1]
        print(f"layers, {fmt}: geometric mean speedup {geomean(sel):.2f}x, "
              f"{len(slow)} of {len(sel)} slower than torch")
    if overhead:
        print(f"\nPython call overhead, cached tiny Convolution 1x4x4x4 * 4x4x3x3: "
              f"{overhead['python_us']:.1f} us per call with out= and "
              f"{overhead['python_alloc_us']:.1f} us allocating, against {overhead['cpp_us']:.1f} us "
              f"for the same execute looped in C++: overhead {overhead['overhead_us']:.1f} us "
              f"({overhead['overhead_alloc_us']:.1f} us allocating)")


def label(r):
    """A row's name on the chart: the layer's path in its model (unique) and what it is."""
    if r["layer"] == "training step":
        return f"{r['model']}: whole training step"
    if r["layer"].startswith(r["model"]):
        return f"{r['layer']}: {r['desc']}"
    return f"{r['model']}: {r['desc']}"


def plot_rows(rows, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = list(dict.fromkeys(label(r) for r in rows))  # in row order, once each
    formats = sorted({r["format"] for r in rows})
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(labels) * max(1, len(formats) * 0.6) + 1.5))
    height = 0.8 / len(formats)
    colors = ["#4C72B0", "#DD8452", "#55A868", "#C44E52"]
    for fi, fmt in enumerate(formats):
        ys, xs = [], []
        for li, key in enumerate(labels):
            for r in rows:
                if label(r) == key and r["format"] == fmt:
                    ys.append(li + fi * height - 0.4 + height / 2)
                    xs.append(r["speedup"])
        # Bars grow from 1 (parity): right when convgrad is faster, left when slower.
        ax.barh(ys, [x - 1 for x in xs], left=1, height=height, color=colors[fi % 4], label=fmt)
        for y, x in zip(ys, xs):
            ax.text(x * (1.03 if x >= 1 else 0.97), y, f"{x:.2f}", va="center",
                    ha="left" if x >= 1 else "right", fontsize=6)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    lo = min(r["speedup"] for r in rows)
    hi = max(r["speedup"] for r in rows)
    ax.set_xlim(min(lo, 1) / 1.6, max(hi, 1) * 1.6)
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlabel("speedup (baseline time / convgrad time), log scale; > 1 = convgrad faster")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart: {path}")


def rows_from_cli_json(path):
    """`convgrad bench --json` records: convgrad against oneDNN (plain layouts) per op."""
    records = json.load(open(path))
    if isinstance(records, dict) and "rows" in records:  # this benchmark's own --json
        return [dict(r, threads=records.get("threads")) for r in records["rows"]]
    rows = []
    for r in records:
        if not r.get("onednn_plain_ms") or not r.get("ms") or r["onednn_plain_ms"] != r["onednn_plain_ms"]:
            continue
        rows.append(dict(model=r["name"], desc=f"{r['op']} {r['dt']}",
                         format=f"{r['threads']} threads", torch_ms=r["onednn_plain_ms"],
                         convgrad_ms=r["ms"], speedup=r["onednn_plain_ms"] / r["ms"],
                         layer=r["op"], baseline="onednn"))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m convgrad.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--format", choices=["both", "contiguous", "channels_last"], default="both")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per comparison")
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per timing (>= 3 reps)")
    ap.add_argument("--no-steps", action="store_true", help="skip the whole training steps")
    ap.add_argument("--quick", action="store_true", help="small batches (a smoke run)")
    ap.add_argument("--plot", metavar="FILE.png")
    ap.add_argument("--json", metavar="FILE", help="write the rows as JSON")
    ap.add_argument("--from-json", metavar="FILE",
                    help="plot `convgrad bench --json` records (convgrad vs oneDNN) and exit")
    args = ap.parse_args(argv)
    if args.from_json:
        rows = rows_from_cli_json(args.from_json)
        if rows and rows[0].get("baseline") != "onednn":  # this benchmark's own records
            records = json.load(open(args.from_json))
            print_table(rows, records.get("overhead"), records.get("threads"))
        for r in rows if rows and rows[0].get("baseline") == "onednn" else []:
            print(f"{r['model']:32s} {r['desc']:36s} {r['format']:10s} x{r['speedup']:.2f}")
        if args.plot:
            title = ("convgrad vs oneDNN 2.6.3 (plain layouts), from convgrad bench --json"
                     if rows and rows[0].get("baseline") == "onednn" else
                     f"convgrad layers vs PyTorch {torch.__version__}, f32, "
                     f"{rows[0].get('threads')} threads, forward + backward (median of interleaved runs)")
            plot_rows(rows, args.plot, title)
        return
    torch.set_num_threads(args.threads)
    convgrad.set_num_threads(args.threads)
    args.formats = {"both": [False, True], "contiguous": [False], "channels_last": [True]}[args.format]
    args.format_names = ["channels_last" if f else "contiguous" for f in args.formats]
    print(f"layers (forward + backward), {args.threads} threads:", flush=True)
    rows = bench_layers(args)
    if not args.no_steps:
        print("whole training steps:", flush=True)
        rows += bench_steps(args)
    overhead = call_overhead()
    print_table(rows, overhead, args.threads)
    if args.json:
        json.dump(dict(rows=rows, overhead=overhead, threads=args.threads,
                       torch=torch.__version__, convgrad=convgrad.__version__),
                  open(args.json, "w"), indent=1)
    if args.plot:
        plot_rows(rows, args.plot, f"convgrad layers vs PyTorch {torch.__version__}, f32, "
                  f"{args.threads} threads, forward + backward (median of interleaved runs)")


if __name__ == "__main__":
    main()
