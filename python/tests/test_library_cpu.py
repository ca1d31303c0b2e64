"""libnormjit through ctypes, without PyTorch and without a GPU.

Loads the library built here (NORMJIT_LIBRARY, or the repository's build folder), checks the
declarations in normjit/_capi.py against include/normjit/normjit.h, and checks that each struct
field lands where the C code reads it: every argument check below can only fire if the field it
names was read from the right offset.
"""
import ctypes
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import normjit  # noqa: E402
from normjit import _capi  # noqa: E402

HEADER = os.path.join(REPO, "include", "normjit", "normjit.h")


def gpu_present():
    """True when a CUDA driver with at least one device is here (then the no-GPU tests skip)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0


def problem(kind=_capi.LAYERNORM, n=8, dtype=_capi.F16, weight=True, bias=True):
    return _capi.Problem(kind=kind, n=n, x_dtype=dtype, has_weight=int(weight),
                         has_bias=int(bias and kind == _capi.LAYERNORM))


# Device-looking addresses, 256-byte aligned: never dereferenced (every call here fails before
# a kernel could run, and the no-GPU tests skip on a machine that has one).
FAKE = 0x7F0000000000


def args(kind=_capi.LAYERNORM, m=4, weight=True, bias=True):
    a = _capi.BackwardArgs(m=m, x=FAKE, dy=FAKE + 0x1000, rstd=FAKE + 0x2000, dx=FAKE + 0x3000)
    if kind == _capi.LAYERNORM:
        a.mean = FAKE + 0x4000
    if weight:
        a.weight, a.dweight = FAKE + 0x5000, FAKE + 0x6000
    if bias and kind == _capi.LAYERNORM:
        a.dbias = FAKE + 0x7000
    return a


def forward_args(kind=_capi.LAYERNORM, m=4, weight=True, bias=True):
    a = _capi.ForwardArgs(m=m, x=FAKE, y=FAKE + 0x1000, rstd=FAKE + 0x2000, eps=1e-5)
    if kind == _capi.LAYERNORM:
        a.mean = FAKE + 0x3000
    if weight:
        a.weight = FAKE + 0x4000
    if bias and kind == _capi.LAYERNORM:
        a.bias = FAKE + 0x5000
    return a


_CTYPES = {"int64_t": ctypes.c_int64, "uint64_t": ctypes.c_uint64, "double": ctypes.c_double, "size_t": ctypes.c_size_t,
           "int": ctypes.c_int}


def header_fields(struct_name):
    """[(field, ctypes type)] of `typedef struct struct_name { ... }` in the header, in order:
    pointers as c_void_p, the nj_* enums as C int (their ctypes declaration)."""
    with open(HEADER) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (struct_name, struct_name), text, re.S).group(1)
    fields = []
    for decl in filter(None, (d.strip() for d in body.split(";"))):
        match = re.fullmatch(r"(?:const\s+)?(\w+)\s*(\*?)\s*(\w+)", decl)
        assert match, "cannot read the declaration %r of %s" % (decl, struct_name)
        ctype, pointer, name = match.groups()
        fields.append((name, ctypes.c_void_p if pointer else
                       ctypes.c_int if ctype.startswith("nj_") else _CTYPES[ctype]))
    return fields


class LibraryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lib = _capi.library()
        cls.engine = _capi.Engine()

    def call(self, p, a, kind=None):
        fn = self.lib.nj_layer_norm_backward if (kind if kind is not None else p.kind) == _capi.LAYERNORM \
            else self.lib.nj_rms_norm_backward
        status = fn(self.engine.handle, ctypes.byref(p), ctypes.byref(a), None)
        return status, self.lib.nj_last_error().decode()

    def assert_invalid(self, p, a, *fragments):
        status, message = self.call(p, a)
        self.assertEqual(_capi.status_name(status), "NJ_ERR_INVALID_ARGUMENT", message)
        for f in fragments:
            self.assertIn(f, message)

    # ---- declarations against the header ------------------------------------------------

    def test_version_matches_header(self):
        text = open(HEADER).read()
        parts = [re.search(r"#define NJ_VERSION_%s (\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
        self.assertEqual(normjit.version(), ".".join(parts))

    def test_status_and_enum_values_match_header(self):
        text = open(HEADER).read()
        declared = dict((name, int(value)) for name, value in re.findall(r"\b(NJ_[A-Z0-9_]+) = (\d+)", text))
        self.assertGreaterEqual(len(declared), 15)
        for name, value in declared.items():
            short = re.sub(r"^NJ_(ERR_)?", "", name)
            self.assertEqual(getattr(_capi, short), value, name)
            if name.startswith("NJ_ERR_") or name == "NJ_OK":
                self.assertEqual(_capi.status_name(value), name)
        self.assertEqual(_capi.status_name(99), "NJ_ERR_UNKNOWN_STATUS")

    def test_struct_sizes_follow_the_c_layout(self):
        # int, pad, int64, then fourteen ints: 8 + 8 + 56 = 72; args is 34 words (gcc on
        # include/normjit/normjit.h: 72 and 272, recompute_from_output at 68, bias at 264).
        self.assertEqual(ctypes.sizeof(_capi.Problem), 72)
        self.assertEqual(_capi.Problem.recompute_from_output.offset, 68)
        self.assertEqual(ctypes.sizeof(_capi.BackwardArgs), 34 * 8)
        self.assertEqual(_capi.BackwardArgs.dbias1.offset, 30 * 8)
        self.assertEqual(_capi.BackwardArgs.bias.offset, 33 * 8)
        # The fused options were appended: the older fields keep their offsets.
        self.assertEqual(_capi.Problem.alignment.offset, 40)
        self.assertEqual(_capi.BackwardArgs.workspace_bytes.offset, 13 * 8)

    def test_structs_are_the_header_s_field_for_field(self):
        for struct_name, cls in (("nj_problem", _capi.Problem), ("nj_backward_args", _capi.BackwardArgs),
                                 ("nj_forward_args", _capi.ForwardArgs)):
            with self.subTest(struct=struct_name):
                self.assertEqual([(name, t) for name, t in cls._fields_], header_fields(struct_name))

    def test_forward_args_follow_the_c_layout(self):
        # 26 8-byte fields (gcc on include/normjit/normjit.h: 208 bytes, eps at 72); the fused
        # options were appended, so the first ten keep their offsets.
        self.assertEqual(ctypes.sizeof(_capi.ForwardArgs), 26 * 8)
        self.assertEqual(_capi.ForwardArgs.eps.offset, 72)
        self.assertEqual(_capi.ForwardArgs.y_stride.offset, 48)
        self.assertEqual(_capi.ForwardArgs.dropout_seed.offset, 18 * 8)
        self.assertEqual(_capi.ForwardArgs.y1_stride.offset, 25 * 8)

    def test_packed_forward_args_land_where_the_struct_has_them(self):
        values = [37, FAKE, 300, FAKE + 0x1000, FAKE + 0x2000, FAKE + 0x3000, 301, FAKE + 0x4000, 0, 1e-5]
        names = [name for name, _ in _capi.ForwardArgs._fields_][:10]  # FORWARD_ARGS: up to eps
        by_field = _capi.ForwardArgs(**dict(zip(names, values)))
        packed, address = _capi.thread_forward_args()
        _capi.FORWARD_ARGS.pack_into(packed, 0, *values)
        self.assertEqual(address, ctypes.addressof(packed))
        self.assertEqual(bytes(packed), bytes(by_field))
        self.assertEqual((packed.rstd, packed.eps), (None, 1e-5))
        self.assertIsNot(packed, _capi.thread_args()[0], "the backward's struct is another one")

    def test_packed_args_land_where_the_struct_has_them(self):
        # normjit.torch's fast path writes the args with ARGS_HEAD.pack_into, not through ctypes'
        # fields: the bytes must be the very ones the fields would have written.
        values = [4, FAKE, 300, FAKE + 0x1000, 301, FAKE + 0x2000, FAKE + 0x3000, FAKE + 0x4000, FAKE + 0x5000,
                  302, FAKE + 0x6000, 0, FAKE + 0x7000, 4096]
        names = [name for name, _ in _capi.BackwardArgs._fields_[:len(values)]]
        self.assertEqual(names[-1], "workspace_bytes")
        by_field = _capi.BackwardArgs(**dict(zip(names, values)))
        packed, address = _capi.thread_args()
        _capi.ARGS_HEAD.pack_into(packed, 0, *values)
        self.assertEqual(address, ctypes.addressof(packed))
        self.assertEqual(bytes(packed), bytes(by_field))
        self.assertEqual(packed.dresidual, None)  # the fused fields stay zero

    def test_each_thread_has_its_own_packed_args(self):
        import threading
        for get in (_capi.thread_args, _capi.thread_forward_args):
            mine = get()
            theirs = []
            t = threading.Thread(target=lambda: theirs.append(get()))
            t.start()
            t.join()
            self.assertIs(get(), mine)
            self.assertNotEqual(theirs[0][1], mine[1])

    def test_raw_entry_points_take_addresses(self):
        # The same checks as through the declared entry points, with the structs passed by address.
        p = problem()
        a = args()
        a.dx = None
        for kind in (_capi.LAYERNORM, _capi.RMSNORM):
            p.kind = kind
            if kind == _capi.RMSNORM:
                a.mean = a.dbias = None
                p.has_bias = 0
            raw = self.engine.raw_backward[kind]
            status = raw(self.engine.address, ctypes.addressof(p), ctypes.addressof(a), 0)
            self.assertEqual(_capi.status_name(status), "NJ_ERR_INVALID_ARGUMENT")
            self.assertIn("dx is NULL", self.lib.nj_last_error().decode())
            self.assertEqual(raw(None, ctypes.addressof(p), ctypes.addressof(a), 0), _capi.INVALID_ARGUMENT)
            self.assertIn("engine is NULL", self.lib.nj_last_error().decode())
        a.dx = FAKE + 0x3000  # now only the entry point is wrong: an RMSNorm problem to layer_norm_backward
        wrong = self.engine.raw_backward[_capi.LAYERNORM]
        self.assertEqual(wrong(self.engine.address, ctypes.addressof(p), ctypes.addressof(a), 0),
                         _capi.INVALID_ARGUMENT)
        self.assertIn("rms_norm_backward", self.lib.nj_last_error().decode())

    # ---- engine lifetime ------------------------------------------------------------------

    def test_engine_create_and_destroy(self):
        for _ in range(3):
            e = _capi.Engine()
            self.assertTrue(e.handle)
            e.close()
            self.assertFalse(e.handle)
            e.close()  # twice is harmless

    def test_missing_config_file_is_a_config_error(self):
        with self.assertRaises(normjit.NormjitError) as cm:
            _capi.Engine("/nonexistent/normjit.toml")
        self.assertEqual(cm.exception.status_name, "NJ_ERR_CONFIG")
        self.assertIn("/nonexistent/normjit.toml", cm.exception.message)
        self.assertIn("NJ_ERR_CONFIG", str(cm.exception))

    # ---- without a GPU --------------------------------------------------------------------

    def test_valid_calls_without_a_gpu_say_so(self):
        if gpu_present():
            self.skipTest("a CUDA device is present; the no-GPU statuses cannot be observed here")
        for kind in (_capi.LAYERNORM, _capi.RMSNORM):
            p = problem(kind)
            with self.assertRaises(normjit.NormjitError) as cm:
                self.engine.workspace_size(p, 4)
            self.assertIn(cm.exception.status_name, ("NJ_ERR_NO_DRIVER", "NJ_ERR_NO_DEVICE"))
            self.assertRegex(cm.exception.message.lower(), "driver|device")
            with self.assertRaises(normjit.NormjitError) as cm:
                self.engine.backward(p, args(kind), 0)
            self.assertIn(cm.exception.status_name, ("NJ_ERR_NO_DRIVER", "NJ_ERR_NO_DEVICE"))
            self.assertGreater(len(cm.exception.message), 20)

    # ---- invalid arguments (checked before any driver call) -------------------------------

    def test_n_zero(self):
        p = problem(n=0)
        self.assert_invalid(p, args(), "n")
        status = self.lib.nj_workspace_size(self.engine.handle, ctypes.byref(p), 4, ctypes.byref(ctypes.c_size_t()))
        self.assertEqual(_capi.status_name(status), "NJ_ERR_INVALID_ARGUMENT")

    def test_null_engine_problem_args_and_out_pointer(self):
        p, a = problem(), args()
        for fn in (self.lib.nj_layer_norm_backward, self.lib.nj_rms_norm_backward):
            self.assertEqual(fn(None, ctypes.byref(p), ctypes.byref(a), None), _capi.INVALID_ARGUMENT)
            self.assertIn("engine is NULL", self.lib.nj_last_error().decode())
            self.assertEqual(fn(self.engine.handle, None, ctypes.byref(a), None), _capi.INVALID_ARGUMENT)
            self.assertIn("problem is NULL", self.lib.nj_last_error().decode())
            self.assertEqual(fn(self.engine.handle, ctypes.byref(p), None, None), _capi.INVALID_ARGUMENT)
            self.assertIn("args is NULL", self.lib.nj_last_error().decode())
        self.assertEqual(self.lib.nj_workspace_size(self.engine.handle, ctypes.byref(p), 4, None),
                         _capi.INVALID_ARGUMENT)
        sizes = (ctypes.sizeof(_capi.Problem), ctypes.sizeof(_capi.BackwardArgs), ctypes.sizeof(_capi.ForwardArgs))
        self.assertEqual(self.lib.nj_engine_create_abi(None, None, *sizes), _capi.INVALID_ARGUMENT)
        # nj_engine_create is a macro of the C header over nj_engine_create_abi, not a symbol: a
        # program built before the ABI guard fails to load instead of misreading its structs.
        with self.assertRaises(AttributeError):
            self.lib.nj_engine_create  # noqa: B018

    def test_null_data_pointers(self):
        for field in ("x", "dy", "rstd", "mean", "dx", "weight", "dweight", "dbias"):
            a = args()
            setattr(a, field, None)
            self.assert_invalid(problem(), a, field + " is NULL")

    def test_each_stride_field(self):
        for field in ("x_stride", "dy_stride", "dx_stride"):
            a = args()
            setattr(a, field, 3)
            self.assert_invalid(problem(n=8), a, "%s = 3 is less than N" % field)

    def test_each_flag_field(self):
        a = args(bias=False)
        a.dbias = FAKE
        self.assert_invalid(problem(bias=False), a, "dbias is given but has_bias is false")
        a = args(weight=False)
        a.weight = FAKE
        self.assert_invalid(problem(weight=False), a, "has_weight is false")
        a = args(_capi.RMSNORM)
        a.mean = FAKE
        self.assert_invalid(problem(_capi.RMSNORM), a, "mean is given for RMSNorm")

    def test_m_and_misaligned_vectors(self):
        a = args()
        a.m = -1
        self.assert_invalid(problem(), a, "m = -1 is negative")
        a = args()
        a.rstd = FAKE + 2
        self.assert_invalid(problem(), a, "rstd = ", "4-byte")
        a = args()
        a.x = FAKE + 1
        self.assert_invalid(problem(dtype=_capi.F16), a, "x = ", "2 bytes")

    def test_wrong_kind_for_entry_point(self):
        status, message = self.call(problem(_capi.RMSNORM), args(_capi.RMSNORM), kind=_capi.LAYERNORM)
        self.assertEqual(status, _capi.INVALID_ARGUMENT)
        self.assertIn("rms_norm_backward", message)

    def test_weight_dtype_field(self):
        p = problem(dtype=_capi.F16)
        p.weight_dtype = _capi.BF16  # neither f32 nor x's dtype: a valid request no build serves
        status, message = self.call(p, args())
        self.assertEqual(_capi.status_name(status), "NJ_ERR_UNSUPPORTED", message)
        self.assertIn("weight dtype bf16", message)


    # ---- fused options (docs/FUSED.md): each appended field read where the C code reads it -----

    def test_fused_fields_of_options_that_are_off(self):
        for field, value, fragment in (("dresidual", FAKE + 0x8000, "dresidual is given but residual is off"),
                                       ("rowscale", FAKE + 0x9000, "rowscale is given but the rowscale option"),
                                       ("dropout_mask", FAKE + 0xA000, "dropout_mask or dropout_p is given"),
                                       ("dropout_p", 0.5, "dropout_mask or dropout_p is given")):
            a = args()
            setattr(a, field, value)
            self.assert_invalid(problem(), a, fragment)

    def test_fused_problem_fields(self):
        p = problem(weight=False, bias=False)
        p.zero_centered_weight = 1
        self.assert_invalid(p, args(weight=False, bias=False), "zero_centered_weight is set but has_weight is false")
        for flag, fragment in (("residual", "dresidual is NULL but residual is on"),
                               ("rowscale", "rowscale is NULL but rowscale is on")):
            p = problem()
            setattr(p, flag, 1)
            self.assert_invalid(p, args(), fragment)
        p = problem()
        p.dropout = _capi.DROPOUT_BITS
        self.assert_invalid(p, args(), "dropout_mask is NULL but dropout is on")

    def test_fused_values_and_strides(self):
        p = problem(n=8)
        p.dropout = _capi.DROPOUT_BYTES
        a = args()
        a.dropout_mask, a.dropout_p = FAKE + 0xA000, 1.0
        self.assert_invalid(p, a, "dropout_p = 1.000000 is not in [0, 1)")
        a.dropout_p, a.dropout_mask_stride = 0.25, 3
        self.assert_invalid(p, a, "dropout_mask_stride = 3 bytes is less than a byte mask row (8 bytes)")
        p.dropout = _capi.DROPOUT_BITS
        a.dropout_mask_stride = 0
        a.dresidual_in, a.dresidual_in_stride = FAKE + 0xB000, 3
        self.assert_invalid(p, a, "dresidual_in_stride = 3 is less than N")
        a.dresidual_in_stride = 0
        a.dresidual_in = a.dx
        self.assert_invalid(p, a, "dresidual_in and dx are the same buffer")
        p = problem(n=8)
        p.residual = 1
        a = args()
        a.dresidual, a.dresidual_stride = FAKE + 0x8000, 3
        self.assert_invalid(p, a, "dresidual_stride = 3 is less than N")
        a.dresidual, a.dresidual_stride, a.dx_stride = a.dx, 16, 8
        self.assert_invalid(p, a, "dx is dresidual (in place) but dx_stride = 8 and dresidual_stride = 16 differ")
        p = problem(n=8)
        p.rowscale = 1
        a = args()
        a.rowscale = FAKE + 0x9002
        self.assert_invalid(p, a, "rowscale = ", "4-byte")

    def test_gate_and_parallel_fields(self):
        # Each of the gate's and the second norm's fields where the C code reads it.
        for field, fragment in (("z", "z or dz is given but gate is off"), ("dz", "z or dz is given but gate is off"),
                                ("dy1", "parallel is off"), ("weight1", "parallel is off"),
                                ("dweight1", "parallel is off"), ("dbias1", "parallel is off")):
            a = args()
            setattr(a, field, FAKE + 0xC000)
            self.assert_invalid(problem(), a, fragment)
        p = problem(kind=_capi.RMSNORM)
        p.gate = _capi.GATE_AFTER_NORM
        self.assert_invalid(p, args(kind=_capi.RMSNORM), "z is NULL but gate is on")
        a = args(kind=_capi.RMSNORM)
        a.z, a.dz, a.z_stride = FAKE + 0xC000, FAKE + 0xD000, 3
        self.assert_invalid(p, a, "z_stride = 3")
        a.z_stride, a.dz_stride = 0, 3
        self.assert_invalid(p, a, "dz_stride = 3")
        p.kind = _capi.LAYERNORM
        self.assert_invalid(p, args(), "is set on a LayerNorm")
        p = problem()
        p.parallel = 1
        self.assert_invalid(p, args(), "dy1 is NULL but parallel is on")
        a = args()
        a.dy1, a.weight1, a.dweight1, a.dbias1 = FAKE + 0xC000, FAKE + 0xD000, FAKE + 0xE000, FAKE + 0xF000
        a.dy1_stride = 3
        self.assert_invalid(p, a, "dy1_stride = 3")
        a.dy1_stride, a.dbias1 = 0, a.dweight1
        self.assert_invalid(p, a, "dweight1 and dbias1 are the same buffer")
        p = problem(kind=_capi.RMSNORM)
        p.parallel, p.gate = 1, _capi.GATE_BEFORE_NORM
        self.assert_invalid(p, args(kind=_capi.RMSNORM), "parallel and gate are both set")

    def test_recompute_from_output_fields(self):
        # y and bias where the C code reads them; x and mean optional in that mode.
        for field, fragment in (("y", "y is given but recompute_from_output is off"),
                                ("bias", "bias is given but recompute_from_output is off")):
            a = args()
            setattr(a, field, FAKE + 0xC000)
            self.assert_invalid(problem(), a, fragment)
        p = problem()
        p.recompute_from_output = 1
        a = args()
        a.x = a.mean = None
        self.assert_invalid(p, a, "y is NULL but recompute_from_output is on")
        a.y = FAKE + 0xC000
        self.assert_invalid(p, a, "bias is NULL but recompute_from_output is on and has_bias is set")
        a.bias, a.y_stride = FAKE + 0xD000, 3
        self.assert_invalid(p, a, "y_stride = 3")
        a.y_stride, a.x = 0, FAKE
        self.assert_invalid(p, a, "mean is NULL but x is given with recompute_from_output")
        p.gate = _capi.GATE_AFTER_NORM
        self.assert_invalid(p, a, "is set on a LayerNorm")
        p.kind, p.has_bias = _capi.RMSNORM, 0
        self.assert_invalid(p, args(kind=_capi.RMSNORM), "recompute_from_output and gate after-norm are both set")
        p = problem()
        p.recompute_from_output = p.parallel = 1
        self.assert_invalid(p, args(), "recompute_from_output and parallel are both set")


class ForwardLibraryTest(unittest.TestCase):
    """nj_layer_norm_forward / nj_rms_norm_forward through ctypes: each ForwardArgs field read where
    the C code reads it (every check below fires only on the field it names), before any GPU call."""

    @classmethod
    def setUpClass(cls):
        cls.lib = _capi.library()
        cls.engine = _capi.Engine()

    def call(self, p, a, kind=None, by_address=False):
        kind = p.kind if kind is None else kind
        if by_address:
            status = self.engine.raw_forward[kind](self.engine.address, ctypes.addressof(p), ctypes.addressof(a), 0)
        else:
            fn = self.lib.nj_layer_norm_forward if kind == _capi.LAYERNORM else self.lib.nj_rms_norm_forward
            status = fn(self.engine.handle, ctypes.byref(p), ctypes.byref(a), None)
        return status, self.lib.nj_last_error().decode()

    def assert_status(self, name, p, a, *fragments, **how):
        status, message = self.call(p, a, **how)
        self.assertEqual(_capi.status_name(status), name, message)
        for f in fragments:
            self.assertIn(f, message)

    def assert_invalid(self, p, a, *fragments, **how):
        self.assert_status("NJ_ERR_INVALID_ARGUMENT", p, a, *fragments, **how)

    def test_null_data_pointers(self):
        for kind, fields in ((_capi.LAYERNORM, ("x", "y", "weight", "bias")), (_capi.RMSNORM, ("x", "y", "weight"))):
            for field in fields:
                with self.subTest(kind=kind, field=field):
                    a = forward_args(kind)
                    setattr(a, field, None)
                    self.assert_invalid(problem(kind), a, field + " is NULL")

    def test_strides_eps_and_m(self):
        for field in ("x_stride", "y_stride"):
            a = forward_args()
            setattr(a, field, 3)
            self.assert_invalid(problem(n=8), a, "%s = 3 is less than N" % field)
        a = forward_args()
        a.eps = -1.0
        self.assert_invalid(problem(), a, "eps = -1", "not a finite number >= 0")
        a.eps = float("nan")
        self.assert_invalid(problem(), a, "not a finite number >= 0")
        a = forward_args()
        a.m = -1
        self.assert_invalid(problem(), a, "m = -1 is negative")

    def test_statistics_and_flags(self):
        a = forward_args(_capi.RMSNORM)
        a.mean = FAKE + 0x3000
        self.assert_invalid(problem(_capi.RMSNORM), a, "mean is given for RMSNorm")
        a = forward_args()
        a.rstd = FAKE + 0x2002
        self.assert_invalid(problem(), a, "rstd = ", "4-byte")
        a = forward_args()
        a.mean = FAKE + 0x3001
        self.assert_invalid(problem(), a, "mean = ", "4-byte")
        a = forward_args(weight=False)
        a.weight = FAKE + 0x4000
        self.assert_invalid(problem(weight=False), a, "weight is given but has_weight is false")
        a = forward_args(bias=False)
        a.bias = FAKE + 0x5000
        self.assert_invalid(problem(bias=False), a, "bias is given but has_bias is false")
        a = forward_args()
        a.y = FAKE + 1
        self.assert_invalid(problem(dtype=_capi.F16), a, "y = ", "2 bytes")

    def test_in_place_needs_one_stride(self):
        a = forward_args()
        a.y, a.x_stride, a.y_stride = a.x, 16, 8
        self.assert_invalid(problem(n=8), a, "y is x (in place) but y_stride = 8 and x_stride = 16 differ")

    def test_entry_points_by_address_and_wrong_kind(self):
        for kind in (_capi.LAYERNORM, _capi.RMSNORM):
            a = forward_args(kind)
            a.y = None
            self.assert_invalid(problem(kind), a, "y is NULL", by_address=True)
        other = {_capi.LAYERNORM: "rms_norm_forward", _capi.RMSNORM: "layer_norm_forward"}
        for kind in (_capi.LAYERNORM, _capi.RMSNORM):
            wrong = _capi.RMSNORM if kind == _capi.LAYERNORM else _capi.LAYERNORM
            self.assert_invalid(problem(wrong), forward_args(wrong), other[kind], kind=kind)
            self.assert_invalid(problem(wrong), forward_args(wrong), other[kind], kind=kind, by_address=True)

    def test_fused_options_reach_the_checks(self):
        # The appended nj_forward_args fields are read: residual on without its pointer, and a
        # residual given with the option off, are each named.
        p = problem()
        p.residual = 1
        self.assert_invalid(p, forward_args(), "residual is NULL")
        a = forward_args()
        a.residual = FAKE + 0x8000
        self.assert_invalid(problem(), a, "residual is given but the residual option is off")

    def test_no_rows_need_no_device(self):
        a = forward_args()
        a.m = 0
        a.x = a.y = None
        self.assert_status("NJ_OK", problem(), a)

    def test_valid_calls_without_a_gpu_say_so(self):
        if gpu_present():
            self.skipTest("a CUDA device is present; the no-GPU statuses cannot be observed here")
        for kind in (_capi.LAYERNORM, _capi.RMSNORM):
            with self.assertRaises(normjit.NormjitError) as cm:
                self.engine.forward(problem(kind), forward_args(kind), 0)
            self.assertIn(cm.exception.status_name, ("NJ_ERR_NO_DRIVER", "NJ_ERR_NO_DEVICE"))
            self.assertGreater(len(cm.exception.message), 20)


class LookupTest(unittest.TestCase):
    def test_explicit_path_that_does_not_exist(self):
        old = os.environ.get("NORMJIT_LIBRARY")
        os.environ["NORMJIT_LIBRARY"] = "/nonexistent/libnormjit.so"
        try:
            with self.assertRaises(normjit.LibraryNotFound) as cm:
                normjit.load_library()
        finally:
            if old is None:
                del os.environ["NORMJIT_LIBRARY"]
            else:
                os.environ["NORMJIT_LIBRARY"] = old
        text = str(cm.exception)
        self.assertIn("/nonexistent/libnormjit.so", text)
        self.assertIn("NORMJIT_LIBRARY", text)

    def test_default_lookup_names_every_place(self):
        code = ("import os, sys; os.environ.pop('NORMJIT_LIBRARY', None); sys.path.insert(0, %r); "
                "import normjit; print([w for w, _ in normjit.candidate_paths()])" % os.path.join(REPO, "python"))
        env = dict(os.environ)
        env.pop("NORMJIT_LIBRARY", None)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
        for where in ("next to the package", "the repository's build folder", "the system loader"):
            self.assertIn(where, out)

    def test_importing_needs_no_torch(self):
        code = ("import sys; sys.modules['torch'] = None; sys.path.insert(0, %r); import normjit; "
                "print(normjit.version())" % os.path.join(REPO, "python"))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        self.assertEqual(out.strip(), normjit.version())


if __name__ == "__main__":
    unittest.main()
