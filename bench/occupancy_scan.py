#!/usr/bin/env python3
"""Which heuristic configs ptxas leaves short of threads an SM (no GPU needed).

For each problem of a sweep, `normjit emit --resources` compiles the heuristic's backward kernel
for sm_90 on the H200's rules (memory rate 18.4, many rows) and reports its registers; this
script works out how many of its blocks an SM's 65536 registers hold (registers are allocated a
warp at a time in units of 256) and prints the configs below --min-threads threads an SM.
Shared memory, which limits the shared-sums configs, is not counted: those set min_blocks
themselves. Session 53 found LayerNorm's blocks of rows of an element left at 384-512 threads an
SM, and 1.01-1.34x faster at 576-640 (bench/NOTES.md entry 67).

  bench/occupancy_scan.py [--normjit build/normjit] [--min-threads 512] [--n N ...]
"""
import argparse
import re
import subprocess
import sys

REGISTERS_PER_SM = 65536
MAX_THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32


def threads_per_sm(threads: int, registers: int) -> int:
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    blocks = min(REGISTERS_PER_SM // (per_warp * warps), MAX_THREADS_PER_SM // threads, MAX_BLOCKS_PER_SM)
    return blocks * threads


def heuristic(normjit: str, args: list) -> tuple:
    """(launch config, registers, spill bytes) of the problem's backward kernel."""
    base = [normjit, "emit", *args, "--memory-rate", "18.4"]
    source = subprocess.run(base, capture_output=True, text=True).stdout
    launch = re.search(r"// launch: (.*)", source)
    resources = subprocess.run(base + ["--resources"], capture_output=True, text=True).stdout
    row = re.search(r"nj_norm_backward\s+(\d+)\s+\d+\s+\d+\s+(\d+)", resources)
    if not launch or not row:
        return None
    return launch.group(1), int(row.group(1)), int(row.group(2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--normjit", default="build/normjit")
    parser.add_argument("--min-threads", type=int, default=512)
    parser.add_argument("--n", type=int, nargs="*",
                        default=[n + d for n in range(512, 16385, 256) for d in (0, 1)])
    opts = parser.parse_args()
    short = 0
    for n in opts.n:
        for kind in ("layernorm", "rmsnorm"):
            for dtype, weight in (("bf16", "fp32"), ("fp16", "same"), ("fp32", "same")):
                size = 4 if dtype == "fp32" else 2
                align = min(16, (n * size) & -(n * size))
                args = ["--kind", kind, "--n", str(n), "--dtype", dtype, "--weight-dtype", weight,
                        "--align", str(align)]
                got = heuristic(opts.normjit, args)
                if not got:
                    print(f"{kind} {dtype}/{weight} N={n} align={align}: no config or resources", file=sys.stderr)
                    continue
                config, registers, spill = got
                threads = int(re.search(r"threads=(\d+)", config).group(1))
                held = threads_per_sm(threads, registers)
                if held < opts.min_threads:
                    short += 1
                    print(f"{kind:9} {dtype}/{weight:4} N={n:<6} align={align:<2} {held:4} threads an SM "
                          f"({registers} registers, {spill} B spilled): {config}")
    print(f"occupancy_scan: {short} configs below {opts.min_threads} threads an SM")
    return 0


if __name__ == "__main__":
    sys.exit(main())
