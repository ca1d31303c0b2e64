"""The C API (include/normjit/normjit.h) declared for ctypes, and an Engine that owns an nj_engine.

The structs mirror the header field for field; python/tests/test_library_cpu.py checks each
field's offset through the library's own argument checks, so a drift shows up as a failed test.
The engine is created with the mirrors' sizes (nj_engine_create_abi), so a mirror of a size the
library has no layout of is refused when the engine is created rather than misread on every call.
"""
import ctypes
import struct
import threading

from ._library import load_library

# nj_status values, in header order.
OK = 0
INVALID_ARGUMENT = 1
UNSUPPORTED = 2
NO_DRIVER = 3
NO_DEVICE = 4
NO_NVRTC = 5
COMPILE = 6
CUDA = 7
CONFIG = 8
WORKSPACE = 9
INTERNAL = 10

# nj_norm_kind and nj_dtype.
LAYERNORM = 0
RMSNORM = 1
DTYPE_DEFAULT = 0
F32 = 1
F16 = 2
BF16 = 3
# nj_dropout_mask: the form of a saved dropout keep-mask.
DROPOUT_NONE = 0
DROPOUT_BYTES = 1
DROPOUT_BITS = 2
GATE_NONE = 0
GATE_AFTER_NORM = 1
GATE_BEFORE_NORM = 2


class Problem(ctypes.Structure):
    """nj_problem."""
    _fields_ = [
        ("kind", ctypes.c_int),
        ("n", ctypes.c_int64),
        ("x_dtype", ctypes.c_int),
        ("dy_dtype", ctypes.c_int),
        ("dx_dtype", ctypes.c_int),
        ("weight_dtype", ctypes.c_int),
        ("has_weight", ctypes.c_int),
        ("has_bias", ctypes.c_int),
        ("alignment", ctypes.c_int),
        ("residual", ctypes.c_int),
        ("zero_centered_weight", ctypes.c_int),
        ("rowscale", ctypes.c_int),
        ("dropout", ctypes.c_int),
        ("gate", ctypes.c_int),
        ("parallel", ctypes.c_int),
        ("recompute_from_output", ctypes.c_int),
    ]


