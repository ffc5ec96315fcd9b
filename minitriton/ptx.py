"""PTX instructions as numpy functions, for `tl.inline_asm_elementwise` (inline_asm.py).

`decode(opcode)` gives an instruction's result type, its operand types and a function of numpy
arrays of those types (one element per lane).  What is here is what kernels write in inline
assembly: float arithmetic with a named rounding, `.approx` math, integer and bit arithmetic
(`shf`, `prmt`, `lop3`, `bfe`, ...), comparisons into predicates, and conversions.

- The rounding modes (rn, rz, rm, rp) are exact: libdevice's `add_rn` ... `fma_ru`,
  `float2int_rz`, ... (libdevice_rounding.py) round the exact result.
- An `.approx` instruction is computed in its type by numpy, closer to the true value than the
  GPU's approximation (tanh.approx.f32 is good to about 2**-11): a result may differ from a
  GPU's in its last bits, by no more than the instruction's documented error.
- `.ftz` flushes f32 subnormal operands and results to a zero of the same sign; `.sat` clamps a
  float result to [0, 1] (NaN to 0), as PTX does.
- Integer arithmetic wraps at the type's width; shifts by the width or more give 0 (or the
  sign, for `shr.s`), as PTX's do.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import dtypes as D, libdevice_rounding as R
from .tensor import tensor

NUMPY = {"b16": np.uint16, "u16": np.uint16, "s16": np.int16, "b32": np.uint32, "u32": np.uint32,
         "s32": np.int32, "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f16": np.float16,
         "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64, "pred": np.bool_,
         "u8": np.uint8, "s8": np.int8, "b8": np.uint8}
FLOATS = {"f32": D.float32, "f64": D.float64}
MODES = {"rn": "rn", "rz": "rz", "rm": "rd", "rp": "ru"}        # PTX's names -> libdevice's
APPROX = {"ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
          "rsqrt": lambda v: 1 / np.sqrt(v), "sqrt": np.sqrt, "rcp": lambda v: 1 / v}
ROUNDED = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "mad": 3, "rcp": 1, "sqrt": 1}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


class Unsupported(NotImplementedError):
    """An instruction minitriton does not run (inline_asm.py names the whole assembly)."""


def bits(kind: str) -> int:
    return 1 if kind == "pred" else np.dtype(NUMPY[kind]).itemsize * 8


def decode(opcode: str):
    """(result type, [operand types], fn(*arrays) -> array) of one opcode, e.g. "add.rn.f32"."""
    name, *mods = opcode.split(".")
    if name == "cvt":
        return _conversion(opcode, mods)
    if name in ("setp", "selp"):
        return _predicates(opcode, name, mods)
    if not mods or mods[-1] not in NUMPY:
        raise Unsupported(f"{opcode}: no type PTX names")
    kind, flags = mods[-1], mods[:-1]
    if kind in FLOATS:
        return _float(opcode, name, flags, kind)
    if kind in ("f16", "bf16"):
        raise Unsupported(f"{opcode}: 16-bit float arithmetic is not run (f32 and f64 are)")
    return _integer(opcode, name, flags, kind)


# ---------------------------------------------------------------- floats
def _float(opcode, name, flags, kind):
    dt = FLOATS[kind]
    ftz, sat = "ftz" in flags, "sat" in flags
    modes = [MODES[f] for f in flags if f in MODES]
    if set(flags) - set(MODES) - {"ftz", "sat", "approx", "full", "NaN"} or len(modes) > 1:
        raise Unsupported(f"{opcode}: modifiers {flags}")
    if name in ROUNDED and (modes or (name in ("add", "sub", "mul") and "approx" not in flags)):
        lib = getattr(R, f"{'fma' if name == 'mad' else name}_{modes[0] if modes else 'rn'}")
        n, fn = ROUNDED[name], _libdevice(lib, dt)
    elif name in APPROX and "approx" in flags:
        n, fn = 1, APPROX[name]
    elif name == "div" and ("approx" in flags or "full" in flags):
        n, fn = 2, np.divide
    elif name in ("abs", "neg", "mov"):
        n, fn = 1, {"abs": np.abs, "neg": np.negative, "mov": np.copy}[name]
    elif name in ("min", "max"):
        n, fn = 2, lambda a, b: _extreme(a, b, name == "max", "NaN" in flags)
    elif name == "copysign":        # PTX: copysign d, a, b gives b with the sign of a
        n, fn = 2, lambda a, b: np.copysign(b, a)
    else:
        raise Unsupported(f"{opcode}: not among the float instructions run")
    ftz = ftz and kind == "f32"     # PTX's .ftz applies to .f32 only
    np_type = NUMPY[kind]

    def op(*xs):
        xs = [_flush(x) if ftz else x for x in xs]
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*xs), np_type)
        out = _flush(out) if ftz else out
        return np.where(np.isnan(out), 0, np.clip(out, 0, 1)).astype(np_type) if sat else out
    return kind, [kind] * n, op


def _libdevice(fn, dt):
    """A libdevice_rounding function (of blocks) as a function of arrays with a leading row axis."""
    def op(*xs):
        xs = np.broadcast_arrays(*xs)
        return fn(*[tensor(x, dt, x.shape[1:]) for x in xs]).v
    return op


def _extreme(a, b, is_max, propagate_nan):
    """PTX's max/min: a NaN operand loses to a number unless .NaN; +0 is above -0."""
    pick = (np.maximum if is_max else np.minimum) if propagate_nan else (np.fmax if is_max else np.fmin)
    out = pick(a, b)
    if a.dtype.kind != "f":
        return out
    zeros = (a == 0) & (b == 0)
    negative = (np.signbit(a) & np.signbit(b)) if is_max else (np.signbit(a) | np.signbit(b))
    return np.where(zeros, np.where(negative, -0.0, 0.0).astype(a.dtype), out)


