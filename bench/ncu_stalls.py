#!/usr/bin/env python3
"""Nsight Compute's warp-stall samples by SASS line, the top lines of each profile.

    bench/ncu_stalls.py DIR [--top 30]

Reads every DIR/*-sass.csv (`ncu --import X.ncu-rep --page source --csv --print-source sass`, as
scripts/ncu-profile.sh writes them) and prints, per profile, the share of all samples at each of
its most-sampled instructions: the line a warp waited at (a stall on a load shows at the first
instruction that uses its result).
"""
import argparse
import csv
import glob
import os


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    for path in sorted(glob.glob(os.path.join(args.dir, "*-sass.csv"))):
        rows = list(csv.reader(open(path)))
        header = next((i for i, r in enumerate(rows) if "Source" in r and any("Stall" in c for c in r)), None)
        if header is None:
            print("==", os.path.basename(path), "has no stall columns:", rows[:2])
            continue
        names, data = rows[header], rows[header + 1:]
        column = names.index(next(c for c in names if c.startswith("Warp Stall Sampling (All")))
        source = names.index("Source")
        data = [r for r in data if len(r) > column]
        total = sum(float(r[column] or 0) for r in data) or 1.0
        print("==", os.path.basename(path), "samples", total, "instructions", len(data))
        for r in sorted(data, key=lambda r: -float(r[column] or 0))[:args.top]:
            print(f"{100 * float(r[column] or 0) / total:5.1f}%  {r[source][:100]}")


if __name__ == "__main__":
    main()
