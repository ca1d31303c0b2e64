"""normjit.torch._launch's host-side logic without torch or a GPU: the general path, the plans it
leaves, the fast path that uses them, and the workspace kept per (device, stream); and
_launch_forward's, the forward's, on the same helpers.

The scenarios run in a child process whose PYTHONPATH puts python/tests/fake_torch first (a
stand-in torch: shapes, strides, dtypes and data pointers over host buffers), with the C entry
points and the CUDA-context calls replaced by recorders: each recorded call keeps the nj_problem
and nj_backward_args (or nj_forward_args) bytes the library would have read. So the fast path is
checked byte for byte against the general path, which the GPU tests check against float64
references. Part of scripts/test.sh's python stage; the real thing runs in test_torch_gpu.py on a
GPU.
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
    from normjit.torch import _functional, _launch, _launch_forward, _ops

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
            self.raw_forward = {k: self._address_entry(k, "forward", _capi.ForwardArgs)
                                for k in (_capi.LAYERNORM, _capi.RMSNORM)}

        def workspace_size(self, problem, m):
            # None for small M, as the library; scale stands for a tuning database that changed.
            return self.scale * 4096 * ((m + 63) // 64) if m >= 64 else 0

        def record(self, entry, problem_address, args_address, stream, args_type=_capi.BackwardArgs):
            p = _capi.Problem.from_address(problem_address)
            a = args_type.from_address(args_address)
            self.calls.append((entry, bytes(p), {f: getattr(a, f) for f, _ in args_type._fields_}, stream))
            return self.status.pop(0) if self.status else _capi.OK

        def _byref_entry(self, kind):
            def entry(handle, problem, args, stream):
                return self.record(("byref", kind), ctypes.addressof(problem._obj), ctypes.addressof(args._obj),
                                   stream)
            return entry

        def _address_entry(self, kind, how="address", args_type=_capi.BackwardArgs):
            def entry(engine, problem, args, stream):
                assert engine == self.address
                return self.record((how, kind), problem, args, stream, args_type)
            return entry

    rec = Recorder()
    _capi.default_engine = lambda: rec
    _launch.push_context = lambda device: rec.pushes.append(device) or True
    _launch.pop_context = lambda: None
    _launch.is_capturing = lambda stream, device: rec.capturing
    _launch_forward.push_context, _launch_forward.pop_context = _launch.push_context, _launch.pop_context
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
            _launch._workspace_bytes.clear()

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

        # ---- the gate and parallel norms: the fused path's nj_problem and args fields ----------

        def fused(self, kind, m, n, x=None, dy=None, weight=True, bias=True, no_x=False, no_mean=False, **options):
            """One fused call through the general path: (outputs, {tensor address: name}, the recorded
            nj_problem as a Problem, the args fields with tensor addresses as names). no_x / no_mean:
            pass None for x / mean (recompute from the output)."""
            opts = dict(dresidual=None, inplace_residual=False, zero_centered_weight=False, rowscale=None,
                        dropout_mask=None, dropout_bits=False, dropout_p=0.0, write_dh=False, z=None,
                        gate=_capi.GATE_NONE, dy1=None, weight1=None, bias1=None, y=None)
            opts.update(options)
            x = None if no_x else tensor((m, n)) if x is None else x
            dy = tensor((m, n)) if dy is None else dy
            w = tensor((n,), torch.float32) if weight else None
            b = tensor((n,), torch.float32) if bias and kind == _capi.LAYERNORM else None
            mean = tensor((m, 1), torch.float32) if kind == _capi.LAYERNORM and not no_mean else None
            rstd = tensor((m, 1), torch.float32)
            out = _launch.backward(kind, dy, x, w, b, mean, rstd, 1, _launch.Fused(**opts))
            named = [("x", x), ("dy", dy), ("w", w), ("b", b), ("mean", mean), ("rstd", rstd), ("z", opts["z"]),
                     ("dy1", opts["dy1"]), ("w1", opts["weight1"]), ("y", opts["y"])]
            named += list(zip(("dx", "dw", "db", "dh", "dz", "dw1", "db1"), out))
            names = {t.data_ptr(): name for name, t in named if t is not None and t.numel()}
            p = _capi.Problem.from_buffer_copy(rec.calls[-1][1])
            return out, names, p, fields(rec.calls[-1], names)

        def test_gate_fills_z_and_dz_and_the_gate_field(self):
            for gate in (_capi.GATE_AFTER_NORM, _capi.GATE_BEFORE_NORM):
                with self.subTest(gate=gate):
                    z = tensor((37, 256))
                    out, names, p, f = self.fused(_capi.RMSNORM, 37, 256, z=z, gate=gate)
                    self.assertEqual(rec.calls[-1][0], ("byref", _capi.RMSNORM))
                    self.assertEqual((p.gate, p.parallel, p.residual), (gate, 0, 0))
                    self.assertEqual((f["z"], f["z_stride"], f["dz"], f["dz_stride"]), ("z", 256, "dz", 256))
                    self.assertEqual((f["dy1"], f["weight1"], f["dweight1"], f["dbias1"]), (None,) * 4)
                    dx, dw, db, dh, dz, dw1, db1 = out
                    self.assertEqual((dz.shape, dz.dtype), ((37, 256), torch.bfloat16))
                    self.assertEqual((db, dh, dw1, db1), (None,) * 4)
                    self.assertEqual(f["dx"], "dx")

        def test_padded_z_is_passed_with_its_stride(self):
            z = torch.Tensor((37, 264), torch.bfloat16)[:, :256]
            _, _, _, f = self.fused(_capi.RMSNORM, 37, 256, z=z, gate=_capi.GATE_AFTER_NORM)
            self.assertEqual((f["z"], f["z_stride"], f["dz_stride"]), ("z", 264, 256))

        def test_gate_with_the_other_options_fills_every_field(self):
            z = tensor((37, 256))
            rs = tensor((37,), torch.float32)
            dres = tensor((37, 256))
            out, names, p, f = self.fused(_capi.RMSNORM, 37, 256, z=z, gate=_capi.GATE_BEFORE_NORM, dresidual=dres,
                                          rowscale=rs, write_dh=True, zero_centered_weight=True)
            self.assertEqual((p.residual, p.zero_centered_weight, p.rowscale, p.gate), (1, 1, 1, 2))
            self.assertEqual((f["dresidual"], f["dresidual_in"], f["z"], f["dz"]),
                             (dres.data_ptr(), "dh", "z", "dz"))

        def test_parallel_fills_the_second_norm(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                with self.subTest(kind=kind):
                    dy1 = tensor((37, 256))
                    w1 = tensor((256,), torch.float32)
                    b1 = tensor((256,), torch.float32) if kind == _capi.LAYERNORM else None
                    out, names, p, f = self.fused(kind, 37, 256, dy1=dy1, weight1=w1, bias1=b1)
                    self.assertEqual((p.parallel, p.gate), (1, _capi.GATE_NONE))
                    self.assertEqual((f["dy1"], f["dy1_stride"], f["weight1"], f["dweight1"]),
                                     ("dy1", 256, "w1", "dw1"))
                    self.assertEqual((f["z"], f["dz"]), (None, None))
                    dx, dw, db, dh, dz, dw1, db1 = out
                    self.assertEqual((dw1.shape, dw1.dtype), ((256,), torch.float32))
                    if kind == _capi.LAYERNORM:
                        self.assertEqual((f["dbias1"], db1.shape), ("db1", (256,)))
                    else:
                        self.assertEqual((f["dbias1"], db1), (None, None))
                    self.assertEqual(len({id(t) for t in (dw, db, dw1, db1) if t is not None}),
                                     4 if kind == _capi.LAYERNORM else 2, "distinct parameter gradients")

        def test_parallel_without_parameters_passes_dy1_only(self):
            dy1 = tensor((37, 256))
            out, _, p, f = self.fused(_capi.LAYERNORM, 37, 256, dy1=dy1, weight=False, bias=False)
            self.assertEqual((p.parallel, p.has_weight, p.has_bias), (1, 0, 0))
            self.assertEqual((f["dy1"], f["weight1"], f["dweight1"], f["dbias1"]), ("dy1", None, None, None))
            self.assertEqual(out[5:], (None, None))

        def test_padded_dy1_is_passed_with_its_stride(self):
            dy1 = torch.Tensor((37, 300), torch.bfloat16)[:, :256]
            _, _, _, f = self.fused(_capi.RMSNORM, 37, 256, dy1=dy1, weight1=tensor((256,), torch.float32))
            self.assertEqual((f["dy1"], f["dy1_stride"]), ("dy1", 300))

        def test_options_are_their_own_problems(self):
            z = tensor((4, 256))
            self.fused(_capi.RMSNORM, 4, 256, z=z, gate=_capi.GATE_AFTER_NORM)
            after = rec.calls[-1][1]
            self.fused(_capi.RMSNORM, 4, 256, z=z, gate=_capi.GATE_BEFORE_NORM)
            before = rec.calls[-1][1]
            self.fused(_capi.RMSNORM, 4, 256, dy1=tensor((4, 256)), weight1=tensor((256,), torch.float32))
            parallel = rec.calls[-1][1]
            self.assertEqual(len({after, before, parallel}), 3)
            self.assertEqual(_launch._plans, {}, "fused calls leave no plan for the fast path")

        def test_gate_and_parallel_errors_python_sees(self):
            w = tensor((256,), torch.float32)
            cases = [
                (TypeError, "z is torch.float32 but x is torch.bfloat16", dict(z=tensor((4, 256), torch.float32),
                                                                               gate=_capi.GATE_AFTER_NORM)),
                (ValueError, r"z has shape \(4, 255\) but x has \(4, 256\)", dict(z=tensor((4, 255)),
                                                                                   gate=_capi.GATE_AFTER_NORM)),
                (ValueError, "z is on cuda:1 but x is on cuda:0", dict(z=tensor((4, 256), device=1),
                                                                       gate=_capi.GATE_AFTER_NORM)),
                (TypeError, "dy1 is torch.float16 but dy is torch.bfloat16", dict(dy1=tensor((4, 256),
                                                                                               torch.float16),
                                                                                  weight1=w)),
                (ValueError, r"dy1 has shape \(3, 256\)", dict(dy1=tensor((3, 256)), weight1=w)),
                (ValueError, "weight1 is None but weight is given", dict(dy1=tensor((4, 256)))),
                (TypeError, "weight1 is torch.bfloat16 but the weight is torch.float32",
                 dict(dy1=tensor((4, 256)), weight1=tensor((256,)))),
                (ValueError, "weight1 has 255 elements", dict(dy1=tensor((4, 256)),
                                                              weight1=tensor((255,), torch.float32))),
                (ValueError, "weight1 is on cuda:1", dict(dy1=tensor((4, 256)),
                                                          weight1=tensor((256,), torch.float32, device=1))),
            ]
            for exc, message, options in cases:
                with self.subTest(message=message):
                    with self.assertRaisesRegex(exc, message):
                        self.fused(_capi.RMSNORM, 4, 256, **options)
            with self.assertRaisesRegex(ValueError, "weight1 is given but weight is None"):
                self.fused(_capi.RMSNORM, 4, 256, weight=False, dy1=tensor((4, 256)), weight1=w)
            with self.assertRaisesRegex(ValueError, "bias1 is None but bias is given"):
                self.fused(_capi.LAYERNORM, 4, 256, dy1=tensor((4, 256)), weight1=w)
            self.assertEqual(rec.calls, [], "nothing reaches the library")

        # ---- recompute from the output: y (and beta) read, x and mean optional -----------------

        def test_recompute_without_x_passes_y_and_beta(self):
            y = tensor((37, 256))
            out, names, p, f = self.fused(_capi.LAYERNORM, 37, 256, y=y, no_x=True, no_mean=True)
            self.assertEqual(rec.calls[-1][0], ("byref", _capi.LAYERNORM))
            self.assertEqual((p.recompute_from_output, p.parallel, p.gate, p.has_bias), (1, 0, _capi.GATE_NONE, 1))
            self.assertEqual((f["x"], f["x_stride"], f["mean"]), (None, 0, None))
            self.assertEqual((f["y"], f["y_stride"], f["bias"], f["dbias"]), ("y", 256, "b", "db"))
            dx = out[0]
            self.assertEqual((dx.shape, dx.dtype, f["dx"]), ((37, 256), torch.bfloat16, "dx"))
            self.assertEqual(out[3:], (None,) * 4)

        def test_recompute_with_x_passes_it_as_the_fallback(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                with self.subTest(kind=kind):
                    y = tensor((37, 256))
                    _, _, p, f = self.fused(kind, 37, 256, y=y)
                    self.assertEqual(p.recompute_from_output, 1)
                    self.assertEqual((f["x"], f["x_stride"], f["y"]), ("x", 256, "y"))
                    self.assertEqual(f["mean"], "mean" if kind == _capi.LAYERNORM else None)
                    self.assertEqual(f["bias"], "b" if kind == _capi.LAYERNORM else None)

        def test_bias_is_not_passed_without_y(self):
            _, _, p, f = self.fused(_capi.LAYERNORM, 37, 256, rowscale=tensor((37,), torch.float32))
            self.assertEqual((p.recompute_from_output, f["y"], f["bias"], f["dbias"]), (0, None, None, "db"))

        def test_padded_y_is_passed_with_its_stride(self):
            y = torch.Tensor((37, 272), torch.bfloat16)[:, :256]
            _, _, _, f = self.fused(_capi.RMSNORM, 37, 256, y=y, no_x=True)
            self.assertEqual((f["y"], f["y_stride"]), ("y", 272))

        def test_recompute_is_its_own_problem(self):
            self.fused(_capi.LAYERNORM, 4, 256, rowscale=tensor((4,), torch.float32))
            plain = rec.calls[-1][1]
            self.fused(_capi.LAYERNORM, 4, 256, rowscale=tensor((4,), torch.float32), y=tensor((4, 256)))
            self.assertNotEqual(rec.calls[-1][1], plain)
            self.assertEqual(_launch._plans, {}, "fused calls leave no plan for the fast path")

        def test_recompute_errors_python_sees(self):
            cases = [
                (TypeError, "y is torch.float32 but x is torch.bfloat16", dict(y=tensor((4, 256), torch.float32))),
                (ValueError, r"y has shape \(4, 255\) but x has \(4, 256\)", dict(y=tensor((4, 255)))),
                (ValueError, "y is on cuda:1 but x is on cuda:0", dict(y=tensor((4, 256), device=1))),
                (ValueError, "x is None; pass x, or the forward's output as y=", dict(no_x=True)),
            ]
            for exc, message, options in cases:
                with self.subTest(message=message):
                    with self.assertRaisesRegex(exc, message):
                        self.fused(_capi.RMSNORM, 4, 256, **options)
            self.assertEqual(rec.calls, [], "nothing reaches the library")

    def forward(kind, shape, dtype=torch.bfloat16, weight=True, bias=True, w_dtype=torch.float32, x=None, nd=1,
                eps=1e-5, device=0):
        """One _launch_forward.forward call: (outputs, {tensor address: name}, the recorded args with
        addresses as names, the recorded nj_problem)."""
        x = tensor(shape, dtype, device) if x is None else x
        n_shape = tuple(x.shape[x.dim() - nd:])
        w = tensor(n_shape, w_dtype, device) if weight else None
        b = tensor(n_shape, w_dtype, device) if bias and kind == _capi.LAYERNORM else None
        out = _launch_forward.forward(kind, x, w, b, eps, nd)
        names = {t.data_ptr(): name for name, t in (("x", x), ("w", w), ("b", b), ("y", out[0]), ("mean", out[1]),
                                                      ("rstd", out[2])) if t is not None and t.numel()}
        record = rec.calls[-1]
        return out, names, fields(record, names), _capi.Problem.from_buffer_copy(record[1])

    class ForwardScenarios(unittest.TestCase):
        setUp = Scenarios.setUp

        def test_fields_outputs_and_statistics(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                with self.subTest(kind=kind):
                    (y, mean, rstd), _, f, p = forward(kind, (37, 256))
                    self.assertEqual(rec.calls[-1][0], ("forward", kind))
                    ln = kind == _capi.LAYERNORM
                    head = {name: f.pop(name) for name in list(f)[:10]}
                    self.assertEqual(head, {"m": 37, "x": "x", "x_stride": 256, "weight": "w",
                                            "bias": "b" if ln else None, "y": "y", "y_stride": 256,
                                            "mean": "mean" if ln else None, "rstd": "rstd", "eps": 1e-5})
                    self.assertFalse(any(f.values()), "the fused fields stay zero: %r" % f)
                    self.assertEqual((p.kind, p.n, p.x_dtype, p.dy_dtype, p.weight_dtype, p.has_weight, p.has_bias),
                                     (kind, 256, _capi.BF16, _capi.BF16, _capi.F32, 1, int(ln)))
                    self.assertEqual((y.shape, y.dtype), ((37, 256), torch.bfloat16))
                    self.assertEqual((rstd.shape, rstd.dtype), ((37, 1), torch.float32))
                    if ln:
                        self.assertEqual((mean.shape, mean.dtype), ((37, 1), torch.float32))
                    else:
                        self.assertIsNone(mean)

        def test_statistics_shape_is_the_leading_dims_then_ones(self):
            (y, mean, rstd), _, f, _ = forward(_capi.LAYERNORM, (3, 67, 1024))
            self.assertEqual((y.shape, mean.shape, rstd.shape, f["m"]), ((3, 67, 1024), (3, 67, 1), (3, 67, 1), 201))
            (y, mean, rstd), _, f, p = forward(_capi.RMSNORM, (5, 9, 4, 96), nd=2)
            self.assertEqual((rstd.shape, f["m"], f["x_stride"], p.n), ((5, 9, 1, 1), 45, 384, 384))
            (y, mean, rstd), _, f, _ = forward(_capi.LAYERNORM, (1000,))
            self.assertEqual((mean.shape, f["m"]), ((1,), 1))
            self.assertEqual(_launch_forward.stat_shape((2, 3, 4), 3), (1, 1, 1))
            with self.assertRaisesRegex(ValueError, "normalized_ndim = 3 for a 2-D x"):
                _launch_forward.stat_shape((2, 3), 3)

        def test_statistics_feed_the_backward_as_they_are(self):
            # What the forward saves is what the backward reads: no conversion, no copy.
            for kind, shape, nd in ((_capi.LAYERNORM, (37, 256), 1), (_capi.RMSNORM, (3, 67, 1024), 1),
                                    (_capi.LAYERNORM, (5, 9, 4, 96), 2)):
                with self.subTest(kind=kind, shape=shape):
                    x = tensor(shape)
                    w = tensor(shape[len(shape) - nd:], torch.float32)
                    b = tensor(shape[len(shape) - nd:], torch.float32) if kind == _capi.LAYERNORM else None
                    _, mean, rstd = _launch_forward.forward(kind, x, w, b, 1e-5, nd)
                    forward_problem = rec.calls[-1][1]
                    _launch.backward(kind, tensor(shape), x, w, b, mean, rstd, nd)
                    a = rec.calls[-1][2]
                    self.assertEqual(rec.calls[-1][0], ("byref", kind))
                    self.assertEqual(a["rstd"], rstd.data_ptr())
                    self.assertEqual(a["mean"], None if mean is None else mean.data_ptr())
                    self.assertEqual(rec.calls[-1][1], forward_problem, "one nj_problem for both")

        def test_rows_with_strides(self):
            padded = torch.Tensor((37, 1024), torch.bfloat16)[:, :1000]
            _, names, f, _ = forward(_capi.LAYERNORM, None, x=padded)
            self.assertEqual((f["x"], f["x_stride"], f["y_stride"]), ("x", 1024, 1000))
            strided = torch.Tensor((37, 1000), torch.bfloat16, strides=(2000, 2))  # inner stride 2: copied
            (y, _, _), names, f, _ = forward(_capi.RMSNORM, None, x=strided)
            self.assertNotEqual(f["x"], "x")
            self.assertEqual((f["x_stride"], y.shape, y.is_contiguous()), (1000, (37, 1000), True))

        def test_parameters_absent_or_of_x_s_dtype(self):
            _, _, f, p = forward(_capi.LAYERNORM, (4, 256), weight=False, bias=False)
            self.assertEqual((f["weight"], f["bias"], p.has_weight, p.has_bias), (None, None, 0, 0))
            _, _, f, p = forward(_capi.LAYERNORM, (4, 256), weight=False)
            self.assertEqual((f["weight"], f["bias"], p.has_bias, p.weight_dtype), (None, "b", 1, _capi.F32))
            _, _, f, p = forward(_capi.RMSNORM, (4, 256), dtype=torch.float16, w_dtype=torch.float16)
            self.assertEqual((p.x_dtype, p.weight_dtype), (_capi.F16, _capi.F16))

        def test_context_pushed_only_for_the_default_streams(self):
            for stream, pushed in ((0, [0]), (2, [0]), (0x7F00, [])):
                with self.subTest(stream=stream):
                    self.setUp()
                    torch.current_stream[0] = stream
                    forward(_capi.LAYERNORM, (4, 256))
                    self.assertEqual(rec.pushes, pushed)
                    self.assertEqual(rec.calls[-1][3], stream)
            self.setUp()
            forward(_capi.RMSNORM, (4, 256), device=1)
            self.assertEqual(rec.pushes, [1], "x's device, not the current one")

        def test_eps_is_passed_as_a_double(self):
            _, _, f, _ = forward(_capi.RMSNORM, (4, 256), eps=0)
            self.assertEqual(f["eps"], 0.0)
            _, _, f, _ = forward(_capi.RMSNORM, (4, 256), eps=1.25e-7)
            self.assertEqual(f["eps"], 1.25e-7)

        def test_no_rows(self):
            (y, mean, rstd), _, f, _ = forward(_capi.LAYERNORM, (0, 256))
            self.assertEqual((f["m"], y.shape, mean.shape), (0, (0, 256), (0, 1)))

        def test_errors_python_sees(self):
            def x(shape=(4, 256), dtype=torch.bfloat16, device=0):
                return tensor(shape, dtype, device)

            def w(n=256, dtype=torch.float32, device=0):
                return tensor((n,), dtype, device)
            cases = [
                (ValueError, "x is on cpu; normjit's kernels run on CUDA tensors", (x(device=-1), None, None, 1)),
                (TypeError, "x has dtype torch.float64", (x(dtype=torch.float64), None, None, 1)),
                (TypeError, "the weight is torch.float16 and x is torch.bfloat16", (x(), w(dtype=torch.float16),
                                                                                     None, 1)),
                (TypeError, "bias is torch.bfloat16 but the weight is torch.float32",
                 (x(), w(), w(dtype=torch.bfloat16), 1)),
                (ValueError, "weight has 255 elements but the normalized size N is 256", (x(), w(255), None, 1)),
                (ValueError, "weight is on cuda:1 but x is on cuda:0", (x(), w(device=1), None, 1)),
                (ValueError, "bias is on cuda:1 but x is on cuda:0", (x(), None, w(device=1), 1)),
                (ValueError, "normalized_ndim = 3 for a 2-D x", (x(), None, None, 3)),
                (ValueError, "the normalized size N is 0", (x((4, 0)), None, None, 1)),
            ]
            for exc, message, (xt, wt, bt, nd) in cases:
                with self.subTest(message=message):
                    with self.assertRaisesRegex(exc, message):
                        _launch_forward.forward(_capi.LAYERNORM, xt, wt, bt, 1e-5, nd)
            self.assertEqual(rec.calls, [], "nothing reaches the library")

        def test_a_failed_status_raises(self):
            rec.status[:] = [_capi.INVALID_ARGUMENT]
            with self.assertRaises(_capi.NormjitError):
                forward(_capi.LAYERNORM, (4, 256), eps=-1.0)
            self.assertEqual(rec.calls[-1][2]["eps"], -1.0)

        # ---- the fast path: plans by forward_key --------------------------------------------

        def test_second_call_takes_the_fast_path_with_the_same_args(self):
            from unittest import mock
            for kind, shape, nd in ((_capi.LAYERNORM, (37, 256), 1), (_capi.RMSNORM, (3, 67, 1024), 1),
                                    (_capi.LAYERNORM, (5, 9, 4, 96), 2)):
                with self.subTest(kind=kind, shape=shape):
                    with mock.patch.object(_launch_forward, "_run", wraps=_launch_forward._run) as run:
                        out1, _, first, p1 = forward(kind, shape, nd=nd)
                        self.assertEqual(run.call_count, 0, "the first call is the general one")
                        out2, _, second, p2 = forward(kind, shape, nd=nd)
                        self.assertEqual(run.call_count, 1, "the second takes the plan")
                    self.assertEqual(first, second)
                    self.assertEqual(bytes(p1), bytes(p2), "the same nj_problem")
                    self.assertEqual([None if t is None else (t.shape, t.dtype) for t in out1],
                                     [None if t is None else (t.shape, t.dtype) for t in out2])

        def test_plans_need_contiguous_tensors_and_the_same_devices(self):
            from unittest import mock
            forward(_capi.LAYERNORM, (37, 1000))
            plans = dict(_launch._plans)
            with mock.patch.object(_launch_forward, "_run", wraps=_launch_forward._run) as run:
                padded = torch.Tensor((37, 1024), torch.bfloat16)[:, :1000]
                _, _, f, _ = forward(_capi.LAYERNORM, None, x=padded)
                self.assertEqual((run.call_count, f["x_stride"]), (0, 1024))
                self.assertEqual(_launch._plans, plans, "the plan stays as it was")
                x = tensor((37, 1000))
                w = tensor((1000,), torch.float32, device=1)
                with self.assertRaisesRegex(ValueError, "weight is on cuda:1 but x is on cuda:0"):
                    _launch_forward.forward(_capi.LAYERNORM, x, w, None, 1e-5, 1)
                with self.assertRaisesRegex(ValueError, "x is on cpu"):
                    _launch_forward.forward(_capi.LAYERNORM, tensor((37, 1000), device=-1), None, None, 1e-5, 1)
                self.assertEqual(run.call_count, 0)

        def test_packed_statistics_and_the_plan(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                for rnd in ("general", "fast"):
                    with self.subTest(kind=kind, path=rnd):
                        x = tensor((37, 256))
                        w = tensor((256,), torch.float32)
                        y, stats, plan = _launch_forward.forward(kind, x, w, None, 1e-5, 1, packed=True)
                        a = rec.calls[-1][2]
                        ln = kind == _capi.LAYERNORM
                        self.assertEqual((stats.shape, stats.dtype), ((2, 37, 1) if ln else (37, 1), torch.float32))
                        self.assertEqual((a["mean"], a["rstd"]), (stats.data_ptr(), stats.data_ptr() + 4 * 37) if ln
                                         else (None, stats.data_ptr()))
                        self.assertIs(plan, _launch._plans[_launch_forward.forward_key(kind, x, w, None, 1)])
                        self.assertEqual((plan.m, plan.n, plan.stat_shape, plan.normalized_shape), (37, 256, (37, 1),
                                                                                                   (256,)))
            _, stats, plan = _launch_forward.forward(_capi.LAYERNORM, tensor((0, 256)), None, None, 1e-5, 1,
                                                     packed=True)
            self.assertEqual((stats.shape, plan), ((2, 0, 1), None), "no plan without rows")

        # ---- the autograd Functions' backward of a packed forward ----------------------------

        def packed_round(self, kind, m, n, dy=None):
            """A packed forward then backward_packed: (stats, plan, backward outputs, recorded args
            of the backward with tensor addresses as names)."""
            x = tensor((m, n))
            w = tensor((n,), torch.float32)
            b = tensor((n,), torch.float32) if kind == _capi.LAYERNORM else None
            y, stats, plan = _launch_forward.forward(kind, x, w, b, 1e-5, 1, packed=True)
            dy = tensor((m, n)) if dy is None else dy
            out = _launch.backward_packed(plan, kind, dy, x, w, b, stats, 1)
            names = {t.data_ptr(): name for name, t in (("x", x), ("dy", dy), ("w", w), ("dx", out[0]),
                                                         ("dw", out[1]), ("db", out[2])) if t is not None}
            names[stats.data_ptr()] = "stats"
            names[stats.data_ptr() + 4 * m] = "stats + 4M"
            return stats, plan, out, fields(rec.calls[-1], names)

        def test_backward_learns_the_workspace_then_takes_the_fast_path(self):
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                for m in (4, 4096):
                    with self.subTest(kind=kind, m=m):
                        _, plan, out, general = self.packed_round(kind, m, 256)
                        self.assertEqual(rec.calls[-1][0], ("byref", kind))
                        self.assertEqual(plan.workspace_bytes, 0 if m < 64 else 4096 * m // 64)
                        _, plan2, out, fast = self.packed_round(kind, m, 256)
                        self.assertIs(plan2, plan)
                        self.assertEqual(rec.calls[-1][0], ("address", kind))
                        self.assertEqual(general, fast)
                        ln = kind == _capi.LAYERNORM
                        self.assertEqual((fast["mean"], fast["rstd"]), ("stats", "stats + 4M") if ln else
                                         (None, "stats"))
                        self.assertEqual((fast["dx"], fast["dweight"], fast["dbias"]),
                                         ("dx", "dw", "db" if ln else None))
                        self.assertEqual((out[0].shape, out[1].shape), ((m, 256), (256,)))

        def test_backward_of_odd_dy_or_a_changed_workspace_takes_the_general_path(self):
            self.packed_round(_capi.LAYERNORM, 4096, 256)
            self.packed_round(_capi.LAYERNORM, 4096, 256)
            self.assertEqual(rec.calls[-1][0][0], "address")
            expanded = torch.Tensor((4096, 256), torch.bfloat16, strides=(0, 1))  # what sum()'s backward hands on
            self.packed_round(_capi.LAYERNORM, 4096, 256, dy=expanded)
            self.assertEqual(rec.calls[-1][0][0], "byref")
            old = rec.calls[-1][2]["workspace_bytes"]
            rec.scale = 3  # the tuning database changed: the fast call is refused once, the general one sizes again
            x, w, b = tensor((4096, 256)), tensor((256,), torch.float32), tensor((256,), torch.float32)
            _, stats, plan = _launch_forward.forward(_capi.LAYERNORM, x, w, b, 1e-5, 1, packed=True)
            # Refused by the call through the forward's plan, then by the one through the backward's
            # plan that the first (general) backward left; then the general path sizes it again.
            rec.status[:] = [_capi.WORKSPACE, _capi.WORKSPACE]
            _launch.backward_packed(plan, _capi.LAYERNORM, tensor((4096, 256)), x, w, b, stats, 1)
            self.assertEqual([c[0][0] for c in rec.calls[-3:]], ["address", "address", "byref"])
            self.assertEqual(plan.workspace_bytes, 3 * old)
            self.packed_round(_capi.LAYERNORM, 4096, 256)
            self.assertEqual((rec.calls[-1][0][0], rec.calls[-1][2]["workspace_bytes"]), ("address", 3 * old))

    class DispatchScenarios(unittest.TestCase):
        """_ops' public functions and _functional's layer_norm/rms_norm under the stand-in torch's
        autograd and custom ops: eager calls go straight to _launch/_launch_forward (the Functions
        through autograd's C entry point), traced ones through Function.apply and the ops."""

        def setUp(self):
            Scenarios.setUp(self)
            torch.state.reset()
            torch.autograd.forward_ad._current_level = -1
            del torch.calls[:], torch.applied[:]

        def module_args(self, kind, m=37, n=256, x_dtype=torch.bfloat16, grad=True):
            x = tensor((m, n), x_dtype)
            x.requires_grad = grad
            w = torch.Parameter((n,), torch.float32, 0)
            b = torch.Parameter((n,), torch.float32, 0) if kind == _capi.LAYERNORM else None
            return x, w, b

        def norm(self, kind, x, w, b, normalized_shape=None, eps=1e-5):
            normalized_shape = (x.shape[-1],) if normalized_shape is None else normalized_shape
            if kind == _capi.LAYERNORM:
                return _functional.layer_norm(x, normalized_shape, w, b, eps)
            return _functional.rms_norm(x, normalized_shape, w, eps)

        def kinds(self):
            return [c[0] if c[0] != "op" else "op " + c[1] for c in torch.calls]

        def test_public_functions_call_the_implementation_when_eager(self):
            x, w, b = self.module_args(_capi.LAYERNORM)
            mean = tensor((37, 1), torch.float32)
            _ops.layer_norm_forward(x, w, b, 1e-5)
            _ops.rms_norm_forward(x, w, None)
            _ops.layer_norm_backward(x, x, w, b, mean, mean)
            _ops.rms_norm_backward(x, x, w, mean)
            self.assertEqual(self.kinds(), [])
            self.assertEqual([c[0] for c in rec.calls], [("forward", 0), ("forward", 1), ("byref", 0), ("byref", 1)])

        def test_public_functions_go_through_the_ops_when_traced(self):
            x, w, b = self.module_args(_capi.LAYERNORM)
            mean = tensor((37, 1), torch.float32)
            for switch, value in (("compiling", True), ("dispatch_modes", 1), ("functorch", True),
                                  ("jit_tracing", True)):
                with self.subTest(switch=switch):
                    self.setUp()
                    setattr(torch.state, switch, value)
                    _ops.layer_norm_forward(x, w, b, 1e-5)
                    _ops.rms_norm_forward(x, w, None)
                    _ops.layer_norm_backward(x, x, w, b, mean, mean)
                    _ops.rms_norm_backward(x, x, w, mean)
                    self.assertEqual(self.kinds(), ["op layer_norm_forward", "op rms_norm_forward",
                                                    "op layer_norm_backward", "op rms_norm_backward"])

        def test_eager_forward_and_backward(self):
            from unittest import mock
            for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                ln = kind == _capi.LAYERNORM
                name = "_LayerNormFunction" if ln else "_RMSNormFunction"
                for rnd in ("first", "planned"):
                    with self.subTest(kind=kind, call=rnd), \
                            mock.patch.object(_functional, "_takes", wraps=_functional._takes) as takes:
                        del torch.calls[:], torch.applied[:]
                        x, w, b = self.module_args(kind)
                        y = self.norm(kind, x, w, b)
                        self.assertEqual(self.kinds(), ["C apply"], "autograd's C entry point, no dispatcher")
                        self.assertEqual(takes.call_count, int(rnd == "first"), "a planned call skips the checks")
                        self.assertEqual((y.shape, y.dtype), ((37, 256), torch.bfloat16))
                        cls, ctx = torch.applied[-1]
                        self.assertEqual(cls.__name__, name)
                        self.assertTrue(ctx.packed)
                        stats = ctx.saved_tensors[-1]
                        self.assertEqual(stats.shape, (2, 37, 1) if ln else (37, 1))
                        self.assertEqual(ctx.saved_tensors[:2], (x, w))
                        self.assertIs(ctx.plan, _launch._plans[_launch_forward.forward_key(kind, x, w, b, 1)])
                        grads = cls.backward(ctx, tensor((37, 256)))
                        self.assertEqual(len(grads), 6 if ln else 5)
                        self.assertEqual(self.kinds(), ["C apply"], "the backward calls _launch directly too")
                        a = rec.calls[-1][2]
                        self.assertEqual((a["mean"], a["rstd"]), (stats.data_ptr(), stats.data_ptr() + 4 * 37) if ln
                                         else (None, stats.data_ptr()))
                        self.assertEqual(rec.calls[-1][0][0], "byref" if rnd == "first" else "address")
                        self.assertEqual((grads[0].shape, grads[2].shape), ((37, 256), (256,)))

        def test_traced_calls_take_function_apply_and_the_ops(self):
            for switch, value in (("compiling", True), ("dispatch_modes", 1), ("jit_tracing", True)):
                for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                    with self.subTest(switch=switch, kind=kind):
                        self.setUp()
                        x, w, b = self.module_args(kind)
                        self.norm(kind, x, w, b)  # eager: leaves a plan, which a traced call must not take
                        del torch.calls[:]
                        setattr(torch.state, switch, value)
                        self.norm(kind, x, w, b)
                        cls, ctx = torch.applied[-1]
                        self.assertFalse(ctx.packed)
                        cls.backward(ctx, tensor((37, 256)))
                        op = "layer_norm" if kind == _capi.LAYERNORM else "rms_norm"
                        self.assertEqual(self.kinds(), ["Function.apply", "C apply", "op %s_forward" % op,
                                                        "op %s_backward" % op])

        def test_backward_traced_after_an_eager_forward_reads_the_packed_statistics(self):
            x, w, b = self.module_args(_capi.LAYERNORM)
            self.norm(_capi.LAYERNORM, x, w, b)
            cls, ctx = torch.applied[-1]
            stats = ctx.saved_tensors[-1]
            torch.state.dispatch_modes = 1  # compiled autograd tracing the backward, say
            cls.backward(ctx, tensor((37, 256)))
            op = torch.calls[-1]
            self.assertEqual(op[:2], ("op", "layer_norm_backward"))
            mean, rstd = op[2][4:6]
            self.assertEqual((mean.shape, rstd.shape), ((37, 1), (37, 1)))
            self.assertEqual((mean.data_ptr(), rstd.data_ptr()), (stats.data_ptr(), stats.data_ptr() + 4 * 37))

        def test_nothing_to_differentiate_runs_the_forward_alone(self):
            for case in ("no input requires grad", "grad mode off", "forward AD"):
                with self.subTest(case=case):
                    self.setUp()
                    x, w, b = self.module_args(_capi.LAYERNORM, grad=case == "grad mode off")
                    if case != "grad mode off":
                        w = tensor((256,), torch.float32)
                        b = tensor((256,), torch.float32)
                    torch.state.grad = case != "grad mode off"
                    torch.autograd.forward_ad._current_level = 0 if case == "forward AD" else -1
                    for _ in range(2):  # the general path, then the planned one
                        y = self.norm(_capi.LAYERNORM, x, w, b)
                        self.assertEqual((y.shape, y.dtype), ((37, 256), torch.bfloat16))
                    # Forward AD needs the Function (which has no jvp, so dual tensors raise there).
                    self.assertEqual(self.kinds(), ["C apply"] * 2 if case == "forward AD" else [])
                    self.assertEqual([c[0] for c in rec.calls], [("forward", 0)] * 2)

        def test_autocast_casts_to_fp32_and_enters_no_context_when_eager(self):
            for traced in (False, True):
                with self.subTest(traced=traced):
                    self.setUp()
                    torch.state.autocast = True
                    torch.state.compiling = traced
                    x, w, b = self.module_args(_capi.LAYERNORM)
                    for _ in range(2):
                        self.norm(_capi.LAYERNORM, x, w, b)
                    p = _capi.Problem.from_buffer_copy(rec.calls[-1][1])
                    self.assertEqual((p.x_dtype, p.weight_dtype), (_capi.F32, _capi.F32))
                    want = ["C apply"] if not traced else ["autocast", "Function.apply", "C apply",
                                                           "op layer_norm_forward"]
                    self.assertEqual(self.kinds(), want * 2)

        def test_torch_runs_where_normjit_cannot(self):
            x, w, b = self.module_args(_capi.LAYERNORM)
            self.norm(_capi.LAYERNORM, x, w, b)  # a plan for these shapes
            del torch.calls[:]
            cpu = tensor((37, 256), device=-1)
            f64 = tensor((37, 256), torch.float64)
            self.norm(_capi.LAYERNORM, cpu, None, None)
            self.norm(_capi.RMSNORM, f64, None, None)
            self.norm(_capi.RMSNORM, x, tensor((256,), torch.float16), None)  # neither fp32 nor x's dtype
            self.norm(_capi.LAYERNORM, x, w, tensor((256,), torch.bfloat16))  # weight and bias differ
            self.assertEqual(self.kinds(), ["F"] * 4)

        def test_errors_are_the_same_with_and_without_a_plan(self):
            x, w, b = self.module_args(_capi.LAYERNORM)
            for rnd in ("first", "planned"):
                with self.subTest(call=rnd):
                    with self.assertRaisesRegex(ValueError, r"normalized_shape=\[255\] for an input of shape "
                                                            r"\[37, 256\]"):
                        self.norm(_capi.LAYERNORM, x, w, b, normalized_shape=(255,))
                    with self.assertRaisesRegex(TypeError, "layer_norm_forward got eps = 'a'"):
                        self.norm(_capi.LAYERNORM, x, w, b, eps="a")
                    with self.assertRaisesRegex(TypeError, "rms_norm_forward got eps = 'a'"):
                        self.norm(_capi.RMSNORM, x, w, None, eps="a")
                    self.norm(_capi.LAYERNORM, x, w, b)
                    self.norm(_capi.RMSNORM, x, w, None)

        def test_padded_input_of_a_planned_shape_takes_the_checks(self):
            from unittest import mock
            x, w, b = self.module_args(_capi.RMSNORM, n=1000)
            self.norm(_capi.RMSNORM, x, w, b)
            padded = torch.Tensor((37, 1024), torch.bfloat16)[:, :1000]
            padded.requires_grad = True
            with mock.patch.object(_functional, "_takes", wraps=_functional._takes) as takes:
                self.norm(_capi.RMSNORM, padded, w, b)
            self.assertEqual(takes.call_count, 1)
            self.assertEqual(rec.calls[-1][2]["x_stride"], 1024)
            cls, ctx = torch.applied[-1]
            cls.backward(ctx, tensor((37, 1000)))
            self.assertEqual(rec.calls[-1][2]["x_stride"], 1024, "the backward reads the padded rows too")

    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(Scenarios),
                                loader.loadTestsFromTestCase(ForwardScenarios),
                                loader.loadTestsFromTestCase(DispatchScenarios)])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)


if __name__ == "__main__" and "--child" in sys.argv:
    child_main()
elif __name__ == "__main__":
    unittest.main()
