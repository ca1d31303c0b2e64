#!/usr/bin/env python3
"""Per shape of a `normjit tune --exhaustive` log: the heuristic's time, the best candidate's,
and the best of the candidates whose config contains a word (a family: column_pass, cluster,
shared_sums, staged, ...).

    bench/tune_fits.py TUNE.txt[.gz] [--family WORD] [--all]

Reads the "  fit PROBLEM | CONFIG | µs" lines (the heuristic's config is each shape's first);
logs under bench/results/ above 300 KB are stored gzipped and read as they are.
--all also lists every candidate of the family with its time.
"""
import argparse
import collections
import gzip


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("--family", default="column_pass", help="a word of the configs to compare (default column_pass)")
    parser.add_argument("--all", action="store_true", help="list every candidate of the family")
    args = parser.parse_args()
    shapes = collections.OrderedDict()
    with (gzip.open(args.log, "rt") if args.log.endswith(".gz") else open(args.log)) as f:
        for line in f:
            if not line.startswith("  fit "):
                continue
            shape, config, us = (part.strip() for part in line[len("  fit "):].split("|"))
            shapes.setdefault(shape, []).append((float(us), config))
    for shape, fits in shapes.items():
        heuristic = fits[0]
        best = min(fits)
        family = [fit for fit in fits if args.family in fit[1]]
        line = f"{shape}\n    heuristic {heuristic[0]:9.2f}  best {best[0]:9.2f} ({best[1]})"
        if family:
            line += f"\n    best {args.family} {min(family)[0]:9.2f} ({min(family)[1]})"
        print(line)
        if args.all:
            for us, config in sorted(family):
                print(f"      {us:9.2f}  {config}")


if __name__ == "__main__":
    main()
