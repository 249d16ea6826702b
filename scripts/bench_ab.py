#!/usr/bin/env python3
"""A/B timing of two convgrad builds on the same problems, alternated.

    scripts/bench_ab.py [--rounds=N] OLD NEW [convgrad bench options and descriptors...]

OLD and NEW are two `convgrad` executables (say, a copy of build/tools/convgrad from before a
change, and the build after it). Each round runs `OLD bench --stat=min --no-onednn OPTIONS`, then
NEW's, so that a slow stretch of a shared host falls on both alike; the table gives, per problem,
op, type and thread count, each build's fastest time over all rounds and the speedup OLD / NEW
(> 1: NEW is faster), then the geometric mean of the speedups. Timings on such hosts vary by
15-30% from run to run: differences within that are noise unless they hold over the rounds.

Exits 1 when a run fails (a failed check included) or the two builds did not time the same
problems, 2 on bad arguments. Only the Python standard library is used.
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def usage(msg):
    sys.stderr.write("bench_ab.py: %s\nusage: scripts/bench_ab.py [--rounds=N] OLD NEW "
                     "[convgrad bench options and descriptors...]\n" % msg)
    sys.exit(2)


def parse_args(argv):
    rounds = 4
    args = list(argv)
    if args and args[0].startswith("--rounds"):
        opt = args.pop(0)
        value = opt.split("=", 1)[1] if "=" in opt else (args.pop(0) if args else "")
        try:
            rounds = int(value)
        except ValueError:
            usage("--rounds: expected a positive integer, got '%s'" % value)
        if rounds < 1:
            usage("--rounds: expected a positive integer, got %d" % rounds)
    if len(args) < 2:
        usage("expected two convgrad executables, OLD and NEW")
    old, new, rest = args[0], args[1], args[2:]
    for name, path in (("OLD", old), ("NEW", new)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            usage("%s: '%s' is not an executable file" % (name, path))
    for opt in rest:
        if opt.split("=", 1)[0] in ("--stat", "--json", "--no-onednn", "--require-onednn"):
            usage("%s: set by this script (--stat=min --no-onednn, and its own --json)" % opt)
    return rounds, old, new, rest


def run_once(exe, rest, json_path):
    cmd = [exe, "bench", "--stat=min", "--no-onednn", "--json=" + json_path] + rest
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout)
        sys.stderr.write("bench_ab.py: '%s' exited with status %d\n" % (" ".join(cmd), proc.returncode))
        sys.exit(1)
    with open(json_path) as f:
        records = json.load(f)
    times = {}
    for r in records:
        if r.get("check") != "pass":
            sys.stderr.write("bench_ab.py: %s: check %s (%s)\n" % (exe, r.get("check"), r.get("check_detail")))
            sys.exit(1)
        times[(r["name"], r["op"], r["dt"], r["threads"])] = r["ms"]
    return times


def main(argv):
    rounds, old, new, rest = parse_args(argv)
    best = {"old": {}, "new": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for which, exe in (("old", old), ("new", new)):
                times = run_once(exe, rest, os.path.join(tmp, "%s%d.json" % (which, r)))
                for key, ms in times.items():
                    best[which][key] = min(ms, best[which].get(key, math.inf))
    if set(best["old"]) != set(best["new"]):
        sys.stderr.write("bench_ab.py: OLD and NEW timed different problems\n")
        return 1
    if not best["old"]:
        sys.stderr.write("bench_ab.py: no problem was timed\n")
        return 1
    print("fastest of %d alternated rounds each (ms); speedup = OLD / NEW, > 1: NEW is faster" % rounds)
    print("%-26s %-28s %-4s %3s %10s %10s %8s" % ("problem", "op", "type", "thr", "old ms", "new ms", "speedup"))
    logs = []
    for key in sorted(best["old"]):
        o, n = best["old"][key], best["new"][key]
        speedup = o / n if n > 0 else math.nan
        if speedup > 0:
            logs.append(math.log(speedup))
        print("%-26s %-28s %-4s %3d %10.3f %10.3f %7.2fx" % (key + (o, n, speedup)))
    if logs:
        print("geomean speedup over %d: %.3fx" % (len(logs), math.exp(sum(logs) / len(logs))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
