"""Runs every python/tests/test_*.py and ends with the line scripts/test.sh's stage parser reads:
    python: N passed, M failed (K skipped)
Exit status 1 on any failure or error. Skipped tests (no torch, no GPU) count as neither.

    run.py                 every test, in this process
    run.py --shards K      K processes at once, test i in process i mod K (the GPU machine's
                           minutes are few: its Python tests took 3-4 minutes in one process),
                           their logs one after another, then the sum of their counts
    run.py --shard I/K     process I's share only (what --shards starts)"""
import argparse
import os
import re
import subprocess
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
SUMMARY = re.compile(r"^python: (\d+) passed, (\d+) failed \((\d+) skipped\)$", re.M)


def tests_of(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from tests_of(item)
        else:
            yield item


def run_here(shard, shards):
    suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
    if shards > 1:
        suite = unittest.TestSuite(t for i, t in enumerate(tests_of(suite)) if i % shards == shard)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    reasons = {}
    for test, reason in result.skipped:
        reasons.setdefault(reason, []).append(test.id().split(".", 1)[0])
    for reason, modules in reasons.items():
        print("skipped %d tests of %s: %s" % (len(modules), ", ".join(sorted(set(modules))), reason))
    print("python: %d passed, %d failed (%d skipped)" % (passed, failed, skipped))
    # A shard may hold no test; the whole run must hold some.
    return 1 if failed or (result.testsRun == 0 and shards == 1) else 0


def run_sharded(shards):
    children = [
        subprocess.Popen([sys.executable, os.path.abspath(__file__), "--shard", "%d/%d" % (i, shards)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for i in range(shards)
    ]
    totals, status = [0, 0, 0], 0
    for i, child in enumerate(children):
        out, _ = child.communicate()
        print("===== shard %d/%d: exit %d" % (i, shards, child.returncode))
        print(out, end="" if out.endswith("\n") else "\n")
        found = SUMMARY.findall(out)
        if child.returncode != 0 or not found:
            status = 1
        if not found:  # died before its summary: count it as a failure, never as nothing
            totals[1] += 1
            continue
        for k, v in enumerate(found[-1]):
            totals[k] += int(v)
    if totals[0] + totals[1] + totals[2] == 0:
        status = 1
    print("python: %d passed, %d failed (%d skipped)" % tuple(totals))
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shards", type=int, default=1)
    parser.add_argument("--shard", help="I/K")
    args = parser.parse_args()
    if args.shard:
        shard, shards = (int(v) for v in args.shard.split("/"))
        if not 0 <= shard < shards:
            parser.error("--shard I/K needs 0 <= I < K, not %s" % args.shard)
        return run_here(shard, shards)
    if args.shards < 1:
        parser.error("--shards needs at least 1, not %d" % args.shards)
    return run_sharded(args.shards) if args.shards > 1 else run_here(0, 1)


if __name__ == "__main__":
    sys.exit(main())
