"""Element types of the block language.

Every type has a *storage* numpy dtype (how arrays hold it) and a *container* dtype (what
the executor computes in).  fp16 and bf16 live in float32 containers, rounded back to their
own precision after every operation: numpy has no fast half arithmetic, and IEEE float32
arithmetic followed by one rounding gives the same bits as native half arithmetic for
+, -, *, / (float32 carries more than twice the half mantissa plus two bits).
"""
from __future__ import annotations

import operator

import ml_dtypes
import numpy as np


class constexpr:
    """A compile-time value (`BLOCK: tl.constexpr`, `tl.constexpr(4)`): behaves as the value it holds."""

    def __init__(self, value=None):
        self.value = value.value if isinstance(value, constexpr) else value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"

    def __hash__(self):
        return hash(self.value)

    def __bool__(self):
        return bool(self.value)

    def __index__(self):
        return self.value.__index__()

    def __int__(self):
        return int(self.value)

    def __float__(self):
        return float(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    @property
    def type(self):
        """Newer Triton's type of a compile-time value (constexpr_type, below)."""
        return constexpr_type(self.value)

    def __getattr__(self, name):
        if name == "value":
            raise AttributeError(name)
        return getattr(self.value, name)


def constexpr_value(x):
    """A constexpr's value; anything else as it is."""
    return x.value if isinstance(x, constexpr) else x


def _constexpr_operators():
    def wrap(fn, reflected=False):
        def op(self, other):
            other = other.value if isinstance(other, constexpr) else other
            result = fn(other, self.value) if reflected else fn(self.value, other)
            return result if result is NotImplemented else (
                constexpr(result) if not hasattr(result, "dtype") or isinstance(result, np.generic) else result)
        return op
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift"):
        fn = getattr(operator, name + "_" if name in ("and", "or") else name)
        setattr(constexpr, f"__{name}__", wrap(fn))
        setattr(constexpr, f"__r{name}__", wrap(fn, True))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(constexpr, f"__{name}__", wrap(getattr(operator, name)))
    constexpr.__neg__ = lambda self: constexpr(-self.value)
    constexpr.__pos__ = lambda self: self
    constexpr.__invert__ = lambda self: constexpr(~self.value)


_constexpr_operators()


def is_annotation(annotation, kind, name: str | None = None) -> bool:
    """Whether a parameter's or field's annotation is `kind` (`x: tl.constexpr`), also written as
    a string (`from __future__ import annotations`, quoted or not): "tl.<name>", the name being
    the class's own unless given (tl.tuple's class has another)."""
    if annotation is kind:
        return True
    return isinstance(annotation, str) and annotation.strip("'\"").split(".")[-1] == (name or kind.__name__)


class dtype:
    """An element type: values are computed in `container` and held in memory as `np`.
    `tl.dtype("fp16")` is the type of that name, as in Triton."""
    __slots__ = ("name", "np", "container", "kind", "bits")
    # Triton's lists of type names
    SINT_TYPES = ["int8", "int16", "int32", "int64"]
    UINT_TYPES = ["int1", "uint8", "uint16", "uint32", "uint64"]
    FP_TYPES = ["fp8e4b15", "fp8e4nv", "fp8e4b8", "fp8e5", "fp8e5b16", "fp16", "bf16", "fp32", "fp64"]
    STANDARD_FP_TYPES = ["fp16", "bf16", "fp32", "fp64"]

    def __new__(cls, name, *spec):
        if spec:
            return super().__new__(cls)
        if name not in _BY_NAME:
            raise ValueError(f"tl.dtype: unknown type name {name!r}; known: {sorted(_BY_NAME)}")
        return _BY_NAME[name]

    def __init__(self, name: str, np_dtype=None, container=None, kind: str = "", bits: int = 0):
        if np_dtype is None:    # tl.dtype(name): the existing type, already set up
            return
        self.name, self.np, self.container, self.kind, self.bits = name, np.dtype(np_dtype), np.dtype(container), kind, bits

    def decode(self, stored: np.ndarray) -> np.ndarray:
        """Values held in memory (as `np`) in the container type (the same array if they agree)."""
        return stored.astype(self.container, copy=False)

    def encode(self, values: np.ndarray) -> np.ndarray:
        """Container values as held in memory, of type `np` (the same array if they agree)."""
        return np.asarray(values).astype(self.np, copy=False)

    def is_floating(self):
        return self.kind == "f"

    def is_int(self):
        return self.kind in ("i", "u", "b")

    def is_bool(self):
        return self.kind == "b"

    def is_signed(self):
        return self.kind == "i"

    @property
    def primitive_bitwidth(self):
        return self.bits

    # Triton's attributes of a type, read by kernels and by Triton's own tests
    class SIGNEDNESS:
        SIGNED, UNSIGNED = 0, 1

    @property
    def int_bitwidth(self):
        if not self.is_int():
            raise AttributeError(f"{self.name} is not an integer type: it has no int_bitwidth")
        return self.bits

    @property
    def int_signedness(self):
        if not self.is_int():
            raise AttributeError(f"{self.name} is not an integer type: it has no int_signedness")
        return dtype.SIGNEDNESS.SIGNED if self.kind == "i" else dtype.SIGNEDNESS.UNSIGNED

    @property
    def fp_mantissa_width(self):
        if not self.is_floating():
            raise AttributeError(f"{self.name} is not a floating type: it has no fp_mantissa_width")
        return FLOAT_FORMATS[self.name][0]

    @property
    def exponent_bias(self):
        if not self.is_floating():
            raise AttributeError(f"{self.name} is not a floating type: it has no exponent_bias")
        return FLOAT_FORMATS[self.name][1]

    def is_standard_floating(self):
        return self.name in ("fp16", "bf16", "fp32", "fp64")

    def is_int1(self):
        return self.kind == "b"

    def is_void(self):
        return self.kind == "v"

    def is_storage_only(self):
        """Loaded, stored and bitcast, never computed with (fp8e8m0fnu, the MX formats' scales)."""
        return self.kind == "s"

    def is_block(self):
        return False

    def get_int_max_value(self):
        if not self.is_int():
            raise RuntimeError(f"{self.name} is not an integer type")
        return (1 << (self.bits - 1)) - 1 if self.kind == "i" else (1 << self.bits) - 1

    def get_int_min_value(self):
        if not self.is_int():
            raise RuntimeError(f"{self.name} is not an integer type")
        return -(1 << (self.bits - 1)) if self.kind == "i" else 0

    def codegen_name(self):
        """The name of the dtype's object in triton.language (fp16 is `float16`, bf16 `bfloat16`)."""
        if self.name.startswith("fp"):
            return "float" + self.name[2:]
        if self.name.startswith("bf"):
            return "bfloat" + self.name[2:]
        return self.name

    @property
    def cache_key_part(self) -> str:
        return self.name

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"triton.language.{self.codegen_name()}"

    def __eq__(self, other):
        if isinstance(other, constexpr):
            other = other.value
        return self is other

    def __hash__(self):
        return hash(self.name)

    def is_fp16(self):
        return self is float16

    def is_bf16(self):
        return self is bfloat16

    def is_fp8(self):
        return self.kind == "f" and self.bits == 8

    def is_fp32(self):
        return self is float32

    def is_fp64(self):
        return self is float64

    def is_int_signed(self):
        return self.kind == "i"

    def is_int_unsigned(self):
        return self.kind in ("u", "b")

    def is_ptr(self):
        return False

    @property
    def scalar(self):
        return self

    def to_ir(self, *_):
        raise NotImplementedError("minitriton has no IR: dtype.to_ir is not supported")

    def __reduce__(self):
        return (dtype, (self.name,))      # tl.dtype(name): the one type of that name


class const:
    """Triton's annotation of a pointer to memory the kernel only reads (`x_ptr: tl.const`): the
    argument's pointers are `const_pointer<...>`, and a store or atomic through them is refused."""


class pointer_type:
    """The type of a pointer tensor: offsets (int64, in elements) into one argument's memory."""

    __slots__ = ("element_ty", "address_space", "const")
    kind = "p"

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        self.element_ty, self.address_space, self.const = element_ty, address_space, bool(const)

    def is_floating(self):
        return False

    def is_int(self):
        return False

    def is_const(self):
        return self.const

    def __repr__(self):
        return f"{'const_' if self.const else ''}pointer<{self.element_ty}>"

    def __eq__(self, other):
        if isinstance(other, constexpr):
            other = other.value
        return (isinstance(other, pointer_type) and other.element_ty is self.element_ty
                and other.const == self.const)

    def is_ptr(self):
        return True

    @property
    def scalar(self):
        return self

    def __hash__(self):
        return hash(("ptr", self.element_ty.name, self.const))


class block_type:
    """The type of a block (Triton's `tl.block_type`, what `x.type` is for a block): its element
    type and shape.  Asked anything else (is_floating, primitive_bitwidth, ...), it answers as its
    element type, as Triton's does."""

    __slots__ = ("element_ty", "shape")

    def __init__(self, element_ty, shape):
        dims = tuple(int(d.value if isinstance(d, constexpr) else d) for d in shape)
        if not dims:
            raise TypeError("block_type needs a shape of one dimension or more (a scalar's type is its dtype)")
        self.element_ty, self.shape = element_ty, dims

    def __getattr__(self, name):
        if name.startswith("__") or name in block_type.__slots__:     # (copying, unpickling: not delegated)
            raise AttributeError(name)
        return getattr(self.element_ty, name)

    @property
    def scalar(self):
        return self.element_ty

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def is_block(self):
        return True

    def get_block_shapes(self):
        return self.shape

    def __eq__(self, other):
        if isinstance(other, constexpr):
            other = other.value
        return isinstance(other, block_type) and other.shape == self.shape and other.element_ty == self.element_ty

    def __hash__(self):
        return hash(("block", self.shape, repr(self.element_ty)))

    def __repr__(self):
        return f"<{self.shape}, {self.element_ty}>"


# the mantissa bits and exponent bias of each float format (Triton's dtype.fp_mantissa_width and
# exponent_bias)
FLOAT_FORMATS = {"fp16": (10, 15), "bf16": (7, 127), "fp32": (23, 127), "fp64": (52, 1023),
                 "fp8e4nv": (3, 7), "fp8e5": (2, 15), "fp8e4b8": (3, 8), "fp8e5b16": (2, 16), "fp8e4b15": (3, 15)}

int1 = dtype("int1", np.bool_, np.bool_, "b", 1)
int8 = dtype("int8", np.int8, np.int8, "i", 8)
int16 = dtype("int16", np.int16, np.int16, "i", 16)
int32 = dtype("int32", np.int32, np.int32, "i", 32)
int64 = dtype("int64", np.int64, np.int64, "i", 64)
uint8 = dtype("uint8", np.uint8, np.uint8, "u", 8)
uint16 = dtype("uint16", np.uint16, np.uint16, "u", 16)
uint32 = dtype("uint32", np.uint32, np.uint32, "u", 32)
uint64 = dtype("uint64", np.uint64, np.uint64, "u", 64)
float16 = dtype("fp16", np.float16, np.float32, "f", 16)
bfloat16 = dtype("bf16", ml_dtypes.bfloat16, np.float32, "f", 16)
float32 = dtype("fp32", np.float32, np.float32, "f", 32)
float64 = dtype("fp64", np.float64, np.float64, "f", 64)
# fp8 (stored as ml_dtypes' 8-bit floats, computed in fp32 and rounded to nearest even, saturating
# to the largest finite value as the GPU's cvt.rn.satfinite does)
float8e4nv = dtype("fp8e4nv", ml_dtypes.float8_e4m3fn, np.float32, "f", 8)
float8e5 = dtype("fp8e5", ml_dtypes.float8_e5m2, np.float32, "f", 8)
float8e4b8 = dtype("fp8e4b8", ml_dtypes.float8_e4m3fnuz, np.float32, "f", 8)
float8e5b16 = dtype("fp8e5b16", ml_dtypes.float8_e5m2fnuz, np.float32, "f", 8)
float8e8m0fnu = dtype("fp8e8m0fnu", ml_dtypes.float8_e8m0fnu, ml_dtypes.float8_e8m0fnu, "s", 8)  # MX scales


class _Float8E4B15(dtype):
    """fp8 with 4 exponent bits of bias 15 and 3 mantissa bits (Triton's float8e4b15, pre-Hopper
    fp8): no infinities, 0x7f and 0xff are NaN (held with their sign), largest finite value 1.75.  Its bits are held as
    ml_dtypes' float8_e4m3b11fnuz, the same layout with bias 11, whose values are 16 times
    larger; that type gives the host arrays their own dtype (`triton.reinterpret`), and the
    codes where the two formats differ (0x80 is -0 here, 0x7f/0xff NaN) are fixed by hand."""
    __slots__ = ()
    _SCALE = np.float32(16.0)

    def decode(self, stored):
        bits = np.asarray(stored).view(np.uint8)
        out = np.asarray(stored).astype(np.float32) / self._SCALE
        out[bits == 0x80] = -0.0
        out[bits == 0x7f] = np.nan
        out[bits == 0xff] = -np.nan                                # its sign kept, so the bits survive a bitcast
        return out

    def encode(self, values):
        v = np.asarray(values, np.float32)
        with np.errstate(invalid="ignore"):
            scaled = np.clip(v * self._SCALE, -28.0, 28.0)        # +-1.75, the largest finite value
        bits = np.ascontiguousarray(scaled.astype(self.np)).view(np.uint8).copy()
        nan = np.isnan(v)
        bits[nan] = np.where(np.signbit(v[nan]), 0xff, 0x7f)
        bits[(bits == 0) & np.signbit(v)] = 0x80                   # -0 (the bias-11 type has none)
        return bits.view(self.np)


float8e4b15 = _Float8E4B15("fp8e4b15", ml_dtypes.float8_e4m3b11fnuz, np.float32, "f", 8)
pi32_t = pointer_type(int32)
FP8 = (float8e4nv, float8e5, float8e4b8, float8e5b16, float8e4b15)
void = dtype("void", np.void, np.void, "v", 0)     # what a function that returns nothing returns; no block holds it

ALL = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64) + FP8 \
    + (float8e8m0fnu,)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL + (void,)}


