#!/usr/bin/env python3
"""DRAM bytes a backward pass really moves, against its minimum bytes, from Nsight Compute.

Runs `normjit bench` for one shape under ncu with only DRAM counters (one pass, caches neither
flushed nor locked: `--cache-control none --clock-control none`, so what one launch leaves dirty
in L2 is written back during a later one, as in a training loop), skips the warm-up launches, and
pairs each nj_norm_backward with the nj_reduce_partials after it. Prints each kernel's mean DRAM
reads and writes, and per backward the total and its excess over the minimum bytes
(backward_bytes.min_bytes, issue 3's formula). The excess is what the partial rows (and
anything else beyond the minimum) cost in DRAM, where bench's part% column counts their bytes
as written and read once each.

    python3 bench/dram_traffic.py --normjit build-device/normjit --kind layernorm --dtype bf16 \\
        --weights same --n 16384 [--m M] [--launches 8]
"""
import argparse
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from backward_bytes import min_bytes

BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"]


def ncu_rows(args, m):
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    cmd = [ncu, "--cache-control", "none", "--clock-control", "none", "--metrics", ",".join(METRICS),
           "-k", "regex:^nj_", "--launch-skip", str(args.skip), "--launch-count", str(2 * args.launches),
           "--csv", "--print-units", "base", args.normjit, "bench", "--kinds", args.kind, "--dtypes", args.dtype,
           "--weights", args.weights, "--n", str(args.n), "--m", str(m), "--reps", str(args.launches + 4)]
    env = dict(os.environ, NORMJIT_CACHE_DIR=os.environ.get("NORMJIT_CACHE_DIR") or tempfile.mkdtemp())
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    text = run.stdout
    start = text.find('"ID"')
    if start < 0:
        sys.exit(f"dram_traffic: no ncu CSV (exit {run.returncode}):\n{text[-2000:]}\n{run.stderr[-2000:]}")
    launches = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        if not r.get("Metric Name"):
            continue
        one = launches.setdefault(int(r["ID"]), {"name": r["Kernel Name"].split("(")[0]})
        one[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    return [launches[k] for k in sorted(launches)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--normjit", required=True, help="the normjit command to run")
    ap.add_argument("--kind", default="layernorm", choices=["layernorm", "rmsnorm"])
    ap.add_argument("--dtype", default="bf16", choices=list(BYTES))
    ap.add_argument("--weights", default="same", help="fp32 or same")
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--m", type=int, help="rows (default 64 Mi elements / N, as bench)")
    ap.add_argument("--launches", type=int, default=8, help="backward passes profiled")
    ap.add_argument("--skip", type=int, default=6, help="nj_ launches skipped first (warm-up)")
    args = ap.parse_args()
    m = args.m or max(1, (64 << 20) // args.n)
    rows = ncu_rows(args, m)
    passes, current = [], None
    for r in rows:  # a pass: one nj_norm_backward and the nj_reduce_partials launches after it
        if r["name"] == "nj_norm_backward":
            current = [r]
            passes.append(current)
        elif current is not None:
            current.append(r)
    if not passes:
        sys.exit("dram_traffic: no nj_norm_backward launch profiled")
    elem = BYTES[args.dtype]
    floor = min_bytes(args.kind, m, args.n, elem, elem if args.weights == "same" else BYTES[args.weights])
    print(f"{args.kind} {args.dtype} weights={args.weights} M={m} N={args.n}: minimum {floor / 1e6:.1f} MB; "
          f"{len(passes)} passes profiled ({os.path.basename(args.normjit)})")
    by_name = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    for name, rs in by_name.items():
        mean = {k: statistics.mean(r.get(k, 0) for r in rs) for k in METRICS}
        print(f"  {name:20s} x{len(rs):<3d} read {mean[METRICS[0]] / 1e6:9.2f} MB  write {mean[METRICS[1]] / 1e6:9.2f} MB"
              f"  {mean[METRICS[2]] / 1e3:8.2f} us")
    totals = [sum(r.get(METRICS[0], 0) + r.get(METRICS[1], 0) for r in p) for p in passes]
    total = statistics.median(totals)
    print(f"  per backward: median {total / 1e6:.1f} MB of DRAM traffic (range {min(totals) / 1e6:.1f}-"
          f"{max(totals) / 1e6:.1f}), {100 * (total - floor) / floor:+.2f}% over the minimum")


if __name__ == "__main__":
    main()
