"""normjit.torch._launch's host-side logic without torch or a GPU: the general path, the plans it
leaves, the fast path that uses them, and the workspace kept per (device, stream); and
_launch_forward's, the forward's, on the same helpers.

The scenarios run in a child process whose PYTHONPATH puts python/tests/fake_torch first (a
stand-in torch: shapes, strides, dtypes and data pointers over host buffers), with the C entry
points and the CUDA-context calls replaced by recorders: each recorded call keeps the nj_problem
and nj_backward_args (or nj_forward_args) bytes the library would have read. So the fast path is
checked byte for byte against the general path, which the GPU tests check against float64
references; and the forward's fused option keywords (ForwardFusedScenarios) down to the
nj_forward_args fields and nj_problem flags they set. Part of scripts/test.sh's python stage; the real thing runs in test_torch_gpu.py on a
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

    # ---- the forward's fused options (keywords of layer_norm_forward / rms_norm_forward) --------

    FUSED_FORWARD_FIELDS = [name for name, _ in _capi.ForwardArgs._fields_[10:]]

    def fused_forward(kind, shape=(37, 256), dtype=torch.bfloat16, weight=True, bias=True, w_dtype=torch.float32,
                      x=None, nd=1, eps=1e-5, **options):
        """One public forward call with option keywords: (result, the recorded args with tensor addresses
        as names, the recorded nj_problem). Inputs are named x, w, b and by their keyword (weight1 and
        bias1 as w1, b1); outputs y, mean, rstd, h, mask, y1 (h only when it is not x)."""
        x = tensor(shape, dtype) if x is None else x
        n_shape = tuple(x.shape[x.dim() - nd:])
        w = tensor(n_shape, w_dtype) if weight else None
        b = tensor(n_shape, w_dtype) if bias and kind == _capi.LAYERNORM else None
        if kind == _capi.LAYERNORM:
            out = _ops.layer_norm_forward(x, w, b, eps, nd, **options)
        else:
            out = _ops.rms_norm_forward(x, w, eps, nd, **options)
        inputs = [("x", x), ("w", w), ("b", b)] + [({"weight1": "w1", "bias1": "b1"}.get(k, k), v)
                                                   for k, v in options.items() if isinstance(v, torch.Tensor)]
        names = {t.data_ptr(): name for name, t in inputs if t is not None and t.numel()}
        ids = {id(t) for _, t in inputs}
        for name in out._fields:
            t = getattr(out, name)
            if t is not None and id(t) not in ids and t.numel():
                names[t.data_ptr()] = name
        record = rec.calls[-1]
        return out, fields(record, names), _capi.Problem.from_buffer_copy(record[1])

    def no_fused_fields(**expected):
        """The fused fields of nj_forward_args as a call without options leaves them, updated by expected."""
        want = {name: (0 if "stride" in name or name in ("dropout_seed", "dropout_offset") else
                       0.0 if name == "dropout_p" else None) for name in FUSED_FORWARD_FIELDS}
        want.update(expected)
        return want

    def fused_part(f):
        return {name: f[name] for name in FUSED_FORWARD_FIELDS}

    class ForwardFusedScenarios(unittest.TestCase):
        """The forward's option keywords through _ops' public functions to nj_forward_args and
        nj_problem: each keyword's fields and flags, dtypes and strides, the result's fields, the
        pairing with the backward's keywords, the ops when traced, and the errors raised before any
        launch."""

        def setUp(self):
            DispatchScenarios.setUp(self)

        def flags(self, p):
            return (p.residual, p.rowscale, p.dropout, p.gate, p.parallel, p.zero_centered_weight)

        def test_each_keyword_fills_its_fields_and_flags(self):
            L, R = _capi.LAYERNORM, _capi.RMSNORM
            rs = tensor((37,), torch.float32)
            cases = [
                # (kind, keywords, flags (residual, rowscale, dropout, gate, parallel, zero-centred), fused fields)
                ("residual", L, dict(residual=tensor((37, 256))), (1, 0, 0, 0, 0, 0),
                 dict(residual="residual", residual_stride=256, residual_out="h", residual_out_stride=256)),
                ("rowscale", R, dict(rowscale=rs), (0, 1, 0, 0, 0, 0),
                 dict(rowscale="rowscale", residual_out="h", residual_out_stride=256)),
                ("dropout_p", L, dict(dropout_p=0.25, dropout_seed=7, dropout_offset=9),
                 (0, 0, _capi.DROPOUT_BYTES, 0, 0, 0),
                 dict(dropout_p=0.25, dropout_seed=7, dropout_offset=9, residual_out="h", residual_out_stride=256)),
                ("mask bytes", R, dict(dropout_p=0.1, dropout_mask="bytes", dropout_seed=3),
                 (0, 0, _capi.DROPOUT_BYTES, 0, 0, 0),
                 dict(dropout_p=0.1, dropout_seed=3, dropout_mask="mask", dropout_mask_stride=256, residual_out="h",
                      residual_out_stride=256)),
                ("mask bits", L, dict(dropout_p=0.5, dropout_mask="bits", dropout_offset=2),
                 (0, 0, _capi.DROPOUT_BITS, 0, 0, 0),
                 dict(dropout_p=0.5, dropout_offset=2, dropout_mask="mask", dropout_mask_stride=32, residual_out="h",
                      residual_out_stride=256)),
                ("mask with p = 0", R, dict(dropout_mask="bits"), (0, 0, _capi.DROPOUT_BITS, 0, 0, 0),
                 dict(dropout_mask="mask", dropout_mask_stride=32, residual_out="h", residual_out_stride=256)),
                ("gate after", R, dict(z=tensor((37, 256)), gate="after_norm"), (0, 0, 0, _capi.GATE_AFTER_NORM, 0, 0),
                 dict(z="z", z_stride=256)),
                ("gate before", R, dict(z=tensor((37, 256)), gate="before_norm"),
                 (0, 0, 0, _capi.GATE_BEFORE_NORM, 0, 0), dict(z="z", z_stride=256)),
                ("parallel ln", L, dict(weight1=tensor((256,), torch.float32), bias1=tensor((256,), torch.float32)),
                 (0, 0, 0, 0, 1, 0), dict(weight1="w1", bias1="b1", y1="y1", y1_stride=256)),
                ("parallel rms", R, dict(weight1=tensor((256,), torch.float32)), (0, 0, 0, 0, 1, 0),
                 dict(weight1="w1", y1="y1", y1_stride=256)),
                ("zero-centred", L, dict(zero_centered_weight=True), (0, 0, 0, 0, 0, 1), dict()),
                ("y_dtype", R, dict(y_dtype=torch.float32), (0, 0, 0, 0, 0, 0), dict()),
            ]
            for label, kind, options, flags, want in cases:
                with self.subTest(label):
                    self.setUp()
                    out, f, p = fused_forward(kind, **options)
                    self.assertEqual([c[0] for c in rec.calls], [("forward", kind)], "one launch")
                    self.assertEqual(self.flags(p), flags)
                    self.assertEqual((p.kind, p.n, p.x_dtype, p.weight_dtype, p.has_weight, p.recompute_from_output),
                                     (kind, 256, _capi.BF16, _capi.F32, 1, 0))
                    self.assertEqual(p.dy_dtype, _capi.F32 if "y_dtype" in options else _capi.BF16, "y's dtype")
                    ln = kind == _capi.LAYERNORM
                    head = {name: f[name] for name in list(f)[:10]}
                    self.assertEqual(head, {"m": 37, "x": "x", "x_stride": 256, "weight": "w",
                                            "bias": "b" if ln else None, "y": "y", "y_stride": 256,
                                            "mean": "mean" if ln else None, "rstd": "rstd", "eps": 1e-5})
                    self.assertEqual(fused_part(f), no_fused_fields(**want))
                    self.assertIsInstance(out, _ops.LayerNormForwardResult if ln else _ops.RMSNormForwardResult)
                    y_dtype = options.get("y_dtype", torch.bfloat16)
                    self.assertEqual((out.y.shape, out.y.dtype), ((37, 256), y_dtype))
                    self.assertEqual((out.rstd.shape, out.rstd.dtype), ((37, 1), torch.float32))
                    if ln:
                        self.assertEqual((out.mean.shape, out.mean.dtype), ((37, 1), torch.float32))
                    if want.get("residual_out"):
                        self.assertEqual((out.h.shape, out.h.dtype, out.h.is_contiguous()),
                                         ((37, 256), torch.bfloat16, True))
                        self.assertIsNot(out.h, options.get("residual"))
                    else:
                        self.assertEqual(out.h.data_ptr(), rec.calls[-1][2]["x"], "h is x when nothing forms it")
                        self.assertEqual(f["residual_out"], None)
                    if want.get("dropout_mask"):
                        bits = options["dropout_mask"] == "bits"
                        self.assertEqual((out.mask.shape, out.mask.dtype), ((37, 32) if bits else (37, 256),
                                                                            torch.uint8))
                    else:
                        self.assertIsNone(out.mask)
                    if want.get("y1"):
                        self.assertEqual((out.y1.shape, out.y1.dtype), ((37, 256), y_dtype))
                    else:
                        self.assertIsNone(out.y1)

        def test_h_is_x_itself_when_nothing_forms_it(self):
            x = tensor((37, 256))
            for kind, options in ((_capi.RMSNORM, dict(z=tensor((37, 256)), gate="after_norm")),
                                  (_capi.LAYERNORM, dict(zero_centered_weight=True)),
                                  (_capi.LAYERNORM, dict(residual=None))):
                with self.subTest(options=sorted(options)):
                    out, _, _ = fused_forward(kind, x=x, **options)
                    self.assertIs(out.h, x)

        def test_every_option_together(self):
            x = tensor((4, 9, 33))
            res = tensor((4, 9, 33))
            rs = tensor((4, 9), torch.float32)
            w1, b1 = tensor((33,), torch.float32), tensor((33,), torch.float32)
            out, f, p = fused_forward(_capi.LAYERNORM, x=x, residual=res, rowscale=rs, dropout_p=0.3,
                                      dropout_mask="bits", dropout_seed=2 ** 64 - 1, dropout_offset=2 ** 63 + 5,
                                      weight1=w1, bias1=b1, zero_centered_weight=True, y_dtype=torch.float16)
            self.assertEqual(self.flags(p), (1, 1, _capi.DROPOUT_BITS, 0, 1, 1))
            self.assertEqual((p.n, p.x_dtype, p.dy_dtype), (33, _capi.BF16, _capi.F16))
            self.assertEqual(f["m"], 36)
            self.assertEqual(fused_part(f), no_fused_fields(
                residual="residual", residual_stride=33, residual_out="h", residual_out_stride=33, rowscale="rowscale",
                dropout_mask="mask", dropout_mask_stride=5, dropout_p=0.3, dropout_seed=2 ** 64 - 1,
                dropout_offset=2 ** 63 + 5, weight1="w1", bias1="b1", y1="y1", y1_stride=33))
            self.assertEqual((out.y.shape, out.y.dtype, out.y1.dtype), ((4, 9, 33), torch.float16, torch.float16))
            self.assertEqual((out.mean.shape, out.h.shape, out.mask.shape), ((4, 9, 1), (4, 9, 33), (4, 9, 5)))
            self.setUp()
            z = tensor((37, 1000))
            out, f, p = fused_forward(_capi.RMSNORM, shape=(37, 1000), residual=tensor((37, 1000)),
                                      rowscale=tensor((37, 1), torch.float32), dropout_p=0.125, dropout_mask="bytes",
                                      z=z, gate="before_norm", zero_centered_weight=True)
            self.assertEqual(self.flags(p), (1, 1, _capi.DROPOUT_BYTES, _capi.GATE_BEFORE_NORM, 0, 1))
            self.assertEqual(fused_part(f), no_fused_fields(
                residual="residual", residual_stride=1000, residual_out="h", residual_out_stride=1000,
                rowscale="rowscale", dropout_mask="mask", dropout_mask_stride=1000, dropout_p=0.125, z="z",
                z_stride=1000))

        def test_two_normalized_dims_and_a_bit_mask(self):
            x = tensor((5, 9, 4, 9))  # N = 36: ceil(36/8) = 5 bytes a row
            out, f, p = fused_forward(_capi.RMSNORM, x=x, nd=2, residual=tensor((5, 9, 4, 9)), dropout_p=0.5,
                                      dropout_mask="bits")
            self.assertEqual((p.n, f["m"], f["residual_stride"], f["dropout_mask_stride"]), (36, 45, 36, 5))
            self.assertEqual((out.rstd.shape, out.h.shape, out.mask.shape), ((5, 9, 1, 1), (5, 9, 4, 9), (5, 9, 5)))
            self.setUp()
            out, f, _ = fused_forward(_capi.RMSNORM, x=x, nd=2, dropout_mask="bytes")
            self.assertEqual((out.mask.shape, f["dropout_mask_stride"]), ((5, 9, 4, 9), 36))

        def test_strides_of_the_option_tensors(self):
            padded_res = torch.Tensor((37, 264), torch.bfloat16)[:, :256]    # row stride 264: read in place
            padded_z = torch.Tensor((37, 300), torch.bfloat16)[:, :256]
            _, f, _ = fused_forward(_capi.RMSNORM, residual=padded_res, z=padded_z, gate="after_norm")
            self.assertEqual((f["residual"], f["residual_stride"], f["z"], f["z_stride"], f["residual_out_stride"]),
                             ("residual", 264, "z", 300, 256))
            strided = torch.Tensor((37, 256), torch.bfloat16, strides=(512, 2))  # inner stride 2: copied
            _, f, _ = fused_forward(_capi.LAYERNORM, residual=strided)
            self.assertNotEqual(f["residual"], "residual")
            self.assertEqual(f["residual_stride"], 256)
            rs = torch.Tensor((37,), torch.bfloat16)  # another float dtype: converted to fp32
            _, f, _ = fused_forward(_capi.LAYERNORM, rowscale=rs)
            self.assertIsInstance(f["rowscale"], int)
            padded_x = torch.Tensor((37, 1024), torch.bfloat16)[:, :1000]
            out, f, _ = fused_forward(_capi.LAYERNORM, x=padded_x, residual=tensor((37, 1000)))
            self.assertEqual((f["x"], f["x_stride"], f["y_stride"], f["residual_out_stride"]), ("x", 1024, 1000, 1000))
            self.assertTrue(out.h.is_contiguous())
            w1 = torch.Tensor((256,), torch.float32, strides=(2,))  # a strided weight1: copied
            _, f, _ = fused_forward(_capi.RMSNORM, weight1=w1)
            self.assertIsInstance(f["weight1"], int)
            self.assertNotEqual(f["weight1"], w1.data_ptr())

        def test_parallel_without_parameters_and_explicit_parallel(self):
            out, f, p = fused_forward(_capi.LAYERNORM, weight=False, bias=False, parallel=True)
            self.assertEqual((p.parallel, p.has_weight, p.has_bias), (1, 0, 0))
            self.assertEqual(fused_part(f), no_fused_fields(y1="y1", y1_stride=256))
            self.setUp()
            _, f, p = fused_forward(_capi.LAYERNORM, bias=False, weight1=tensor((256,), torch.float32))
            self.assertEqual((p.parallel, p.has_bias, f["weight1"], f["bias1"]), (1, 0, "w1", None))

        def test_options_off_make_the_plain_call_in_the_named_tuple(self):
            from unittest import mock
            x = tensor((37, 256))
            w, b = tensor((256,), torch.float32), tensor((256,), torch.float32)
            plain = _ops.layer_norm_forward(x, w, b, 1e-5)
            self.assertIs(type(plain), tuple, "no keywords: the plain tuple, as before")

            def named(record, out):
                names = {t.data_ptr(): name for name, t in (("x", x), ("w", w), ("b", b), ("y", out[0]),
                                                            ("mean", out[1]), ("rstd", out[2]))}
                return record[1], fields(record, names)
            want = named(rec.calls[-1], plain)
            for options in (dict(residual=None), dict(dropout_p=0.0, dropout_seed=5, dropout_offset=6),
                            dict(y_dtype=torch.bfloat16), dict(parallel=False, zero_centered_weight=False),
                            dict(rowscale=None, dropout_mask=None, weight1=None, bias1=None)):
                with self.subTest(options=sorted(options)):
                    with mock.patch.object(_launch_forward, "_run", wraps=_launch_forward._run) as run:
                        out = _ops.layer_norm_forward(x, w, b, 1e-5, **options)
                    self.assertEqual(run.call_count, 1, "the option-free fast call")
                    self.assertEqual(named(rec.calls[-1], out), want, "the plain call's problem and args")
                    self.assertIsInstance(out, _ops.LayerNormForwardResult)
                    self.assertEqual((out.y.shape, out.mean.shape, out.rstd.shape), ((37, 256), (37, 1), (37, 1)))
                    self.assertIs(out.h, x)
                    self.assertEqual((out.mask, out.y1), (None, None))
                    y, mean, rstd = out[:3]
                    self.assertIs(y, out.y)
            out = _ops.rms_norm_forward(x, w, None, gate=None)
            self.assertIsInstance(out, _ops.RMSNormForwardResult)
            self.assertEqual(out._fields, ("y", "rstd", "h", "mask", "y1"))

        def test_fused_calls_leave_no_plan_and_the_fast_path_its_fused_fields_zero(self):
            from unittest import mock
            x = tensor((37, 256))
            w = tensor((256,), torch.float32)
            _ops.rms_norm_forward(x, w, 1e-5)
            plans = dict(_launch._plans)
            fused_forward(_capi.RMSNORM, residual=tensor((37, 256)), dropout_p=0.5, dropout_mask="bits",
                          dropout_seed=9, z=tensor((37, 256)), gate="before_norm")
            self.assertEqual(_launch._plans, plans, "fused calls leave no plan")
            with mock.patch.object(_launch_forward, "_run", wraps=_launch_forward._run) as run:
                _ops.rms_norm_forward(x, w, 1e-5)
                _ops.rms_norm_forward(tensor((37, 256)), w, 1e-5, residual=None)
            self.assertEqual(run.call_count, 2)
            for call in rec.calls[-2:]:
                self.assertFalse(any(call[2][name] for name in FUSED_FORWARD_FIELDS), "the fast call's fused fields")

        def test_seed_and_offset_reach_the_library_as_uint64_eager_and_traced(self):
            seeds = dict(dropout_seed=2 ** 64 - 1, dropout_offset=2 ** 63 + 5)
            for traced in (False, True):
                with self.subTest(traced=traced):
                    self.setUp()
                    torch.state.compiling = traced
                    _, f, _ = fused_forward(_capi.LAYERNORM, dropout_p=0.5, **seeds)
                    self.assertEqual((f["dropout_seed"], f["dropout_offset"]), (2 ** 64 - 1, 2 ** 63 + 5))
                    if traced:
                        op = torch.calls[-1]
                        self.assertEqual(op[:2], ("op", "layer_norm_forward_fused"))
                        self.assertEqual(op[2][9:11], (-1, -(2 ** 63) + 5), "int64 in the op's schema")

        def test_traced_calls_take_the_fused_ops(self):
            torch.state.compiling = True
            x = tensor((37, 256))
            z = tensor((37, 256))
            out, f, p = fused_forward(_capi.RMSNORM, x=x, z=z, gate="before_norm", dropout_p=0.25,
                                      dropout_mask="bits", residual=tensor((37, 256)), y_dtype=torch.float32)
            op = torch.calls[-1]
            self.assertEqual([c[:2] for c in torch.calls], [("op", "rms_norm_forward_fused")])
            # (x, weight, eps, nd, residual, rowscale, dropout, p, seed, offset, write_mask, z, gate, weight1,
            #  parallel, zero-centred, y dtype)
            self.assertEqual(op[2][5:], (None, _capi.DROPOUT_BITS, 0.25, 0, 0, True, z, _capi.GATE_BEFORE_NORM, None,
                                         False, False, _capi.F32))
            self.assertEqual((out.y.dtype, out.h.shape, out.mask.shape, out.y1), (torch.float32, (37, 256),
                                                                                   (37, 32), None))
            self.assertEqual(fused_part(f)["z"], "z")
            del torch.calls[:]
            out = _ops.layer_norm_forward(x, None, None, 1e-5, residual=None)  # every option off: the plain op
            self.assertEqual([c[:2] for c in torch.calls], [("op", "layer_norm_forward")])
            self.assertIs(out.h, x)
            del torch.calls[:]
            out = _ops.layer_norm_forward(x, None, None, 1e-5, parallel=True)
            self.assertEqual([c[:2] for c in torch.calls], [("op", "layer_norm_forward_fused")])
            self.assertEqual((out.h, out.mask, out.y1.shape), (x, None, (37, 256)))

        def test_fake_kernels_match_the_implementations(self):
            # The fake kernels (what torch.compile traces with) against the tensors the implementation
            # allocates, for each option set: count, shapes, dtypes, and the absent markers.
            x = tensor((3, 11, 40))
            w = tensor((40,), torch.float32)
            for kind, options in ((_capi.LAYERNORM, dict(residual=tensor((3, 11, 40)), dropout_p=0.5,
                                                         dropout_mask="bits", weight1=w, bias1=w)),
                                  (_capi.LAYERNORM, dict(rowscale=tensor((33,), torch.float32),
                                                         dropout_mask="bytes", y_dtype=torch.float32)),
                                  (_capi.RMSNORM, dict(z=tensor((3, 11, 40)), gate="after_norm")),
                                  (_capi.RMSNORM, dict(dropout_p=0.25, weight1=w, y_dtype=torch.float16))):
                with self.subTest(kind=kind, options=sorted(options)):
                    torch.state.compiling = True
                    del torch.calls[:]
                    if kind == _capi.LAYERNORM:
                        _ops.layer_norm_forward(x, w, w, 1e-5, **options)
                    else:
                        _ops.rms_norm_forward(x, w, 1e-5, **options)
                    op = torch.calls[-1]
                    fn = _ops.layer_norm_forward_fused_op if kind == _capi.LAYERNORM else _ops.rms_norm_forward_fused_op
                    real = fn.impl(*op[2])
                    fake = fn.fake(*op[2])
                    self.assertEqual([(t.shape, t.dtype) for t in fake], [(t.shape, t.dtype) for t in real])

        def test_the_backward_takes_h_and_the_mask_as_they_are(self):
            # The pairing: h is the backward's x, the mask its dropout_mask= (bytes) or dropout_mask_bits=
            # (bits), the statistics its mean/rstd; the forward's and the backward's nj_problem are one.
            for form in ("bytes", "bits"):
                for kind in (_capi.LAYERNORM, _capi.RMSNORM):
                    with self.subTest(form=form, kind=kind):
                        self.setUp()
                        x, dres = tensor((3, 5, 40)), tensor((3, 5, 40))
                        rs = tensor((15,), torch.float32)
                        w = tensor((40,), torch.float32)
                        b = tensor((40,), torch.float32) if kind == _capi.LAYERNORM else None
                        keywords = dict(residual=tensor((3, 5, 40)), rowscale=rs, dropout_p=0.25, dropout_mask=form,
                                        dropout_seed=11, dropout_offset=12)
                        mask_keyword = "dropout_mask" if form == "bytes" else "dropout_mask_bits"
                        back = dict(dresidual=dres, rowscale=rs, dropout_p=0.25, return_dresidual_in=True)
                        if kind == _capi.LAYERNORM:
                            out = _ops.layer_norm_forward(x, w, b, 1e-5, **keywords)
                            forward_problem = rec.calls[-1][1]
                            back[mask_keyword] = out.mask
                            _ops.layer_norm_backward(tensor((3, 5, 40)), out.h, w, b, out.mean, out.rstd, **back)
                        else:
                            out = _ops.rms_norm_forward(x, w, 1e-5, **keywords)
                            forward_problem = rec.calls[-1][1]
                            back[mask_keyword] = out.mask
                            _ops.rms_norm_backward(tensor((3, 5, 40)), out.h, w, out.rstd, **back)
                        a = rec.calls[-1][2]
                        self.assertEqual(rec.calls[-1][0], ("byref", kind))
                        self.assertEqual(rec.calls[-1][1], forward_problem, "one nj_problem for both")
                        self.assertEqual((a["x"], a["dropout_mask"], a["rstd"]),
                                         (out.h.data_ptr(), out.mask.data_ptr(), out.rstd.data_ptr()))
                        self.assertEqual(a["dropout_mask_stride"], 40 if form == "bytes" else 5)
                        if kind == _capi.LAYERNORM:
                            self.assertEqual(a["mean"], out.mean.data_ptr())
            # The gate and parallel norms: the same problem on both sides too.
            self.setUp()
            x, z, w = tensor((37, 256)), tensor((37, 256)), tensor((256,), torch.float32)
            out = _ops.rms_norm_forward(x, w, 1e-5, z=z, gate="before_norm")
            forward_problem = rec.calls[-1][1]
            _ops.rms_norm_backward(tensor((37, 256)), out.h, w, out.rstd, z=z, gate="before_norm")
            self.assertEqual(rec.calls[-1][1], forward_problem)
            out = _ops.layer_norm_forward(x, w, w, 1e-5, weight1=w, bias1=w)
            forward_problem = rec.calls[-1][1]
            _ops.layer_norm_backward(tensor((37, 256)), out.h, w, w, out.mean, out.rstd, dy1=tensor((37, 256)),
                                     weight1=w, bias1=w)
            self.assertEqual(rec.calls[-1][1], forward_problem)

        def test_errors_before_any_launch(self):
            L, R = _capi.LAYERNORM, _capi.RMSNORM

            def t(shape=(37, 256), dtype=torch.bfloat16, device=0):
                return tensor(shape, dtype, device)
            w32 = t((256,), torch.float32)
            cases = [
                (ValueError, "dropout_mask = 'byte' is not a mask form", L, dict(dropout_mask="byte")),
                (ValueError, "dropout_mask = True is not a mask form", L, dict(dropout_mask=True)),
                (ValueError, r"dropout_p = 1.0 is not in \[0, 1\)", L, dict(dropout_p=1.0)),
                (ValueError, r"dropout_p = -0.1 is not in \[0, 1\)", R, dict(dropout_p=-0.1)),
                (ValueError, r"dropout_p = nan is not in \[0, 1\)", R, dict(dropout_p=float("nan"))),
                (TypeError, "dropout_p = 'a' is not a number", R, dict(dropout_p="a")),
                (ValueError, r"dropout_seed = -1 is outside \[0, 2\^64\)", L, dict(dropout_p=0.5, dropout_seed=-1)),
                (ValueError, r"dropout_offset = 18446744073709551616 is outside", L,
                 dict(dropout_mask="bits", dropout_offset=2 ** 64)),
                (TypeError, "dropout_seed = 1.5 is not an integer", L, dict(dropout_p=0.5, dropout_seed=1.5)),
                (TypeError, "dropout_seed = True is not an integer", L, dict(dropout_p=0.5, dropout_seed=True)),
                (ValueError, "z is given but gate is None", R, dict(z=t())),
                (ValueError, "gate='after_norm' but z is None", R, dict(gate="after_norm")),
                (ValueError, "gate = 'after-norm' is not a gate", R, dict(z=t(), gate="after-norm")),
                (TypeError, r"layer_norm_forward\(\) got an unexpected keyword argument 'z'", L, dict(z=t())),
                (TypeError, r"rms_norm_forward\(\) got an unexpected keyword argument 'bias1'", R, dict(bias1=w32)),
                (TypeError, r"layer_norm_forward\(\) got an unexpected keyword argument 'residul'", L,
                 dict(residul=t())),
                (ValueError, "weight1 is given but parallel=False", L, dict(weight1=w32, parallel=False)),
                (ValueError, "parallel norms and a gate", R, dict(z=t(), gate="after_norm", weight1=w32)),
                (ValueError, "parallel norms and a gate", R, dict(z=t(), gate="before_norm", parallel=True)),
                (TypeError, "y_dtype = torch.float64", L, dict(y_dtype=torch.float64)),
                (TypeError, "y_dtype = 'float32'", L, dict(y_dtype="float32")),
                (TypeError, "residual is torch.float32 but x is torch.bfloat16", L,
                 dict(residual=t(dtype=torch.float32))),
                (ValueError, r"residual has shape \(37, 255\) but x has \(37, 256\)", L, dict(residual=t((37, 255)))),
                (ValueError, "residual is on cuda:1 but x is on cuda:0", R, dict(residual=t(device=1))),
                (ValueError, "rowscale has 36 values for 37 rows", L, dict(rowscale=t((36,), torch.float32))),
                (TypeError, "rowscale is torch.uint8", L, dict(rowscale=t((37,), torch.uint8))),
                (ValueError, "rowscale is on cuda:1", L, dict(rowscale=t((37,), torch.float32, 1))),
                (TypeError, "z is torch.float16 but x is torch.bfloat16", R,
                 dict(z=t(dtype=torch.float16), gate="after_norm")),
                (ValueError, "weight1 is None but weight is given", L, dict(parallel=True)),
                (ValueError, "bias1 is None but bias is given", L, dict(weight1=w32)),
                (TypeError, "bias1 is torch.bfloat16 but the weight is torch.float32", L,
                 dict(weight1=w32, bias1=t((256,)))),
                (ValueError, "weight1 has 255 elements", R, dict(weight1=t((255,), torch.float32))),
                (ValueError, "weight1 is on cuda:1", R, dict(weight1=t((256,), torch.float32, 1))),
            ]
            for traced in (False, True):
                for exc, message, kind, options in cases:
                    with self.subTest(message=message, traced=traced):
                        torch.state.compiling = traced
                        with self.assertRaisesRegex(exc, message):
                            fused_forward(kind, **options)
            # The parameters' own conditions.
            with self.assertRaisesRegex(ValueError, "zero_centered_weight=True but weight is None"):
                fused_forward(R, weight=False, zero_centered_weight=True)
            with self.assertRaisesRegex(ValueError, "weight1 is given but weight is None"):
                fused_forward(L, weight=False, bias=False, weight1=w32)
            with self.assertRaisesRegex(ValueError, "x is on cpu"):
                fused_forward(L, x=t(device=-1), residual=t(device=-1))
            self.assertEqual(rec.calls, [], "nothing reaches the library")

        def test_a_failed_status_raises(self):
            rec.status[:] = [_capi.INVALID_ARGUMENT]
            with self.assertRaises(_capi.NormjitError):
                fused_forward(_capi.LAYERNORM, residual=tensor((37, 256)))
            self.assertEqual(len(rec.calls), 1)

        def test_context_pushed_only_for_the_default_streams(self):
            for stream, pushed in ((0, [1]), (0x7F00, [])):
                with self.subTest(stream=stream):
                    self.setUp()
                    torch.current_stream[0] = stream
                    fused_forward(_capi.RMSNORM, x=tensor((4, 256), device=1), residual=tensor((4, 256), device=1),
                                  weight=False)
                    self.assertEqual((rec.pushes, rec.calls[-1][3]), (pushed, stream))

    loader = unittest.defaultTestLoader
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(Scenarios),
                                loader.loadTestsFromTestCase(ForwardScenarios),
                                loader.loadTestsFromTestCase(DispatchScenarios),
                                loader.loadTestsFromTestCase(ForwardFusedScenarios)])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)


if __name__ == "__main__" and "--child" in sys.argv:
    child_main()
elif __name__ == "__main__":
    unittest.main()