def _flush(v):
    small = (np.abs(v) < np.finfo(np.float32).tiny) & (v != 0)
    return np.where(small, np.copysign(np.float32(0), v), v).astype(v.dtype) if small.any() else v


# ---------------------------------------------------------------- integers and bits
def _integer(opcode, name, flags, kind):
    if kind == "pred":              # and.pred p, q, r ...
        logical = {"and": (2, np.logical_and), "or": (2, np.logical_or), "xor": (2, np.logical_xor),
                   "not": (1, np.logical_not), "mov": (1, np.copy)}
        if name not in logical or flags:
            raise Unsupported(f"{opcode}: of predicates, and/or/xor/not/mov are run")
        n, fn = logical[name]
        return kind, [kind] * n, fn
    width, signed = bits(kind), kind.startswith("s")
    t = NUMPY[kind]
    u = NUMPY[f"u{width}"]

    def shift_amount(n):
        return n.astype(np.int64) & 0xFFFFFFFF if n.dtype.kind in "iu" else n

    table = {
        "mov": (1, lambda a: a.copy()),
        "add": (2, lambda a, b: a + b), "sub": (2, lambda a, b: a - b),
        "and": (2, np.bitwise_and), "or": (2, np.bitwise_or), "xor": (2, np.bitwise_xor),
        "not": (1, np.invert), "neg": (1, np.negative), "abs": (1, np.abs),
        "min": (2, np.minimum), "max": (2, np.maximum),
    }
    if name in table and not flags:
        n, fn = table[name]
        return kind, [kind] * n, lambda *xs: np.asarray(fn(*xs), t)
    if name in ("mul", "mad") and flags in (["lo"], ["hi"], ["wide"]):
        n = 2 if name == "mul" else 3
        if flags == ["wide"]:
            if width > 32:
                raise Unsupported(f"{opcode}: a 128-bit product")
            wide = np.int64 if signed else np.uint64
            out_kind = f"{'s' if signed else 'u'}{2 * width}"
            return out_kind, [kind, kind, out_kind][:n], lambda *xs: np.asarray(
                xs[0].astype(wide) * xs[1].astype(wide) + (xs[2] if n == 3 else 0), NUMPY[out_kind])
        if flags == ["lo"]:
            return kind, [kind] * n, lambda *xs: np.asarray(xs[0] * xs[1] + (xs[2] if n == 3 else 0), t)
        return kind, [kind] * n, lambda *xs: np.asarray(_mul_hi(xs[0], xs[1], width, signed)
                                                        + (xs[2] if n == 3 else 0), t)
    if name == "shl" and not flags:
        return kind, [kind, "u32"], lambda a, n: np.where(shift_amount(n) >= width, 0,
                                                          a << np.minimum(shift_amount(n), width - 1).astype(t)).astype(t)
    if name == "shr" and not flags:
        def shr(a, n):
            k = np.minimum(shift_amount(n), width - 1).astype(t)
            fill = np.where(a < 0, -1, 0).astype(t) if signed else np.zeros_like(a)
            return np.where(shift_amount(n) >= width, fill, a >> k).astype(t)
        return kind, [kind, "u32"], shr
    if name == "shf" and kind == "b32" and len(flags) == 2 and flags[0] in ("l", "r") and flags[1] in ("wrap", "clamp"):
        left, wrap = flags[0] == "l", flags[1] == "wrap"

        def shf(a, b, n):
            k = shift_amount(n) % 32 if wrap else np.minimum(shift_amount(n), 32)
            joined = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
            k = k.astype(np.uint64)
            out = (joined << k) >> np.uint64(32) if left else joined >> k
            return (out & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        return kind, [kind, kind, "u32"], shf
    if name in ("popc", "clz") and not flags and kind in ("b32", "b64"):
        fn = _popc if name == "popc" else _clz
        return "u32", [kind], lambda a: fn(a.astype(np.uint64), width).astype(np.uint32)
    if name == "brev" and not flags and kind in ("b32", "b64"):
        return kind, [kind], lambda a: _brev(a.astype(np.uint64), width).astype(u)
    if name == "bfe" and not flags and width >= 32:
        def bfe(a, pos, length):        # PTX: bits [pos, pos+len) of a, the rest filled with sbit
            ua, p, n = a.view(u).astype(np.uint64), pos.astype(np.int64) & 0xFF, length.astype(np.int64) & 0xFF
            top = width - 1
            sbit = np.zeros(ua.shape, np.uint64)
            if signed:
                at = np.clip(p + n - 1, 0, top).astype(np.uint64)
                sbit = np.where(n == 0, np.uint64(0), (ua >> at) & np.uint64(1))
            out = np.zeros(ua.shape, np.uint64)
            for i in range(width):
                take = (i < n) & (p + i <= top)
                bit = np.where(take, (ua >> np.minimum(p + i, top).astype(np.uint64)) & np.uint64(1), sbit)
                out |= bit << np.uint64(i)
            return out.astype(u).view(t)
        return kind, [kind, "u32", "u32"], bfe
    if name == "bfi" and not flags and kind in ("b32", "b64"):
        def bfi(a, b, pos, length):     # PTX: b with bits [pos, pos+len) from a's lowest
            ua, out = a.astype(np.uint64), b.astype(np.uint64)
            p, n = pos.astype(np.int64) & 0xFF, length.astype(np.int64) & 0xFF
            for i in range(width):
                put = (i < n) & (p + i < width)
                at = np.minimum(p + i, width - 1).astype(np.uint64)
                bit = (ua >> np.uint64(i)) & np.uint64(1)
                out = np.where(put, (out & ~(np.uint64(1) << at)) | (bit << at), out)
            return out.astype(u)
        return kind, [kind, kind, "u32", "u32"], bfi
    if name == "prmt" and kind == "b32" and not flags:
        return kind, [kind, kind, "u32"], _prmt
    if name == "lop3" and kind == "b32" and not flags:
        return kind, [kind, kind, kind, "u32"], _lop3
    raise Unsupported(f"{opcode}: not among the integer instructions run")


def _mul_hi(a, b, width, signed):
    if width <= 32:
        wide = (a.astype(np.int64) * b.astype(np.int64)) if signed else (a.astype(np.uint64) * b.astype(np.uint64))
        return (wide >> width).astype(a.dtype)
    ua, ub = a.view(np.uint64), b.view(np.uint64)          # 64 x 64: four 32-bit partial products
    lo = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = ua & lo, ua >> np.uint64(32), ub & lo, ub >> np.uint64(32)
    mid = (a0 * b0 >> np.uint64(32)) + (a1 * b0 & lo) + (a0 * b1 & lo)
    hi = a1 * b1 + (a1 * b0 >> np.uint64(32)) + (a0 * b1 >> np.uint64(32)) + (mid >> np.uint64(32))
    if signed:          # from the unsigned high half: subtract b where a < 0 and a where b < 0
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
    return hi.view(a.dtype)


def _popc(a, width):
    count = np.zeros(a.shape, np.uint64)
    for i in range(width):
        count += (a >> np.uint64(i)) & np.uint64(1)
    return count


def _clz(a, width):
    out = np.full(a.shape, width, np.uint64)
    for i in range(width):          # the highest set bit decides
        out = np.where((a >> np.uint64(i)) & np.uint64(1), np.uint64(width - 1 - i), out)
    return out


def _brev(a, width):
    out = np.zeros(a.shape, np.uint64)
    for i in range(width):
        out |= ((a >> np.uint64(i)) & np.uint64(1)) << np.uint64(width - 1 - i)
    return out


def _prmt(a, b, c):
    """prmt.b32 d, a, b, c (default mode): byte k of d is byte c[4k+2:4k] of {b, a}, replicated
    sign when c's bit 4k+3 is set."""
    pair = (b.astype(np.uint64) << np.uint64(32)) | a.astype(np.uint64)
    out = np.zeros(a.shape, np.uint64)
    sel = c.astype(np.uint64)
    for k in range(4):
        s = (sel >> np.uint64(4 * k)) & np.uint64(0xF)
        byte = (pair >> ((s & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        byte = np.where(s & np.uint64(8), np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
        out |= byte << np.uint64(8 * k)
    return out.astype(np.uint32)


def _lop3(a, b, c, lut):
    """lop3.b32 d, a, b, c, immLut: bit i of d is bit (a_i b_i c_i) of the table (a = 0xF0,
    b = 0xCC, c = 0xAA in the table's own terms)."""
    out = np.zeros(a.shape, np.uint32)
    for i in range(8):
        on = np.where((lut.astype(np.uint32) >> np.uint32(i)) & np.uint32(1), np.uint32(0xFFFFFFFF), np.uint32(0))
        out |= on & (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out


# ---------------------------------------------------------------- predicates
def _predicates(opcode, name, mods):
    if name == "setp":          # setp.cmp.type p, a, b
        if len(mods) != 2 or mods[0] not in COMPARE or mods[1] not in NUMPY or mods[1] == "pred":
            raise Unsupported(f"{opcode}: a comparison setp.<cmp>.<type> is run (no .and/.or, no second result)")
        cmp = COMPARE[mods[0]]
        return "pred", [mods[1], mods[1]], lambda a, b: cmp(a, b)
    if len(mods) != 1 or mods[0] not in NUMPY:     # selp.type d, a, b, p
        raise Unsupported(f"{opcode}: selp.<type> is run")
    return mods[0], [mods[0], mods[0], "pred"], lambda a, b, p: np.where(p, a, b).astype(a.dtype)


# ---------------------------------------------------------------- conversions
INT_NAMES = {"s32": "int", "u32": "uint", "s64": "ll", "u64": "ull"}


def _conversion(opcode, mods):
    """cvt.<rounding>.<to>.<from>: between integers of any width, f16/bf16/f32/f64, and between
    them and 32/64-bit integers, with PTX's rounding and saturation."""
    if len(mods) < 2:
        raise Unsupported(f"{opcode}: cvt without two types")
    to, frm, flags = mods[-2], mods[-1], set(mods[:-2])
    if to in ("f16x2", "bf16x2") and frm == "f32" and flags == {"rn"}:     # cvt.rn.f16x2.f32 d, a, b: a high, b low
        half = NUMPY[to[:-2]]
        return "b32", ["f32", "f32"], lambda a, b: (a.astype(half).view(np.uint16).astype(np.uint32) << np.uint32(16)) \
            | b.astype(half).view(np.uint16).astype(np.uint32)
    if to in ("f16x2", "bf16x2") and "rs" in flags:
        raise Unsupported(f"{opcode}: stochastic rounding (.rs, sm_100 on) is not run: which bits of rbits round "
                          f"which half is not pinned down here (cvt.rn.{to}.f32 is run)")
    if to not in NUMPY or frm not in NUMPY or "pred" in (to, frm):
        raise Unsupported(f"{opcode}: a conversion this executor does not run (types {to} from {frm})")
    ftz = "ftz" in flags and frm == "f32"
    sat = "sat" in flags
    flags -= {"ftz", "sat"}
    mode = next(iter(flags)) if len(flags) == 1 else None
    if len(flags) > 1:
        raise Unsupported(f"{opcode}: modifiers {sorted(flags)}")
    src = (lambda x: _flush(x)) if ftz else (lambda x: x)
    if to[0] in "bsu" and frm[0] in "bsu" and mode is None:        # integers: truncate or extend
        if sat:
            info = np.iinfo(NUMPY[to])
            return to, [frm], lambda x: np.clip(x.astype(np.float64) if x.dtype == np.uint64 else x,
                                                info.min, info.max).astype(NUMPY[to])
        return to, [frm], lambda x: x.astype(NUMPY[to])
    if to in INT_NAMES and frm in FLOATS and mode and mode.endswith("i") and mode[:-1] in MODES:
        lib = getattr(R, f"{'float' if frm == 'f32' else 'double'}2{INT_NAMES[to]}_{MODES[mode[:-1]]}")
        return to, [frm], lambda x: _libdevice(lib, FLOATS[frm])(src(x)).view(NUMPY[to])
    if to in FLOATS and frm in INT_NAMES and mode in MODES:
        exact = to == "f64" and frm in ("s32", "u32")        # only _rn exists, and it is exact
        lib = getattr(R, f"{INT_NAMES[frm]}2{'float' if to == 'f32' else 'double'}_{'rn' if exact else MODES[mode]}")
        source = {"s32": D.int32, "u32": D.uint32, "s64": D.int64, "u64": D.uint64}[frm]
        return to, [frm], lambda x: _libdevice(lib, source)(x)
    if to == frm and to in FLOATS and mode in ("rni", "rzi", "rmi", "rpi"):     # to an integral value, same type
        whole = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode]
        return to, [frm], lambda x: whole(src(x))
    if (to, frm) == ("f32", "f64") and mode in MODES:
        lib = getattr(R, f"double2float_{MODES[mode]}")
        return to, [frm], lambda x: _libdevice(lib, D.float64)(x)
    if to in ("f16", "bf16") and frm == "f32" and mode == "rn":
        return to, [frm], lambda x: _saturated(src(x), sat).astype(NUMPY[to])
    if frm in ("f16", "bf16", "f32") and to in ("f32", "f64") and mode is None and to != frm:
        return to, [frm], lambda x: _saturated(src(x).astype(NUMPY[to]), sat)
    raise Unsupported(f"{opcode}: not among the conversions run")


def _saturated(x, sat):
    return np.where(np.isnan(x), 0, np.clip(x, 0, 1)).astype(x.dtype) if sat else x
