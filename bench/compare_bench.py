#!/usr/bin/env python3
"""Two `normjit bench --json` runs side by side, shape by shape.

    bench/compare_bench.py OLD.json NEW.json [--changed]

Prints, for every shape in both runs: the graph-replay and plain-launch times (µs) of each,
and the new run's launch config; then the median ratio of % of copy bandwidth (new / old) over
the shapes of M·N >= 32 Mi. --changed lists only the shapes whose config changed. Session call
scripts under bench/results/ use it to compare a build with an older one run in the same call.
"""
import argparse
import json
import statistics


def key(row):
    # A pinned row (bench --config, --merge) is its config's own: matched to the same config's row.
    pinned = row["config"] if row.get("pinned") else ""
    return row["kind"], row["dtype"], row["weight_dtype"], row["n"], row["m"], row.get("fused", ""), pinned


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--changed", action="store_true", help="only shapes whose launch config changed")
    args = parser.parse_args()
    with open(args.old) as f:
        old = json.load(f)
    with open(args.new) as f:
        new = json.load(f)
    before = {key(r): r for r in old["rows"]}
    print(f"copy GB/s: old {old['copy_gbs']:.0f}, new {new['copy_gbs']:.0f}")
    print("kind dtype weight n m | graph us old new | plain us old new | new config")
    ratios = []
    for r in new["rows"]:
        o = before.get(key(r))
        if o is None:
            continue
        if r["m"] * r["n"] >= 32 << 20:
            ratios.append(r["pct_copy"] / o["pct_copy"])
        if args.changed and o.get("config") == r.get("config"):
            continue
        print(*key(r), "|", o.get("graph_us"), r.get("graph_us"), "|", o["us"], r["us"], "|", r.get("config", ""))
    if ratios:
        print(f"% of copy, new / old, {len(ratios)} shapes of M·N >= 32 Mi: median {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
