"""normjit.torch's custom ops, backward and forward, as torch.compile sees them, without a GPU:
under FakeTensorMode (fake CUDA tensors need no device) the public functions go through the ops'
fake kernels, so the results' count, order and shapes are those a compiled graph is traced with;
make_fx shows which op a call becomes and with what arguments. Skips without torch; the real
kernels are checked against float64 references in test_torch_gpu.py.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

try:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    SKIP = None
except ImportError as e:
    torch = None
    SKIP = "PyTorch is not installed (%s)" % e

if torch is not None:
    import normjit.torch as njt

M, N = 37, 4096


def shapes(out):
    return [None if t is None else tuple(t.shape) for t in out]


@unittest.skipIf(SKIP, SKIP)
class FakeKernelTest(unittest.TestCase):
    def setUp(self):
        self.mode = FakeTensorMode()
        with self.mode:
            self.x = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            self.w = torch.empty(N, device="cuda")
            self.stat = torch.empty(M, 1, device="cuda")

    def test_gate_appends_dz(self):
        x, w, s = self.x, self.w, self.stat
        with self.mode:
            for gate in ("after_norm", "before_norm"):
                out = njt.rms_norm_backward(x, x, w, s, z=x, gate=gate)
                self.assertEqual(shapes(out), [(M, N), (N,), (M, N)])
                self.assertEqual(out[2].dtype, x.dtype)
            rs = torch.empty(M, device="cuda")
            out = njt.rms_norm_backward(x, x, None, s, z=x, gate="before_norm", rowscale=rs,
                                        return_dresidual_in=True)
            self.assertEqual(shapes(out), [(M, N), None, (M, N), (M, N)])  # dx, dweight, dz, dh

    def test_parallel_appends_the_second_norms_gradients(self):
        x, w, s = self.x, self.w, self.stat
        with self.mode:
            out = njt.rms_norm_backward(x, x, w, s, dy1=x, weight1=w)
            self.assertEqual(shapes(out), [(M, N), (N,), (N,)])
            out = njt.layer_norm_backward(x, x, w, w, s, s, dy1=x, weight1=w, bias1=w, return_dresidual_in=True)
            self.assertEqual(shapes(out), [(M, N), (N,), (N,), (N,), (N,), (M, N)])
            out = njt.layer_norm_backward(x, x, None, w, s, s, dy1=x, bias1=w)
            self.assertEqual(shapes(out), [(M, N), None, (N,), None, (N,)])
            dres = torch.empty_like(x)
            out = njt.rms_norm_backward(x, x, w, s, dy1=x, weight1=w, dresidual=dres, inplace_residual=True)
            self.assertIs(out[0], dres)
            self.assertEqual(shapes(out), [(M, N), (N,), (N,)])

    def test_recompute_from_the_output_needs_no_x(self):
        x, w, s = self.x, self.w, self.stat
        with self.mode:
            out = njt.layer_norm_backward(x, None, w, w, None, s, y=x)
            self.assertEqual(shapes(out), [(M, N), (N,), (N,)])
            self.assertEqual(out[0].dtype, x.dtype)
            out = njt.rms_norm_backward(x, None, None, s, y=x, return_dresidual_in=True)
            self.assertEqual(shapes(out), [(M, N), None, (M, N)])
            dres = torch.empty_like(x)
            out = njt.rms_norm_backward(x, x, w, s, y=x, dresidual=dres, inplace_residual=True)
            self.assertIs(out[0], dres)
            self.assertEqual(shapes(out), [(M, N), (N,)])

    def test_python_checks_before_the_op(self):
        x, w, s = self.x, self.w, self.stat
        with self.mode:
            with self.assertRaisesRegex(ValueError, "z is given but gate is None"):
                njt.rms_norm_backward(x, x, w, s, z=x)
            with self.assertRaisesRegex(ValueError, "gate='after_norm' but z is None"):
                njt.rms_norm_backward(x, x, w, s, gate="after_norm")
            with self.assertRaisesRegex(ValueError, "gate = 'after-norm' is not a gate"):
                njt.rms_norm_backward(x, x, w, s, z=x, gate="after-norm")
            with self.assertRaisesRegex(ValueError, "weight1 is given but dy1 is None"):
                njt.rms_norm_backward(x, x, w, s, weight1=w)
            with self.assertRaisesRegex(ValueError, "bias1 is given but dy1 is None"):
                njt.layer_norm_backward(x, x, w, w, s, s, bias1=w)
            with self.assertRaises(TypeError):  # the C API's gated norm is RMSNorm only
                njt.layer_norm_backward(x, x, w, w, s, s, z=x, gate="after_norm")
            with self.assertRaisesRegex(ValueError, "x is None; pass x, or the forward's output as y="):
                njt.rms_norm_backward(x, None, w, s)

    def test_traced_calls_are_the_fused_ops_with_the_options(self):
        def gated(dy, x, z, w, rstd):
            return njt.rms_norm_backward(dy, x, w, rstd, z=z, gate="before_norm")

        def parallel(dy, x, dy1, w, w1, rstd, mean):
            return njt.layer_norm_backward(dy, x, w, w, mean, rstd, dy1=dy1, weight1=w1, bias1=w1)
        x, w, s = self.x, self.w, self.stat
        code = make_fx(gated, tracing_mode="fake")(x, x, x, w, s).code
        self.assertIn("torch.ops.normjit.rms_norm_backward_fused.default(", code)
        self.assertIn(", z_1, 2, None, None, None)", code)  # z, gate = NJ_GATE_BEFORE_NORM, no dy1/weight1/y
        code = make_fx(parallel, tracing_mode="fake")(x, x, x, w, w, s, s).code
        self.assertIn("torch.ops.normjit.layer_norm_backward_fused.default(", code)

        def recompute(dy, y, w, rstd):
            return njt.layer_norm_backward(dy, None, w, w, None, rstd, y=y)
        # y a tensor of its own: traced with x twice, both arguments resolve to the last proxy.
        code = make_fx(recompute, tracing_mode="fake")(x, x.clone(), w, s).code
        self.assertIn("torch.ops.normjit.layer_norm_backward_fused.default(dy_1, None,", code)
        self.assertIn(", y_1)", code)  # y, last


@unittest.skipIf(SKIP, SKIP)
class ForwardFakeKernelTest(unittest.TestCase):
    """The forward ops: their fake kernels' results, and the functional form traced through autograd
    (normjit's forward op feeding normjit's backward op)."""

    def setUp(self):
        self.mode = FakeTensorMode()
        with self.mode:
            self.x = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            self.w = torch.empty(N, device="cuda")
            self.b = torch.empty(N, device="cuda")  # its own tensor: make_fx names each argument apart

    def test_results_are_y_and_fp32_statistics_per_row(self):
        x, w = self.x, self.w
        with self.mode:
            y, mean, rstd = njt.layer_norm_forward(x, w, w, 1e-5)
            self.assertEqual(shapes((y, mean, rstd)), [(M, N), (M, 1), (M, 1)])
            self.assertEqual((y.dtype, mean.dtype, rstd.dtype), (torch.bfloat16, torch.float32, torch.float32))
            x3 = torch.empty(3, 5, N, device="cuda", dtype=torch.float16)
            out = njt.rms_norm_forward(x3, None, None)
            self.assertEqual(shapes(out), [(3, 5, N), (3, 5, 1)])
            x4 = torch.empty(5, 9, 4, 96, device="cuda")
            out = njt.layer_norm_forward(x4, None, None, 1e-5, normalized_ndim=2)
            self.assertEqual(shapes(out), [(5, 9, 4, 96), (5, 9, 1, 1), (5, 9, 1, 1)])
            # What the forward returns, the backward takes.
            dx, dw, db = njt.layer_norm_backward(y, x, w, w, mean, rstd)
            self.assertEqual(shapes((dx, dw, db)), [(M, N), (N,), (N,)])

    def test_argument_errors(self):
        x, w = self.x, self.w
        with self.mode:
            with self.assertRaisesRegex(TypeError, "layer_norm_forward got eps = None"):
                njt.layer_norm_forward(x, w, w, None)
            with self.assertRaisesRegex(ValueError, "normalized_ndim = 3 for a 2-D x"):
                njt.rms_norm_forward(x, w, 1e-6, normalized_ndim=3)
            # A tensor of its own, not x[:, 1:]: slicing a fake CUDA tensor asks the driver for the
            # device in some torch builds (2.5.1's, without a usable driver: a RuntimeError).
            narrower = torch.empty(M, N - 1, device="cuda", dtype=torch.bfloat16)
            with self.assertRaisesRegex(ValueError, r"normalized_shape=\[4096\] for an input of shape \[37, 4095\]"):
                njt.layer_norm(narrower, (N,))

    def test_traced_calls_are_the_forward_ops(self):
        x, w = self.x, self.w
        code = make_fx(lambda x, w, b: njt.layer_norm_forward(x, w, b, 1e-5), tracing_mode="fake")(x, w, self.b).code
        self.assertIn("torch.ops.normjit.layer_norm_forward.default(x_1, w_1, b_1, 1e-05, 1)", code)
        code = make_fx(lambda x, w: njt.rms_norm_forward(x, w, None), tracing_mode="fake")(x, w).code
        self.assertIn("torch.ops.normjit.rms_norm_forward.default(x_1, w_1, %r, 1)" % torch.finfo(torch.float32).eps,
                      code)

    def test_fused_options_results(self):
        # The forward's option keywords: the named results of the fused ops' fake kernels, and what the
        # forward returns the backward takes (h as x, the mask as dropout_mask= / dropout_mask_bits=).
        x, w = self.x, self.w
        with self.mode:
            res = torch.empty_like(x)
            rs = torch.empty(M, device="cuda")
            out = njt.layer_norm_forward(x, w, w, 1e-5, residual=res, rowscale=rs, dropout_p=0.1, dropout_mask="bits",
                                         weight1=w, bias1=w, y_dtype=torch.float32)
            self.assertIsInstance(out, njt.LayerNormForwardResult)
            self.assertEqual(shapes(out), [(M, N), (M, 1), (M, 1), (M, N), (M, N // 8), (M, N)])
            self.assertEqual([t.dtype for t in out], [torch.float32, torch.float32, torch.float32, torch.bfloat16,
                                                      torch.uint8, torch.float32])
            dx, dw, db, dh = njt.layer_norm_backward(out.y.bfloat16(), out.h, w, w, out.mean, out.rstd, dresidual=res,
                                                     rowscale=rs, dropout_mask_bits=out.mask, dropout_p=0.1,
                                                     return_dresidual_in=True)
            self.assertEqual(shapes((dx, dw, db, dh)), [(M, N), (N,), (N,), (M, N)])
            out = njt.rms_norm_forward(x, w, None, z=x, gate="before_norm", dropout_p=0.5)
            self.assertIsInstance(out, njt.RMSNormForwardResult)
            self.assertEqual(shapes(out), [(M, N), (M, 1), (M, N), None, None])  # h formed by dropout; no mask
            out = njt.rms_norm_forward(x, w, None, residual=res, dropout_mask="bytes")
            self.assertEqual((out.mask.shape, out.mask.dtype), ((M, N), torch.uint8))
            dx, dw = njt.rms_norm_backward(x, out.h, w, out.rstd, dropout_mask=out.mask)
            self.assertEqual(shapes((dx, dw)), [(M, N), (N,)])
            out = njt.rms_norm_forward(x, w, None, z=x, gate="after_norm")
            self.assertIs(out.h, x)  # nothing forms h: x itself
            out = njt.layer_norm_forward(x, w, w, 1e-5, residual=None)  # every option off: the plain op
            self.assertEqual(shapes(out), [(M, N), (M, 1), (M, 1), (M, N), None, None])
            x4 = torch.empty(5, 9, 4, 9, device="cuda")
            out = njt.rms_norm_forward(x4, None, None, normalized_ndim=2, dropout_p=0.5, dropout_mask="bits")
            self.assertEqual(shapes(out), [(5, 9, 4, 9), (5, 9, 1, 1), (5, 9, 4, 9), (5, 9, 5), None])

    def test_fused_forward_argument_errors(self):
        x, w = self.x, self.w
        with self.mode:
            with self.assertRaisesRegex(ValueError, "dropout_mask = 'byte' is not a mask form"):
                njt.layer_norm_forward(x, w, w, 1e-5, dropout_mask="byte")
            with self.assertRaisesRegex(ValueError, r"dropout_p = 1.0 is not in \[0, 1\)"):
                njt.rms_norm_forward(x, w, None, dropout_p=1.0)
            with self.assertRaisesRegex(TypeError, r"layer_norm_forward\(\) got an unexpected keyword argument 'z'"):
                njt.layer_norm_forward(x, w, w, 1e-5, z=x, gate="after_norm")
            with self.assertRaisesRegex(ValueError, "parallel norms and a gate"):
                njt.rms_norm_forward(x, w, None, z=x, gate="after_norm", weight1=w)
            with self.assertRaisesRegex(TypeError, "y_dtype = torch.float64"):
                njt.rms_norm_forward(x, w, None, residual=x, y_dtype=torch.float64)
            # (The tensors' shapes, dtypes and devices are checked where the op runs, as for the
            # backward's options: test_launch_fake_torch.py.)

    def test_traced_fused_forward_is_the_fused_op(self):
        def block(x, res, w):
            return njt.rms_norm_forward(x, w, 1e-6, residual=res, dropout_p=0.25, dropout_mask="bits",
                                        dropout_seed=2 ** 64 - 1, dropout_offset=5)
        code = make_fx(block, tracing_mode="fake")(self.x, self.x.clone(), self.w).code
        self.assertIn("torch.ops.normjit.rms_norm_forward_fused.default(", code)
        self.assertIn("0.25, -1, 5, True", code)  # p, the seed's int64 bits, the offset, write the mask

        def parallel(x, w, b):
            out = njt.layer_norm_forward(x, w, b, 1e-5, weight1=w, bias1=b)
            return out.y, out.y1
        code = make_fx(parallel, tracing_mode="fake")(self.x, self.w, self.b).code
        self.assertIn("torch.ops.normjit.layer_norm_forward_fused.default(", code)

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(),
                         "autograd's engine asks the CUDA device of the fake tensors for its context")
    def test_autograd_feeds_the_forward_s_statistics_to_the_backward(self):
        def step(x, w, b, dy):
            y = njt.layer_norm(x, (N,), w, b)
            return torch.autograd.grad(y, (x, w, b), dy)

        def rms_step(x, w, dy):
            y = njt.rms_norm(x, (N,), w)
            return torch.autograd.grad(y, (x, w), dy)
        with self.mode:
            x = self.x.clone().requires_grad_()
            w = self.w.clone().requires_grad_()
            b = self.b.clone().requires_grad_()
        for fn, args, ops in ((step, (x, w, b, self.x), ("layer_norm_forward", "layer_norm_backward")),
                              (rms_step, (x, w, self.x), ("rms_norm_forward", "rms_norm_backward"))):
            graph = make_fx(fn, tracing_mode="fake")(*args).graph
            nodes = {op: [n for n in graph.nodes if n.op == "call_function" and op in str(n.target)] for op in ops}
            self.assertEqual([len(v) for v in nodes.values()], [1, 1], "one forward op and one backward op")
            forward, backward = nodes[ops[0]][0], nodes[ops[1]][0]
            # The backward's statistics (its last two tensor arguments before normalized_ndim) are the
            # forward's own outputs, taken as they are.
            stats = backward.args[-3:-1] if ops[0].startswith("layer") else backward.args[-2:-1]
            for arg in stats:
                while "detach" in str(arg.target) or "alias" in str(arg.target):  # views of it are fine too
                    arg = arg.args[0]
                self.assertIs(arg.args[0], forward, "%s reads %s, not the forward's output" % (ops[1], arg))


@unittest.skipIf(SKIP, SKIP)
class EagerDispatchTest(unittest.TestCase):
    """Which way layer_norm/rms_norm go with the real torch, no GPU needed: traced (fake tensors,
    make_fx) through Function.apply and the ops; eager through autograd's C entry point with
    normjit's implementation called directly (stubbed here: CPU tensors stand in for CUDA ones, and
    the stub's results are checked to flow through autograd as the kernels' would)."""

    def test_traced_forward_is_the_op(self):
        mode = FakeTensorMode()
        with mode:
            x = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            w = torch.empty(N, device="cuda")
            b = torch.empty(N, device="cuda")
        code = make_fx(lambda x, w, b: njt.layer_norm(x, (N,), w, b), tracing_mode="fake")(x, w, b).code
        self.assertIn("torch.ops.normjit.layer_norm_forward.default(x_1, w_1, b_1, 1e-05, 1)", code)
        code = make_fx(lambda x, w: njt.rms_norm(x, (N,), w), tracing_mode="fake")(x, w).code
        self.assertIn("torch.ops.normjit.rms_norm_forward.default(x_1, w_1, ", code)

    # autograd's Function.apply asks for the current stream of a CUDA input's device, fake or
    # not: a CUDA build of torch without a usable driver aborts the process there (c10 terminates
    # in getCurrentCUDAStream), so this half needs the driver.
    @unittest.skipUnless(torch is not None and torch.cuda.is_available(),
                         "autograd on fake CUDA tensors needs a usable CUDA driver (it asks for the stream)")
    def test_fake_forward_with_grad_takes_the_function(self):
        mode = FakeTensorMode()
        with mode:
            x = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            w = torch.empty(N, device="cuda")
            b = torch.empty(N, device="cuda")
            xg = x.clone().requires_grad_()
            y = njt.layer_norm(xg, (N,), w, b)
        self.assertIn("LayerNormFunction", type(y.grad_fn).__name__)

    def test_plain_eager_sees_fake_tensors_and_make_fx(self):
        from normjit.torch import _ops
        x = torch.empty(4, 8)
        self.assertTrue(_ops._plain_eager(x, torch.nn.Parameter(x), None))
        with FakeTensorMode():
            self.assertFalse(_ops._plain_eager(x))
        seen = []
        make_fx(lambda t: seen.append(_ops._plain_eager(t)) or t + 1)(x)
        self.assertEqual(seen, [False])

    def test_eager_function_runs_through_autograds_c_entry_point(self):
        from unittest import mock
        from normjit import _capi
        from normjit.torch import _functional, _launch, _launch_forward
        self.assertIsNot(_functional._layer_norm_apply, _functional._LayerNormFunction.apply,
                         "autograd's C entry point was not found in this torch")
        calls = []

        def forward(kind, x, weight, bias, eps, nd, packed=False, plan=None):
            calls.append(("forward", kind, packed, eps))
            stats = torch.full((2, 4, 1) if kind == _capi.LAYERNORM else (4, 1), 7.0)
            return x.detach() * 2, stats, "the plan"

        def backward_packed(plan, kind, dy, x, weight, bias, stats, nd):
            calls.append(("backward", kind, plan, stats.shape, nd))
            return dy * 3, torch.full_like(weight, 5), None if bias is None else torch.full_like(bias, 6)

        def no_python_apply(*args):
            raise AssertionError("an eager call went through autograd.Function.apply")
        for kind, fn in ((_capi.LAYERNORM, _functional._layer_norm_eager),
                         (_capi.RMSNORM, _functional._rms_norm_eager)):
            with self.subTest(kind=kind):
                del calls[:]
                x = torch.randn(4, 8, requires_grad=True)
                w = torch.nn.Parameter(torch.randn(8))
                b = torch.nn.Parameter(torch.randn(8)) if kind == _capi.LAYERNORM else None
                cls = _functional._LayerNormFunction if kind == _capi.LAYERNORM else _functional._RMSNormFunction
                with mock.patch.object(_launch_forward, "forward", forward), \
                        mock.patch.object(_launch, "backward_packed", backward_packed), \
                        mock.patch.object(cls, "apply", no_python_apply):
                    args = (x, (8,), w, b, 1e-5, False) if b is not None else (x, (8,), w, 1e-5, False)
                    y = fn(*args)
                    self.assertIn(cls.__name__, type(y.grad_fn).__name__)
                    self.assertTrue(torch.equal(y, x.detach() * 2))
                    y.backward(torch.ones_like(y))
                self.assertEqual(calls, [("forward", kind, True, 1e-5),
                                         ("backward", kind, "the plan", (2, 4, 1) if b is not None else (4, 1), 1)])
                self.assertTrue(torch.equal(x.grad, torch.full_like(x, 3)))
                self.assertTrue(torch.equal(w.grad, torch.full_like(w, 5)))
                if b is not None:
                    self.assertTrue(torch.equal(b.grad, torch.full_like(b, 6)))
                with torch.no_grad(), mock.patch.object(_launch_forward, "forward", forward), \
                        mock.patch.object(cls, "apply", no_python_apply):
                    del calls[:]
                    y = fn(*args)
                    self.assertIsNone(y.grad_fn, "nothing to differentiate: the forward alone")
                    self.assertEqual(calls, [("forward", kind, True, 1e-5)])


@unittest.skipIf(SKIP, SKIP)
class ModuleParametersTest(unittest.TestCase):
    """The modules' forward reads weight and bias from _parameters directly (no
    nn.Module.__getattr__) only where that is what attribute lookup would give: the parameters
    torch.nn.utils.parametrize, weight_norm or a subclass's property put in their place are
    what the norm gets. On the CPU the modules run torch's own norm, so each case is checked
    against torch's module (or function) with the same parameters."""

    def check(self, ours, theirs, x):
        torch.testing.assert_close(ours(x), theirs(x), rtol=0, atol=0)

    def pair(self, kind, **kw):
        torch.manual_seed(0)
        theirs = (torch.nn.LayerNorm if kind == "ln" else torch.nn.RMSNorm)(8, **kw)
        with torch.no_grad():
            for p in theirs.parameters():
                p.copy_(torch.randn_like(p))
        ours = (njt.LayerNorm if kind == "ln" else njt.RMSNorm)(8, **kw)
        ours.load_state_dict(theirs.state_dict())
        return ours, theirs

    def test_plain_and_absent_parameters(self):
        x = torch.randn(3, 8)
        for kind, kw in (("ln", {}), ("ln", {"bias": False}), ("ln", {"elementwise_affine": False}),
                         ("rms", {}), ("rms", {"elementwise_affine": False})):
            with self.subTest(kind=kind, **kw):
                self.check(*self.pair(kind, **kw), x)

    def test_parametrized_weight(self):
        from torch.nn.utils import parametrize

        class Double(torch.nn.Module):
            def forward(self, w):
                return 2 * w
        x = torch.randn(3, 8)
        for kind in ("ln", "rms"):
            with self.subTest(kind=kind):
                ours, theirs = self.pair(kind)
                for m in (ours, theirs):
                    parametrize.register_parametrization(m, "weight", Double())
                self.check(ours, theirs, x)
                self.assertNotIn("weight", ours._parameters)

    def test_weight_norm(self):
        x = torch.randn(3, 8)
        for kind in ("ln", "rms"):
            with self.subTest(kind=kind):
                ours, theirs = self.pair(kind)
                with torch.no_grad():  # weight_norm splits weight into g * v / |v|: v = weight, g = 2
                    for m in (ours, theirs):
                        torch.nn.utils.weight_norm(m, "weight", dim=None)
                        m.weight_g.fill_(2)
                self.check(ours, theirs, x)

    def test_a_subclass_s_weight_property(self):
        class Scaled(njt.LayerNorm):
            @property
            def weight(self):  # AttributeError until registered: nn.Module.register_parameter asks hasattr
                w = self._parameters.get("weight")
                if w is None:
                    raise AttributeError("weight")
                return w * 3

        m = Scaled(8)
        with torch.no_grad():
            m._parameters["weight"].copy_(torch.randn(8))
            m.bias.copy_(torch.randn(8))
        x = torch.randn(3, 8)
        want = torch.nn.functional.layer_norm(x, (8,), m._parameters["weight"] * 3, m.bias, m.eps)
        torch.testing.assert_close(m(x), want, rtol=0, atol=0)


if __name__ == "__main__":
    unittest.main()
