#!/usr/bin/env python3
"""Shapes that got slower between two `normjit bench --json` runs of one pass on one device.

    bench/regressions.py OLD.json NEW.json [NEW2.json ...] [--tolerance 0.03]

Matches shapes by kind, dtypes, N, M and fused options; compares graph-replay times where both
runs have them (plain-launch times otherwise), and lists every shape whose time grew by more
than the tolerance (default 3%: two bench runs of one build agree within 1-2%, rows of 256-512
rows within 4%), with both configs. Several NEW runs of the same build count each shape's
fastest: a re-timed run clears a shape that was slow once by chance. Exit status: 0 when none
did, 1 when some did, 2 when the runs cannot be compared (another device or pass, or no shape
in common).

Why: session 48 changed a template the forward shares and timed only the backward; the forward's
prefetching blocks at 5120-7168 ran 0.69-0.87x for six sessions before a standing run showed it
(bench/NOTES.md entry 68). scripts/gpu-standing.sh runs the standing sweep and this check.
"""
import argparse
import json
import sys

from compare_bench import key  # a shape's identity, as the A/B compares it


def time_of(row, graph):
    return row["graph_us"] if graph else row["us"]


def best_time(row):
    """The row's time for choosing among runs: graph replay where it has one."""
    return row.get("graph_us") or row["us"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new", nargs="+", help="one or more runs of the build to check (each shape's fastest counts)")
    parser.add_argument("--tolerance", type=float, default=0.03, help="time growth allowed (default 0.03)")
    args = parser.parse_args()
    with open(args.old) as f:
        old = json.load(f)
    runs = []
    for path in args.new:
        with open(path) as f:
            runs.append(json.load(f))
    for new in runs:
        for field in ("device", "pass"):
            if old.get(field) != new.get(field):
                print(f"regressions: not comparable: {field} {old.get(field)!r} against {new.get(field)!r}")
                return 2
    new = runs[0]
    fastest = {}
    for run in runs:
        for r in run["rows"]:
            best = fastest.get(key(r))
            if best is None or best_time(r) < best_time(best):
                fastest[key(r)] = r
    before = {key(r): r for r in old["rows"]}
    pairs = [(before[k], r) for k, r in fastest.items() if k in before]
    if not pairs:
        print("regressions: not comparable: no shape in common")
        return 2
    graph = all(o.get("graph_us") and n.get("graph_us") for o, n in pairs)
    slower = []
    for o, n in pairs:
        ratio = time_of(n, graph) / time_of(o, graph)
        if ratio > 1 + args.tolerance:
            slower.append((ratio, o, n))
    what = "graph-replay" if graph else "plain-launch"
    print(f"regressions: {len(pairs)} shapes of {new.get('pass', '?')} on {new.get('device', '?')}, {what} µs"
          f"{f' (the fastest of {len(runs)} runs)' if len(runs) > 1 else ''}, "
          f"tolerance {args.tolerance:.0%}: {len(slower)} slower")
    for ratio, o, n in sorted(slower, key=lambda s: -s[0]):
        print(f"  {n['kind']} {n['dtype']} {n['weight_dtype']} N={n['n']} M={n['m']}{' ' + n['fused'] if n.get('fused') else ''}: "
              f"{time_of(o, graph):.1f} -> {time_of(n, graph):.1f} us ({1 / ratio:.2f}x)"
              + ("" if o.get("config") == n.get("config") else f"\n    config {o.get('config')} -> {n.get('config')}"))
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
