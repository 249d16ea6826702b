#!/usr/bin/env python3
"""Markdown tables for docs/performance.md from `convgrad bench --json` records.

usage: scripts/perf_tables.py F32_JSON [LOWP_JSON]
"""
import json
import math
import sys
from collections import defaultdict


def ratio(rec, key):
    return None if rec.get(key) is None else rec[key] / rec["ms"]


def fmt(x, spec="{:.2f}"):
    return "n/a" if x is None else spec.format(x)


def geomean(values):
    values = [v for v in values if v is not None]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def per_layer(records):
    by = defaultdict(dict)
    for r in records:
        by[(r["name"], r["op"], r["dt"])][r["threads"]] = r
    threads = sorted({r["threads"] for r in records})
    head = ["layer", "op", "type", "GFLOP"]
    for t in threads:
        head += [f"{t}t ms", f"{t}t GFLOP/s (% peak)", f"{t}t x plain", f"{t}t x blocked"]
    print("| " + " | ".join(head + ["kernel"]) + " |")
    print("|" + "---|" * (len(head) + 1))
    for (name, op, dt), d in by.items():
        first = d[threads[0]]
        row = [name, op, dt, f"{first['gflop']:.3f}"]
        for t in threads:
            r = d[t]
            peak = r.get("peak_gflops")
            pct = f" ({100 * r['gflops'] / peak:.0f}%)" if peak else ""
            row += [f"{r['ms']:.2f}", f"{r['gflops']:.0f}{pct}",
                    fmt(ratio(r, "onednn_plain_ms")), fmt(ratio(r, "onednn_blocked_ms"))]
        print("| " + " | ".join(row + [d[threads[-1]]["kernel"]]) + " |")


def summary(records):
    groups = defaultdict(list)
    for r in records:
        groups[(r["op"], r["dt"], r["threads"])].append(r)
    print("| op | type | threads | geomean x plain | geomean x blocked | layers < 0.8x of oneDNN's best | median % of FMA peak |")
    print("|---|---|---|---|---|---|---|")
    for (op, dt, t), rs in sorted(groups.items()):
        below = sum(1 for r in rs if min(x for x in (ratio(r, "onednn_plain_ms"), ratio(r, "onednn_blocked_ms"), math.inf)
                                         if x is not None) < 0.8)
        peaks = sorted(100 * r["gflops"] / r["peak_gflops"] for r in rs if r.get("peak_gflops"))
        print(f"| {op} | {dt} | {t} | {fmt(geomean(ratio(r, 'onednn_plain_ms') for r in rs))} | "
              f"{fmt(geomean(ratio(r, 'onednn_blocked_ms') for r in rs))} | {below} of {len(rs)} | "
              f"{fmt(peaks[len(peaks) // 2] if peaks else None, '{:.0f}%')} |")


def main():
    files = []
    for path in sys.argv[1:]:
        with open(path) as f:
            files.append((path, json.load(f)))
    print("### Summary\n")
    summary([r for _, rs in files for r in rs])
    for path, rs in files:
        print(f"\n### Every layer ({path})\n")
        per_layer(rs)


if __name__ == "__main__":
    main()