class function_type(dtype):
    """Triton's type of a function, its return types and parameter types.  minitriton compiles
    nothing, so no value has it; code that builds, prints or compares one runs as in Triton."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, ret_types, param_types):
        for arg, types in (("ret_types", ret_types), ("param_types", param_types)):
            if not isinstance(types, (list, tuple)) or not all(isinstance(t, (dtype, pointer_type, block_type))
                                                                for t in types):
                raise TypeError(f"tl.function_type: {arg} must be a list of types, got {types!r}")
        self.ret_types, self.param_types = list(ret_types), list(param_types)
        self.name = f"fn ({self.param_types}) -> {self.ret_types}"
        self.np = self.container = None
        self.kind, self.bits = "", 0

    def __eq__(self, other):
        return isinstance(other, function_type) and (self.ret_types, self.param_types) == \
            (other.ret_types, other.param_types)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (function_type, (self.ret_types, self.param_types))


class constexpr_type:
    """The type newer Triton gives a compile-time value: `constexpr_type[4]`, equal to another
    when their values are equal (so two constexpr arguments specialise a kernel alike)."""

    def __init__(self, value):
        self.value = value.value if isinstance(value, constexpr) else value

    def __eq__(self, other):
        return isinstance(other, constexpr_type) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return f"constexpr_type[{self.value}]"


def from_numpy(np_dtype) -> dtype:
    """The block-language type of a numpy dtype, or a clear error."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported element type {np_dtype!r}; minitriton supports "
                        + ", ".join(str(d.np) for d in ALL)) from None


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}  # bool < integral < float, as Triton ranks kinds for scalars


