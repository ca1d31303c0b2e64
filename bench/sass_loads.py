#!/usr/bin/env python3
"""Where a kernel's global loads sit against their uses, from its machine code (no GPU needed).

Reads `normjit emit ... --sass` output (nvdisasm's listing) and looks at one kernel's
instructions up to its first block barrier (the row loop's first pass, in the backward):
- each global load (LDG) and the distance, in instructions, to the first instruction that reads
  the register it loads; a load used within --near instructions makes its warp wait a trip to
  memory unless other warps cover it;
- with --mark OPCODE (e.g. MUFU.RCP, the first division of the recompute's pass 1): how many
  loads issue before the first such instruction and how many after it.

Why: ptxas decides where a row's loads issue, and the same kernel source came out with a row's
loads issued together at the top or one before each use, 2.4x apart in time (LN bf16 4095 with
x̂ recomputed, session 56, bench/NOTES.md entry 70). This counts it from the SASS on the CPU; the
counts separated session 56's fast and slow kernels for most shapes, not all, so they point at
what to time, they do not replace the timing.

    normjit emit --kind layernorm --dtype bf16 --weight-dtype fp32 --n 4095 --align 2 \\
        --recompute-from-output --sass > k.sass
    bench/sass_loads.py k.sass --mark MUFU.RCP"""
import argparse
import re
import sys


def kernel_instructions(text, kernel):
    """The kernel's instructions, in order, without addresses and the trailing ';'."""
    m = re.search(r"^\s*" + re.escape(kernel) + r":\s*$(.*?)(?=^\s*\.section|\Z)", text, re.S | re.M)
    if not m:
        raise SystemExit(f"sass_loads: no function {kernel} in the listing (is it nvdisasm output of its cubin?)")
    found = []
    for line in m.group(1).splitlines():
        mm = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if mm:
            found.append(mm.group(1))
    return found


def split_operands(instruction):
    """(opcode, destination, sources) of an instruction, its predicate guard dropped."""
    parts = instruction.split(None, 1)
    if parts and parts[0].startswith("@"):
        parts = parts[1].split(None, 1) if len(parts) > 1 else []
    if not parts:
        return "", "", ""
    opcode = parts[0]
    operands = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    if opcode.startswith(("ST", "RED", "ATOM", "BRA", "BAR", "EXIT", "BSYNC", "BSSY", "WARPSYNC")):
        return opcode, "", ",".join(operands)  # no register written: every operand is read
    return opcode, operands[0] if operands else "", ",".join(operands[1:])


def reads(instruction, register):
    _, _, sources = split_operands(instruction)
    return re.search(r"\b" + re.escape(register) + r"\b", sources) is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass", help="normjit emit --sass output ('-' for stdin)")
    ap.add_argument("--kernel", default="nj_norm_backward", help="the function (default nj_norm_backward)")
    ap.add_argument("--near", type=int, default=12, help="a use this close counts as waiting (default 12)")
    ap.add_argument("--mark", help="an opcode prefix: count the loads before its first instruction and after")
    ap.add_argument("--list", action="store_true", help="print every load with its distance to its first use")
    args = ap.parse_args()
    text = sys.stdin.read() if args.sass == "-" else open(args.sass).read()
    code = kernel_instructions(text, args.kernel)
    end = next((i for i, s in enumerate(code) if split_operands(s)[0].startswith("BAR")), len(code))
    loads = []  # (index, instruction, distance to the first use or None)
    for i in range(end):
        opcode, dest, _ = split_operands(code[i])
        if not opcode.startswith("LDG"):
            continue
        use = next((k for k in range(i + 1, len(code)) if reads(code[k], dest)), None) if dest else None
        loads.append((i, code[i], None if use is None else use - i))
    near = [x for x in loads if x[2] is not None and x[2] <= args.near]
    print(f"{args.kernel}: {len(code)} instructions, the first barrier at {end}; {len(loads)} global loads before "
          f"it, {len(near)} used within {args.near} instructions")
    if args.mark:
        at = next((i for i in range(end) if split_operands(code[i])[0].startswith(args.mark)), end)
        before = sum(1 for i, _, _ in loads if i < at)
        print(f"first {args.mark} at {at}: {before} loads issue before it, {len(loads) - before} after")
    for i, instruction, distance in loads if args.list else near:
        print(f"  {i:5d}  {instruction[:70]:70s}  used {'never' if distance is None else f'{distance} later'}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # piped into head: the reader has what it wanted
        sys.stderr.close()
