"""normjit.torch._launch's host-side logic without torch or a GPU: the general path, the plans it
leaves, the fast path that uses them, and the workspace kept per (device, stream).

The scenarios run in a child process whose PYTHONPATH puts python/tests/fake_torch first (a
stand-in torch: shapes, strides, dtypes and data pointers over host buffers), with the C entry
points and the CUDA-context calls replaced by recorders: each recorded call keeps the nj_problem
and nj_backward_args bytes the library would have read. So the fast path is checked byte for byte
against the general path, which the GPU tests check against float64 references. Part of
scripts/test.sh's python stage; the real thing runs in test_torch_gpu.py on a GPU.
"""
import ctypes
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.normpath(os.path.join(HERE, ".."))


class LaunchLogicTest(unittest.TestCase):
    def test_scenarios_under_a_fake_torch(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(HERE, "fake_torch"), PYTHON_DIR]))
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                               capture_output=True, text=True, timeout=120)
        self.assertEqual(child.returncode, 0, child.stdout + child.stderr)
        self.assertIn("OK", child.stderr)


# ---- the child ---------------------------------------------------------------------------------

def child_main():
    import types

    import torch
    assert hasattr(torch, "current_stream"), "the child must import the fake torch, not %s" % torch.__file__
    from normjit import _capi
    # normjit.torch's __init__ needs the real torch (custom ops, modules): load _launch alone.
    package = types.ModuleType("normjit.torch")
    package.__path__ = [os.path.join(PYTHON_DIR, "normjit", "torch")]
    sys.modules["normjit.torch"] = package
    from normjit.torch import _launch

    class Recorder:
        """The engine and the driver as _launch sees them, recording instead of running."""

        def __init__(self):
            self.calls = []      # (entry, problem bytes, {field: value}, stream)
            self.status = []     # statuses to return, first to last; OK when empty
            self.pushes = []     # devices whose context was pushed
            self.capturing = False
            self.scale = 1
            self.address = 0x1234
            self.handle = ctypes.c_void_p(self.address)
            self._backward = {k: self._byref_entry(k) for k in (_capi.LAYERNORM, _capi.RMSNORM)}
            self.raw_backward = {k: self._address_entry(k) for k in (_capi.LAYERNORM, _capi.RMSNORM)}

        def workspace_size(self, problem, m):
            # None for small M, as the library; scale stands for a tuning database that changed.
            return self.scale * 4096 * ((m + 63) // 64) if m >= 64 else 0

        def record(self, entry, problem_address, args_address, stream):
            p = _capi.Problem.from_address(problem_address)
            a = _capi.BackwardArgs.from_address(args_address)
            self.calls.append((entry, bytes(p), {f: getattr(a, f) for f, _ in _capi.BackwardArgs._fields_}, stream))
            return self.status.pop(0) if self.status else _capi.OK

        def _byref_entry(self, kind):
            def entry(handle, problem, args, stream):
                return self.record(("byref", kind), ctypes.addressof(problem._obj), ctypes.addressof(args._obj),
                                   stream)
            return entry

        def _address_entry(self, kind):
            def entry(engine, problem, args, stream):
                assert engine == self.address
                return self.record(("address", kind), problem, args, stream)
            return entry

    rec = Recorder()
    _capi.default_engine = lambda: rec
    _launch.push_context = lambda device: rec.pushes.append(device) or True
    _launch.pop_context = lambda: None
    _launch.is_capturing = lambda stream, device: rec.capturing
    _capi.check = lambda status, lib=None: (_ for _ in ()).throw(
        _capi.NormjitError(status, "status %d" % status, "recorded failure"))

    def tensor(shape, dtype=torch.bfloat16, device=0):
        return torch.Tensor(shape, dtype, device)

    def call(kind, m, n, dtype=torch.bfloat16, weight=True, bias=True, x=None, device=0, lead=()):
        shape = lead + (m,) + (n,) if lead else (m, n)
        x = tensor(shape, dtype, device) if x is None else x
        dy = tensor(shape, dtype, device)
        w = tensor((n,), torch.float32, device) if weight else None
        b = tensor((n,), torch.float32, device) if bias and kind == _capi.LAYERNORM else None
        rows = x.numel() // n
        mean = tensor((rows, 1), torch.float32, device) if kind == _capi.LAYERNORM else None
        rstd = tensor((rows, 1), torch.float32, device)
        out = _launch.backward(kind, dy, x, w, b, mean, rstd, 1)
        names = {t.data_ptr(): name for name, t in (("x", x), ("dy", dy), ("w", w), ("mean", mean), ("rstd", rstd),
                                                    ("dx", out[0]), ("dw", out[1]), ("db", out[2]))
                 if t is not None and t.numel()}
        return out, names

    def fields(record, names):
        """The args of a recorded call with every tensor address replaced by its name."""
        return {k: names.get(v, v) if isinstance(v, int) else v for k, v in record[2].items()}

    class Scenarios(unittest.TestCase):
        def setUp(self):
            rec.calls.clear()
            rec.pushes.clear()
            rec.status.clear()
            rec.capturing = False
            rec.scale = 1
            torch.current_stream[0] = 0
            _launch._plans.clear()
            _launch._workspaces.clear()

        def test_second_call_takes_the_fast_path_with_the_same_args(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                for m in (4, 4096):
                    with self.subTest(kind=kind, m=m):
                        _, first = call(kind, m, 256)
                        out, second = call(kind, m, 256)
                        general, fast = rec.calls[-2], rec.calls[-1]
                        self.assertEqual(general[0], ("byref", kind))
                        self.assertEqual(fast[0], ("address", kind))
                        self.assertEqual(general[1], fast[1], "the same nj_problem")
                        g, f = fields(general, first), fields(fast, second)
                        # One workspace for the stream: the same address both times.
                        self.assertEqual(g, f)
                        self.assertEqual(g["dx"], "dx")
                        self.assertEqual(g["workspace"] is not None, m == 4096)
                        self.assertEqual(out[0].shape, (m, 256))
                        self.assertEqual(out[2] is None, kind == _capi.RMSNORM)

        def test_3d_input_and_no_affine(self):
            call(_capi.LAYERNORM, 67, 1024, lead=(3,), weight=False, bias=False)
            out, names = call(_capi.LAYERNORM, 67, 1024, lead=(3,), weight=False, bias=False)
            f = fields(rec.calls[-1], names)
            self.assertEqual(rec.calls[-1][0][0], "address")
            self.assertEqual((f["m"], f["x_stride"], f["weight"], f["dweight"], f["dbias"]), (201, 1024, None, None,
                                                                                              None))
            self.assertEqual((out[0].shape, out[1], out[2]), ((3, 67, 1024), None, None))

        def test_padded_rows_of_a_planned_shape_take_the_general_path(self):
            call(_capi.RMSNORM, 37, 1000)
            padded = torch.Tensor((37, 1024), torch.bfloat16)[:, :1000]
            _, names = call(_capi.RMSNORM, 37, 1000, x=padded)
            self.assertEqual(rec.calls[-1][0][0], "byref")
            self.assertEqual(fields(rec.calls[-1], names)["x_stride"], 1024)

        def test_another_dtype_or_device_is_another_plan(self):
            call(_capi.LAYERNORM, 4, 256)
            call(_capi.LAYERNORM, 4, 256, dtype=torch.float16)
            call(_capi.LAYERNORM, 4, 256, device=1)
            self.assertEqual([c[0][0] for c in rec.calls], ["byref"] * 3)
            call(_capi.LAYERNORM, 4, 256, device=1)
            self.assertEqual(rec.calls[-1][0][0], "address")

        def test_context_pushed_only_for_the_default_streams(self):
            for stream, pushed in ((0, [0, 0]), (2, [0, 0]), (0x7F00, [0])):  # general path pushes always
                with self.subTest(stream=stream):
                    self.setUp()
                    torch.current_stream[0] = stream
                    call(_capi.LAYERNORM, 4, 256)
                    call(_capi.LAYERNORM, 4, 256)
                    self.assertEqual(rec.pushes, pushed)
                    self.assertEqual(rec.calls[-1][3], stream)

        def test_one_workspace_per_stream_grown_and_fresh_under_capture(self):
            call(_capi.LAYERNORM, 4096, 256)
            on_0 = rec.calls[-1][2]["workspace"]
            torch.current_stream[0] = 0x7F00
            call(_capi.LAYERNORM, 4096, 256)
            on_side = rec.calls[-1][2]["workspace"]
            self.assertNotEqual(on_0, on_side)
            call(_capi.LAYERNORM, 64, 256)  # needs less: the same one
            self.assertEqual(rec.calls[-1][2]["workspace"], on_side)
            call(_capi.LAYERNORM, 8192, 256)  # needs more: grown (doubled, at least)
            grown = rec.calls[-1][2]
            self.assertNotEqual(grown["workspace"], on_side)
            self.assertGreaterEqual(grown["workspace_bytes"], 2 * 4096 * 64)
            rec.capturing = True  # a graph keeps what it captured: a new one each call
            call(_capi.LAYERNORM, 4096, 256)
            call(_capi.LAYERNORM, 4096, 256)
            captured = [c[2]["workspace"] for c in rec.calls[-2:]]
            self.assertNotIn(grown["workspace"], captured)
            self.assertNotEqual(captured[0], captured[1])

        def test_workspace_status_on_the_fast_path_sizes_again(self):
            call(_capi.LAYERNORM, 4096, 256)
            call(_capi.LAYERNORM, 4096, 256)
            old = rec.calls[-1][2]["workspace_bytes"]
            rec.scale = 3  # the tuning database changed: more workspace, and the library says so once
            rec.status[:] = [_capi.WORKSPACE]
            call(_capi.LAYERNORM, 4096, 256)
            self.assertEqual([c[0][0] for c in rec.calls[-2:]], ["address", "byref"])
            self.assertGreaterEqual(rec.calls[-1][2]["workspace_bytes"], 3 * old, "sized again")
            call(_capi.LAYERNORM, 4096, 256)  # a plan again, with the new size
            self.assertEqual(rec.calls[-1][0][0], "address")
            self.assertGreaterEqual(rec.calls[-1][2]["workspace_bytes"], 3 * old)

        def test_other_statuses_raise(self):
            call(_capi.RMSNORM, 4, 256)
            rec.status[:] = [_capi.CUDA]
            with self.assertRaises(_capi.NormjitError):
                call(_capi.RMSNORM, 4, 256)
            self.assertEqual(rec.calls[-1][0][0], "address")

        def test_shape_errors_still_raise_with_a_plan(self):
            call(_capi.LAYERNORM, 4, 256)
            x = tensor((4, 256))
            dy = tensor((4, 255))
            with self.assertRaisesRegex(ValueError, "dy has shape"):
                _launch.backward(_capi.LAYERNORM, dy, x, None, None, tensor((4, 1), torch.float32),
                                 tensor((4, 1), torch.float32), 1)
            with self.assertRaisesRegex(ValueError, "3 values for 4 rows"):
                _launch.backward(_capi.RMSNORM, x, x, None, None, None, tensor((3, 1), torch.float32), 1)

    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.loadTestsFromTestCase(Scenarios))
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)


if __name__ == "__main__" and "--child" in sys.argv:
    child_main()
elif __name__ == "__main__":
    unittest.main()