def int_range(dt: dtype):
    """(lowest, highest) value of an integer type."""
    if dt.is_bool():
        return 0, 1
    if dt.is_signed():
        return -(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1
    return 0, (1 << dt.bits) - 1


def integer_promote(a: dtype, b: dtype) -> dtype:
    """C's usual arithmetic conversions (int1 counts as a 1-bit unsigned type, as in Triton)."""
    a_signed, b_signed = a.is_signed(), b.is_signed()
    if a_signed == b_signed:
        return a if a.bits > b.bits else b
    if not a_signed:
        return a if a.bits >= b.bits else b
    return b if b.bits >= a.bits else a


def number_takes(number: dtype, t: dtype) -> bool:
    """Whether a Python number (of `number`'s literal type) meeting a tensor of type t takes t:
    when t's kind is the same or higher (bool < integral < float: `u8 + 1` is uint8), as
    Triton's semantics document has it."""
    return _KIND_RANK[number.kind] <= _KIND_RANK[t.kind]


def computation_type(a: dtype, b: dtype, a_scalar=False, b_scalar=False, div_or_mod=False) -> dtype:
    """The type a binary operation computes in, by Triton's rules.

    A Python number meeting a tensor of the same or a higher kind (number_takes) takes the
    tensor's type (`x // 3` of a uint8 x is uint8); otherwise: fp64 > fp32 > fp16 > bf16; `/` and `%` of half types
    compute in fp32 (PTX has no half division); integers follow C's promotion, and `//`, `%`
    between integers of different signedness are refused.
    """
    if a.is_storage_only() or b.is_storage_only():
        raise TypeError(f"unexpected type {a} and {b}: {a if a.is_storage_only() else b} is only loaded, stored "
                        f"and bitcast (as in Triton)")
    if a_scalar != b_scalar:
        sc, t = (a, b) if a_scalar else (b, a)
        if number_takes(sc, t):
            if div_or_mod and t in (float16, bfloat16):
                return float32
            return t
    if a is float64 or b is float64:
        return float64
    if a is float32 or b is float32:
        return float32
    if a is float16 or b is float16:
        return float32 if div_or_mod else float16
    if a is bfloat16 and b is bfloat16:
        return float32 if div_or_mod else bfloat16
    if a is bfloat16 or b is bfloat16:
        return float32
    if a.is_fp8() or b.is_fp8():
        if a.is_fp8() and b.is_fp8():
            return a if a is b else float16
        raise TypeError(f"unexpected types {a} and {b}: fp8 values combine only with floats (as in Triton); "
                        f"cast one of them")
    if div_or_mod and a.is_signed() != b.is_signed():
        raise TypeError(f"Cannot use /, //, or % with {a} and {b} because they have different signedness; "
                        f"this is unlikely to give a useful answer (as Triton refuses): cast them to the same signedness")
    return integer_promote(a, b)


def promote(a: dtype, b: dtype) -> dtype:
    """The common type of two tensors (no Python numbers involved)."""
    return a if a is b else computation_type(a, b)


def literal_dtype(x) -> dtype:
    """The type Triton gives a Python number used as a tensor inside a kernel."""
    if isinstance(x, bool):
        return int1
    if isinstance(x, int):
        for lo, hi, dt in ((-2**31, 2**31, int32), (2**31, 2**32, uint32), (-2**63, 2**63, int64), (2**63, 2**64, uint64)):
            if lo <= x < hi:
                return dt
        raise ValueError(f"integer {x} is not representable in 64 bits")
    if isinstance(x, float):
        ax = abs(x)
        if ax in (0.0, float("inf")) or x != x or 2.0 ** -126 <= ax <= (2 - 2.0 ** -23) * 2.0 ** 127:
            return float32
        return float64
    raise TypeError(f"cannot use {type(x).__name__} value {x!r} as a tensor")


# what a kernel parameter's annotation may call a scalar type, as Triton's launcher canonicalises
# it (`v: tl.uint8`, `"tl.int16"`, `n: int`, `"fp16"`): its names, then ours (dtype.name)
_ANNOTATED = {**{d.name: d.name for d in ALL}, **{"float" + d.name[2:]: d.name for d in ALL if d.name[:2] == "fp"},
              "bfloat16": "bf16", "bool": "int1", "uint1": "int1", "i1": "int1", "u1": "int1", "i8": "int8",
              "i16": "int16", "int": "int32", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
              "u32": "uint32", "u64": "uint64", "half": "fp16", "float": "fp32", "double": "fp64"}


def annotated_type(annotation) -> dtype | None:
    """The scalar type a kernel parameter's annotation names, or None (no annotation, a pointer,
    a constexpr, a class such as np.ndarray).  Triton types a scalar argument so annotated by it
    instead of by its value (`v: tl.uint8` makes 3 a uint8, and 1 is then not a constant)."""
    if isinstance(annotation, dtype):
        return annotation
    if isinstance(annotation, type):
        name = annotation.__name__
    elif isinstance(annotation, str):
        name = annotation.strip().strip("'\"").strip()
        for prefix in ("triton.language.", "tl."):
            name = name.removeprefix(prefix)
    else:
        return None
    found = _ANNOTATED.get(name)
    return None if found is None else _BY_NAME[found]


def argument_dtype(x) -> dtype:
    """The type of a scalar kernel argument (Triton's signature rule: ints are int32 when they
    fit, uint64 above int64's range, int64 otherwise; floats are fp32)."""
    if isinstance(x, (bool, np.bool_)):
        return int1
    if isinstance(x, np.generic):
        return from_numpy(x.dtype)
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return int32
        if 2**63 <= x < 2**64:
            return uint64
        if -2**63 <= x < 2**63:
            return int64
        # Triton's launcher packs it into 64 bits and raises OverflowError
        raise OverflowError(f"integer argument {x} is not representable in 64 bits")
    if isinstance(x, float):
        return float32
    raise TypeError(f"unsupported scalar argument {x!r}")
