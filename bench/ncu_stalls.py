#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's per-instruction stall sampling.

Reads the CSV of `ncu --import REPORT.ncu-rep --page source --csv --print-source sass` (a report
taken with `--set full`, which samples warp stalls) and prints the stall reasons' shares over the
whole kernel, then the instructions with the most samples, each with its two main reasons and
the four SASS lines before it (what it waits on is usually there: a load, a barrier)."""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=12, help="instructions to show (default 12)")
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    header_at = next(i for i, r in enumerate(rows) if "Source" in r and "Warp Stall Sampling (All Samples)" in r)
    h = rows[header_at]
    data = [r for r in rows[header_at + 1:] if len(r) == len(h)]
    samples, source = h.index("Warp Stall Sampling (All Samples)"), h.index("Source")
    reasons = [i for i, c in enumerate(h) if c.startswith("stall_")]
    value = lambda r, i: float(r[i] or 0)
    total = sum(value(r, samples) for r in data) or 1.0
    by_reason = sorted(((sum(value(r, i) for r in data), h[i][6:]) for i in reasons), reverse=True)
    print("by reason:", ", ".join(f"{name} {100 * v / total:.1f}%" for v, name in by_reason if v / total > 0.01))
    for at in sorted(range(len(data)), key=lambda i: -value(data[i], samples))[: args.top]:
        r = data[at]
        why = sorted(((value(r, i), h[i][6:]) for i in reasons), reverse=True)[:2]
        print(f"--- {100 * value(r, samples) / total:5.1f}% at SASS line {at}: {r[source].strip()}  "
              f"[{', '.join(f'{name} {int(v)}' for v, name in why)}]")
        for k in range(max(0, at - 4), at):
            print("        ", data[k][source].strip()[:80])


if __name__ == "__main__":
    main()
