"""Runs every python/tests/test_*.py and ends with the line scripts/test.sh's stage parser reads:
    python: N passed, M failed (K skipped)
Exit status 1 on any failure or error. Skipped tests (no torch, no GPU) count as neither."""
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
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
sys.exit(1 if failed or result.testsRun == 0 else 0)
