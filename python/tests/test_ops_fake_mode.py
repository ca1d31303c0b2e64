"""normjit.torch's custom ops as torch.compile sees them, without a GPU: under FakeTensorMode
(fake CUDA tensors need no device) the public functions go through the ops' fake kernels, so
the results' count, order and shapes are those a compiled graph is traced with; make_fx shows
which op a call becomes and with what arguments. Skips without torch; the real kernels are
checked against float64 autograd in test_torch_gpu.py.
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


if __name__ == "__main__":
    unittest.main()
