#!/usr/bin/env python3
"""Where a kernel's warps wait, from Nsight Compute's per-instruction stall sampling.

Reads the CSV of `ncu --import REPORT.ncu-rep --page source --csv --print-source sass` (a report
taken with `--set full`, which samples warp stalls) and prints the stall reasons' shares over the
whole kernel, then the instructions with the most samples, each with its two main reasons and
the four SASS lines before it (what it waits on is usually there: a load, a barrier).

With --mix: the instructions executed instead, by opcode (warp instructions, as ncu counts them),
and the most executed count with its lines: in an unrolled row loop each line runs once a warp
and row, so that count is the rows times warps, and its lines the row's instructions (session
48: LayerNorm bf16 32768's row was 407 a warp against RMSNorm's 356).

With --lines CUBIN SOURCE: the samples and instructions by line of the generated source, through
the line tables of a cubin of the same kernel (`normjit emit PROBLEM --config C --cubin CUBIN
--line-info`, whose machine code is the profiled kernel's bytes; SOURCE: `normjit emit PROBLEM
--config C`), joined by SASS offset (bench/sass_lines.py)."""
import argparse
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_lines  # noqa: E402  (beside this script)


def number(row, column):
    """A profile table's cell as a number (ncu leaves zeros empty)."""
    return float(row[column] or 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    ap.add_argument("--top", type=int, default=12, help="instructions to show (default 12)")
    ap.add_argument("--mix", action="store_true", help="instructions executed by opcode, not stalls")
    ap.add_argument("--lines", nargs=2, metavar=("CUBIN", "SOURCE"),
                    help="by source line, through the line tables of CUBIN (normjit emit --cubin --line-info)")
    ap.add_argument("--kernel", default="nj_norm_backward", help="with --lines: the kernel profiled")
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    header_at = next(i for i, r in enumerate(rows) if "Source" in r and "Warp Stall Sampling (All Samples)" in r)
    h = rows[header_at]
    data = [r for r in rows[header_at + 1:] if len(r) == len(h)]
    samples, source = h.index("Warp Stall Sampling (All Samples)"), h.index("Source")
    if args.mix:
        print_mix(data, source, h.index("Instructions Executed"), args.top)
        return
    reasons = [i for i, c in enumerate(h) if c.startswith("stall_")]
    if args.lines:
        print_lines(data, h, reasons, args.lines, args.kernel, args.top)
        return
    total = sum(number(r, samples) for r in data) or 1.0
    by_reason = sorted(((sum(number(r, i) for r in data), h[i][6:]) for i in reasons), reverse=True)
    print("by reason:", ", ".join(f"{name} {100 * v / total:.1f}%" for v, name in by_reason if v / total > 0.01))
    for at in sorted(range(len(data)), key=lambda i: -number(data[i], samples))[: args.top]:
        r = data[at]
        why = sorted(((number(r, i), h[i][6:]) for i in reasons), reverse=True)[:2]
        print(f"--- {100 * number(r, samples) / total:5.1f}% at SASS line {at}: {r[source].strip()}  "
              f"[{', '.join(f'{name} {int(v)}' for v, name in why)}]")
        for k in range(max(0, at - 4), at):
            print("        ", data[k][source].strip()[:80])


def print_lines(data, h, reasons, lines_from, kernel, top):
    cubin, source_file = lines_from
    blob = open(cubin, "rb").read()
    lines = sass_lines.kernel_lines(blob, kernel)
    text = open(source_file).read().splitlines()
    address, samples, executed = h.index("Address"), h.index("Warp Stall Sampling (All Samples)"), h.index("Instructions Executed")
    at = [int(r[address], 16) for r in data]
    base = min(at)
    size = sass_lines.text_size(blob, kernel)
    span = max(at) - base + 16
    if span != size:
        print(f"warning: the profile's {kernel} spans {span} bytes of SASS, the cubin's {size}: "
              "not the same kernel (another config, problem or NVRTC?); the lines below may be wrong")
    by_line = {}
    for r, address_of_r in zip(data, at):
        key = sass_lines.line_at(lines, address_of_r - base)
        entry = by_line.setdefault(key, [0.0, 0.0, 0, {}])
        entry[0] += number(r, samples)
        entry[1] += number(r, executed)
        entry[2] += 1
        for i in reasons:
            entry[3][h[i][6:]] = entry[3].get(h[i][6:], 0.0) + number(r, i)
    all_samples = sum(e[0] for e in by_line.values()) or 1.0
    all_executed = sum(e[1] for e in by_line.values()) or 1.0

    def where(key):
        file, line = key
        if file is None:
            return "(no line)"
        if file.endswith(".cu"):  # the generated source, as NVRTC named it (the rest: CUDA's headers)
            said = text[line - 1].strip() if 0 < line <= len(text) else "?"
            return f"L{line}: {said[:90]}"
        return f"{file}:{line}"

    print(f"{kernel}: {len(data)} SASS lines on {len(by_line)} source lines of {source_file}")
    print("by stall samples (share of samples, of instructions executed; SASS lines; main reasons):")
    for key, (s, n, count, why) in sorted(by_line.items(), key=lambda kv: -kv[1][0])[:top]:
        main = sorted(why.items(), key=lambda kv: -kv[1])[:2]
        print(f"  {100 * s / all_samples:5.1f}% {100 * n / all_executed:5.1f}% {count:4d}  {where(key)}  "
              f"[{', '.join(f'{name} {int(v)}' for name, v in main)}]")
    print("by instructions executed (share; SASS lines):")
    for key, (s, n, count, why) in sorted(by_line.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {100 * n / all_executed:5.1f}% {count:4d}  {where(key)}")


def print_mix(data, source, executed, top):
    counts = [int(number(r, executed)) for r in data]
    by_op = {}
    for r, n in zip(data, counts):
        text = re.sub(r"^@!?U?P\w+\s+", "", r[source].strip())
        op = text.split()[0].split(".")[0] if text else "?"
        by_op[op] = by_op.get(op, 0) + n
    total = sum(counts) or 1
    print(f"executed: {total / 1e6:.2f} M warp instructions over {len(data)} SASS lines")
    print("by opcode:", ", ".join(f"{op} {100 * n / total:.1f}%" for op, n in sorted(by_op.items(), key=lambda x: -x[1])[:top]))
    per_count = {}
    for n in counts:
        per_count[n] = per_count.get(n, 0) + 1
    common = max((c for c in per_count if c > 0), key=lambda c: (per_count[c] * c, c))
    print(f"the most executed count: {per_count[common]} lines ran {common} times each "
          f"({100 * per_count[common] * common / total:.1f}% of the instructions executed)")


if __name__ == "__main__":
    main()