class BackwardArgs(ctypes.Structure):
    """nj_backward_args. Pointers are c_void_p so a Python int (a data_ptr()) goes straight in."""
    _fields_ = [
        ("m", ctypes.c_int64),
        ("x", ctypes.c_void_p),
        ("x_stride", ctypes.c_int64),
        ("dy", ctypes.c_void_p),
        ("dy_stride", ctypes.c_int64),
        ("mean", ctypes.c_void_p),
        ("rstd", ctypes.c_void_p),
        ("weight", ctypes.c_void_p),
        ("dx", ctypes.c_void_p),
        ("dx_stride", ctypes.c_int64),
        ("dweight", ctypes.c_void_p),
        ("dbias", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("dresidual", ctypes.c_void_p),
        ("dresidual_stride", ctypes.c_int64),
        ("rowscale", ctypes.c_void_p),
        ("dropout_mask", ctypes.c_void_p),
        ("dropout_mask_stride", ctypes.c_int64),
        ("dropout_p", ctypes.c_double),
        ("dresidual_in", ctypes.c_void_p),
        ("dresidual_in_stride", ctypes.c_int64),
        ("z", ctypes.c_void_p),
        ("z_stride", ctypes.c_int64),
        ("dz", ctypes.c_void_p),
        ("dz_stride", ctypes.c_int64),
        ("dy1", ctypes.c_void_p),
        ("dy1_stride", ctypes.c_int64),
        ("weight1", ctypes.c_void_p),
        ("dweight1", ctypes.c_void_p),
        ("dbias1", ctypes.c_void_p),
        ("y", ctypes.c_void_p),
        ("y_stride", ctypes.c_int64),
        ("bias", ctypes.c_void_p),
    ]


class ForwardArgs(ctypes.Structure):
    """nj_forward_args (the forward: y = norm(x) * gamma (+ beta), mean/rstd saved for the backward)."""
    _fields_ = [
        ("m", ctypes.c_int64),
        ("x", ctypes.c_void_p),
        ("x_stride", ctypes.c_int64),
        ("weight", ctypes.c_void_p),
        ("bias", ctypes.c_void_p),
        ("y", ctypes.c_void_p),
        ("y_stride", ctypes.c_int64),
        ("mean", ctypes.c_void_p),
        ("rstd", ctypes.c_void_p),
        ("eps", ctypes.c_double),
        # Fused options (docs/FORWARD.md); zero in a struct only ever packed with FORWARD_ARGS.
        ("residual", ctypes.c_void_p),
        ("residual_stride", ctypes.c_int64),
        ("residual_out", ctypes.c_void_p),
        ("residual_out_stride", ctypes.c_int64),
        ("rowscale", ctypes.c_void_p),
        ("dropout_mask", ctypes.c_void_p),
        ("dropout_mask_stride", ctypes.c_int64),
        ("dropout_p", ctypes.c_double),
        ("dropout_seed", ctypes.c_uint64),
        ("dropout_offset", ctypes.c_uint64),
        ("z", ctypes.c_void_p),
        ("z_stride", ctypes.c_int64),
        ("weight1", ctypes.c_void_p),
        ("bias1", ctypes.c_void_p),
        ("y1", ctypes.c_void_p),
        ("y1_stride", ctypes.c_int64),
    ]


def _packed_layout(cls, count):
    """A struct.Struct that writes the first `count` fields of cls in one call (pointers as
    unsigned ints, 0 for NULL), checked field by field against ctypes' own layout: filling a
    ctypes struct through its constructor or attributes costs about 0.1 us a field, pack_into
    a fraction of that."""
    fmt = "="
    offset = 0
    for name, ctype in cls._fields_[:count]:
        if ctype is ctypes.c_void_p or ctype is ctypes.c_size_t:
            code = "Q"
        elif ctype is ctypes.c_double:
            code = "d"
        elif ctype is ctypes.c_int64:
            code = "q"
        else:
            raise TypeError("normjit: %s.%s has type %s, which _packed_layout does not know" %
                            (cls.__name__, name, ctype.__name__))
        if getattr(cls, name).offset != offset:
            raise AssertionError("normjit: %s.%s sits at byte %d, packed at %d" %
                                 (cls.__name__, name, getattr(cls, name).offset, offset))
        fmt += code
        offset += ctypes.sizeof(ctype)
    return struct.Struct(fmt)


# nj_backward_args up to workspace_bytes (m, x, x_stride, dy, dy_stride, mean, rstd, weight, dx,
# dx_stride, dweight, dbias, workspace, workspace_bytes): every field a call without fused
# options sets. The fused fields after them stay zero in a struct only ever packed this way.
ARGS_HEAD = _packed_layout(BackwardArgs, 14)
# nj_forward_args up to eps (m, x, x_stride, weight, bias, y, y_stride, mean, rstd, eps): every
# field a call without fused options sets. The fused fields after them stay zero.
FORWARD_ARGS = _packed_layout(ForwardArgs, 10)


def _per_thread(cls):
    """A function returning (a cls, its address) that belongs to the calling thread, for a
    packed layout's pack_into. Per thread because ctypes releases the GIL during the C call: a
    struct shared between threads could be overwritten by another thread while the library
    reads it."""
    tls = threading.local()

    def get():
        try:
            return tls.args
        except AttributeError:
            a = cls()
            tls.args = (a, ctypes.addressof(a))
            return tls.args
    return get


thread_args = _per_thread(BackwardArgs)  # for ARGS_HEAD
thread_forward_args = _per_thread(ForwardArgs)  # for FORWARD_ARGS


class NormjitError(RuntimeError):
    """A normjit call failed: .status is the nj_status number, .status_name its name
    (e.g. "NJ_ERR_INVALID_ARGUMENT"), and the message is nj_last_error()'s."""

    def __init__(self, status, status_name, message):
        super().__init__("%s: %s" % (status_name, message))
        self.status = status
        self.status_name = status_name
        self.message = message


def _declare(lib):
    """Sets argtypes/restype for every C entry point (ctypes would otherwise pass ints as C int
    and truncate 64-bit values)."""
    P = ctypes.POINTER
    lib.nj_engine_create_abi.argtypes = [ctypes.c_char_p, P(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t,
                                         ctypes.c_size_t]
    lib.nj_engine_create_abi.restype = ctypes.c_int
    lib.nj_engine_destroy.argtypes = [ctypes.c_void_p]
    lib.nj_engine_destroy.restype = None
    lib.nj_workspace_size.argtypes = [ctypes.c_void_p, P(Problem), ctypes.c_int64, P(ctypes.c_size_t)]
    lib.nj_workspace_size.restype = ctypes.c_int
    for fn in (lib.nj_layer_norm_backward, lib.nj_rms_norm_backward):
        fn.argtypes = [ctypes.c_void_p, P(Problem), P(BackwardArgs), ctypes.c_void_p]
        fn.restype = ctypes.c_int
    for fn in (lib.nj_layer_norm_forward, lib.nj_rms_norm_forward):
        fn.argtypes = [ctypes.c_void_p, P(Problem), P(ForwardArgs), ctypes.c_void_p]
        fn.restype = ctypes.c_int
    lib.nj_last_error.argtypes = []
    lib.nj_last_error.restype = ctypes.c_char_p
    lib.nj_status_name.argtypes = [ctypes.c_int]
    lib.nj_status_name.restype = ctypes.c_char_p
    lib.nj_version_string.argtypes = []
    lib.nj_version_string.restype = ctypes.c_char_p
    return lib


_lib = None
_lib_lock = threading.RLock()  # default_engine() holds it while Engine() calls library()


def library():
    """The loaded, declared libnormjit (loaded on first use, so importing normjit never fails)."""
    global _lib
    if _lib is None:
        with _lib_lock:
            if _lib is None:
                _lib = _declare(load_library())
    return _lib


def status_name(status):
    return library().nj_status_name(status).decode()


def check(status, lib=None):
    """Raises NormjitError for a non-OK status, with the thread's nj_last_error() message.
    Must be called on the thread that made the failing call (the message is thread-local)."""
    if status != OK:
        lib = lib or library()
        raise NormjitError(status, lib.nj_status_name(status).decode(), lib.nj_last_error().decode())


def version():
    """libnormjit's version string, e.g. "0.1.0"."""
    return library().nj_version_string().decode()


class Engine:
    """Owns one nj_engine: its kernel caches, config and tuning database.

    config_file None means the library's default lookup (NORMJIT_CONFIG, then the user's
    config.toml). The engine is safe to share between threads (the C++ Engine locks its caches).
    """

    def __init__(self, config_file=None):
        self._lib = library()
        handle = ctypes.c_void_p()
        path = None if config_file is None else str(config_file).encode()
        check(self._lib.nj_engine_create_abi(path, ctypes.byref(handle), ctypes.sizeof(Problem),
                                             ctypes.sizeof(BackwardArgs), ctypes.sizeof(ForwardArgs)), self._lib)
        self._handle = handle
        # Bound once: each attribute lookup on a CDLL costs a dict walk per call.
        self._workspace_size = self._lib.nj_workspace_size
        self._backward = {LAYERNORM: self._lib.nj_layer_norm_backward, RMSNORM: self._lib.nj_rms_norm_backward}
        self._forward = {LAYERNORM: self._lib.nj_layer_norm_forward, RMSNORM: self._lib.nj_rms_norm_forward}
        # The same entry points taking every argument as an address (an int), for callers that
        # keep the engine, problem and args as addresses (normjit.torch's fast path): an int
        # converts to c_void_p faster than a byref() object is built and checked.
        raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
        self.raw_backward = {LAYERNORM: raw(("nj_layer_norm_backward", self._lib)),
                             RMSNORM: raw(("nj_rms_norm_backward", self._lib))}
        self.raw_forward = {LAYERNORM: raw(("nj_layer_norm_forward", self._lib)),
                            RMSNORM: raw(("nj_rms_norm_forward", self._lib))}

    @property
    def handle(self):
        return self._handle

    @property
    def address(self):
        """The nj_engine* as an int, for raw_backward and raw_forward."""
        return self._handle.value

    def close(self):
        if self._handle:
            self._lib.nj_engine_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        # At interpreter exit the library may already be unloaded; the OS reclaims everything.
        try:
            self.close()
        except Exception:
            pass

    def workspace_size(self, problem, m):
        """Bytes of workspace nj_*_backward needs for m rows of problem (a Problem)."""
        out = ctypes.c_size_t()
        check(self._workspace_size(self._handle, ctypes.byref(problem), m, ctypes.byref(out)), self._lib)
        return out.value

    def backward(self, problem, args, stream):
        """nj_layer_norm_backward or nj_rms_norm_backward by problem.kind; stream is a CUstream
        as an int (0 = the legacy default stream)."""
        check(self._backward[problem.kind](self._handle, ctypes.byref(problem), ctypes.byref(args), stream),
              self._lib)

    def forward(self, problem, args, stream):
        """nj_layer_norm_forward or nj_rms_norm_forward by problem.kind (args a ForwardArgs); stream
        as for backward."""
        check(self._forward[problem.kind](self._handle, ctypes.byref(problem), ctypes.byref(args), stream),
              self._lib)


_default_engine = None


def default_engine():
    """The process-wide engine the torch bindings use, created on first use."""
    global _default_engine
    if _default_engine is None:
        with _lib_lock:
            if _default_engine is None:
                _default_engine = Engine()
    return _default_engine
