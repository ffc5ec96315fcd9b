"""`tl.inline_asm_elementwise` for the PTX that kernels write one instruction at a time.

Kernels reach for inline assembly mostly to get one PTX instruction Triton does not expose: an
approximate transcendental (`tanh.approx.f32`, `ex2.approx.ftz.f32`, `sin.approx.f32`), an
IEEE-rounded operation the compiler may not fuse or reorder (`add.rn.f32`, `mul.rn.f32`,
`div.rn.f32`, `fma.rn.f32`), or a conversion with a named rounding (`cvt.rzi.s32.f32`).  Such a
call runs here by the instruction's meaning, so those kernels (Mamba-3's angle cumsum, sglang's
quantisers, a fast GELU) run on a CPU; Triton's own interpreter refuses all inline assembly.

- The rounding modes (rn, rz, rm, rp) are exact: they are libdevice's `add_rn` ... `fma_ru`,
  `float2int_rz`, ... (libdevice_rounding.py), which round the exact result.
- An `.approx` instruction is computed in its type by numpy, which is closer to the true value
  than the GPU's approximation (tanh.approx.f32 is good to about 2**-11): a result may differ
  from a GPU's in its last bits, by no more than the instruction's documented error.
- `.ftz` flushes f32 subnormal operands and results to a zero of the same sign; `.sat` clamps
  the result to [0, 1] (NaN to 0), as PTX does.
- A constraint's register holds bits: an int32 block given to an `.f32` instruction is read as
  float bits, and a result type other than the instruction's (of the same width) gets the
  result's bits, as on the GPU.  Operands of another width are refused.

Anything else (several instructions, `pack` above 1, several results, integer or packed
instructions, special registers such as `%clock`) raises NotImplementedError naming the
instruction: never a wrong result.
"""
from __future__ import annotations

import re

import numpy as np

from . import dtypes as D, libdevice_rounding as R
from .arithmetic import elementwise_alu, rows_aligned
from .casts import cast
from .tensor import broadcast_shape, tensor, to_tensor

FLOATS = {"f32": D.float32, "f64": D.float64}
INTS = {"s32": D.int32, "u32": D.uint32, "s64": D.int64, "u64": D.uint64}
BITS = {"b32": D.int32, "b64": D.int64, **FLOATS, **INTS}        # what `mov` copies
MODES = {"rn": "rn", "rz": "rz", "rm": "rd", "rp": "ru"}           # PTX's names -> libdevice's
REGISTER_BITS = {"h": 16, "r": 32, "l": 64, "f": 32, "d": 64}     # constraint letter -> register width
APPROX = {"ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
          "rsqrt": lambda v: 1 / np.sqrt(v), "sqrt": np.sqrt, "rcp": lambda v: 1 / v}
ROUNDED = {"add": 2, "sub": 2, "mul": 2, "div": 2, "fma": 3, "rcp": 1, "sqrt": 1}   # libdevice's *_rn etc.


class Unsupported(NotImplementedError):
    def __init__(self, asm, why):
        super().__init__(f"tl.inline_asm_elementwise: minitriton runs one PTX arithmetic, math or conversion "
                         f"instruction of f32/f64 registers by its meaning (minitriton/inline_asm.py); "
                         f"{asm!r}: {why}")


# ---------------------------------------------------------------- reading the assembly
def parse(asm: str):
    """(opcode, [operand numbers]) of one instruction `op.mods $0, $1, ...;`, braces allowed."""
    text = " ".join(asm.split())
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    statements = [s.strip() for s in text.split(";") if s.strip()]
    if len(statements) != 1:
        raise Unsupported(asm, f"{len(statements)} instructions, not one")
    found = re.fullmatch(r"([a-z][a-z0-9]*(?:\.[A-Za-z0-9]+)*)\s+(.+)", statements[0])
    if found is None:
        raise Unsupported(asm, "not an instruction with operands")
    opcode, operands = found.groups()
    names = [o.strip() for o in operands.split(",")]
    if not all(re.fullmatch(r"\$\d+", o) for o in names):
        odd = next(o for o in names if not re.fullmatch(r"\$\d+", o))
        raise Unsupported(asm, f"operand {odd!r} is not an argument ($0, $1, ...): registers, immediates and "
                               f"vectors are not run")
    return opcode, [int(o[1:]) for o in names]


def instruction(asm: str, opcode: str):
    """(function of the operand tensors, operand types, result type) for an opcode."""
    name, *mods = opcode.split(".")
    if name == "cvt":
        return _conversion(asm, mods)
    if not mods:
        raise Unsupported(asm, "no type")
    kind, flags = mods[-1], mods[:-1]
    if name == "mov":
        if kind not in BITS or flags:
            raise Unsupported(asm, f"mov of .{kind}")
        return (lambda x: x), [BITS[kind]], BITS[kind]
    if kind not in FLOATS:
        raise Unsupported(asm, f".{kind} instructions are not run (only .f32 and .f64)")
    dt = FLOATS[kind]
    ftz, sat = "ftz" in flags, "sat" in flags
    modes = [MODES[f] for f in flags if f in MODES]
    rest = set(flags) - set(MODES) - {"ftz", "sat", "approx", "full", "NaN"}
    if rest or len(modes) > 1:
        raise Unsupported(asm, f"modifiers {flags}")
    if name in ROUNDED and (modes or (name in ("add", "sub", "mul") and "approx" not in flags)):
        n, fn = ROUNDED[name], getattr(R, f"{name}_{modes[0] if modes else 'rn'}")
    elif name in APPROX and "approx" in flags:
        n, fn = 1, _numpy(APPROX[name], dt)
    elif name == "div" and ("approx" in flags or "full" in flags):
        n, fn = 2, _numpy(np.divide, dt)
    elif name in ("abs", "neg"):
        n, fn = 1, _numpy(np.abs if name == "abs" else np.negative, dt)
    elif name in ("min", "max"):
        n, fn = 2, _numpy(lambda a, b: _extreme(a, b, name == "max", "NaN" in flags), dt)
    elif name == "copysign":        # PTX: copysign d, a, b gives b with the sign of a
        n, fn = 2, _numpy(lambda a, b: np.copysign(b, a), dt)
    else:
        raise Unsupported(asm, f"{name}{''.join('.' + f for f in flags)} is not among the instructions run")
    if dt is not D.float32:
        ftz = False                 # PTX's .ftz applies to .f32 only
    return _finish(fn, ftz, sat), [dt] * n, dt


def _conversion(asm, mods):
    """cvt.<rounding>.<to>.<from>: between f32/f64, and between them and 32/64-bit integers."""
    if len(mods) < 2:
        raise Unsupported(asm, "cvt without two types")
    to, frm, flags = mods[-2], mods[-1], set(mods[:-2]) - {"sat"}
    ftz = "ftz" in flags and frm == "f32"
    flags.discard("ftz")
    mode = next(iter(flags)) if len(flags) == 1 else None
    if len(flags) > 1:
        raise Unsupported(asm, f"modifiers {sorted(flags)}")
    if to in INTS and frm in FLOATS and mode and mode.endswith("i") and mode[:-1] in MODES:
        width = {"s32": "int", "u32": "uint", "s64": "ll", "u64": "ull"}[to]
        fn = getattr(R, f"{'float' if frm == 'f32' else 'double'}2{width}_{MODES[mode[:-1]]}")
        return _finish(lambda x: cast(fn(x), INTS[to], bitcast=True), ftz, False), [FLOATS[frm]], INTS[to]
    if to in FLOATS and frm in INTS and mode in MODES:
        width = {"s32": "int", "u32": "uint", "s64": "ll", "u64": "ull"}[frm]
        exact = to == "f64" and frm in ("s32", "u32")        # only _rn exists, and it is exact
        fn = getattr(R, f"{width}2{'float' if to == 'f32' else 'double'}_{'rn' if exact else MODES[mode]}")
        return fn, [INTS[frm]], FLOATS[to]
    if (to, frm) == ("f32", "f64") and mode in MODES:
        return _finish(getattr(R, f"double2float_{MODES[mode]}"), False, False), [D.float64], D.float32
    if (to, frm) == ("f64", "f32") and mode is None:
        return _finish(lambda x: cast(x, D.float64), ftz, False), [D.float32], D.float64
    raise Unsupported(asm, f"conversion {'.'.join(['cvt', *mods])}")


# ---------------------------------------------------------------- the operations
def _numpy(fn, dt):
    """fn of aligned numpy arrays in dt, as a function of tensors."""
    def op(*ts):
        shape = ts[0].shape
        for t in ts[1:]:
            shape = broadcast_shape(shape, t.shape)
        with np.errstate(all="ignore"):
            arrays = [rows_aligned(t, len(shape), dt) for t in ts]
            return tensor(np.asarray(fn(*arrays), dt.container), dt, shape)
    return op


def _extreme(a, b, is_max, propagate_nan):
    """PTX's max/min: a NaN operand loses to a number unless .NaN; +0 is above -0."""
    out = (np.maximum if is_max else np.minimum)(a, b) if propagate_nan else (np.fmax if is_max else np.fmin)(a, b)
    zeros = (a == 0) & (b == 0)
    negative = (np.signbit(a) & np.signbit(b)) if is_max else (np.signbit(a) | np.signbit(b))
    return np.where(zeros, np.where(negative, -0.0, 0.0).astype(a.dtype), out)


def _flush(t: tensor) -> tensor:
    """f32 subnormals to zero of their sign."""
    v = rows_aligned(t, len(t.shape), D.float32)
    small = np.abs(v) < np.finfo(np.float32).tiny
    return tensor(np.where(small, np.copysign(np.float32(0), v), v), D.float32, t.shape) if small.any() else t


def _saturate(t: tensor) -> tensor:
    v = rows_aligned(t, len(t.shape), t.dtype)
    return tensor(np.where(np.isnan(v), 0, np.clip(v, 0, 1)).astype(t.dtype.container), t.dtype, t.shape)


def _finish(fn, ftz, sat):
    def op(*ts):
        if ftz:
            ts = [_flush(t) if t.dtype is D.float32 else t for t in ts]
        out = fn(*ts)
        if ftz and out.dtype is D.float32:
            out = _flush(out)
        return _saturate(out) if sat else out
    return op


# ---------------------------------------------------------------- the builtin
def _as_register(t: tensor, want, position, asm) -> tensor:
    """An operand as the instruction reads it: its own type, or the same bits in `want`."""
    if t.buf is not None:
        raise TypeError(f"tl.inline_asm_elementwise: argument {position} is a pointer; {asm!r} reads a "
                        f"{want} register")
    if t.dtype is want:
        return t
    if t.dtype.bits != want.bits:
        raise TypeError(f"tl.inline_asm_elementwise: argument {position} is {t.dtype}; {asm!r} reads a "
                        f"{want.bits}-bit {want} register")
    return cast(t, want, bitcast=True)


def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, **_):
    """Triton's signature; `is_pure` changes nothing here (every instruction run is pure)."""
    asm, constraints, pack = (D.constexpr_value(x) for x in (asm, constraints, pack))
    dtype = D.constexpr_value(dtype)
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise TypeError(f"tl.inline_asm_elementwise: asm and constraints are strings, got {type(asm).__name__} "
                        f"and {type(constraints).__name__}")
    if isinstance(dtype, (tuple, list)):
        if len(dtype) != 1:
            raise Unsupported(asm, f"{len(dtype)} results (one instruction gives one)")
        dtype = D.constexpr_value(dtype[0])
    if pack != 1:
        raise Unsupported(asm, f"pack={pack} (elements packed in a register); pack=1 is run")
    if "%" in asm:
        raise Unsupported(asm, "it reads a GPU register (%...)")
    ts = [to_tensor(a) for a in args]
    parts = [c.strip() for c in constraints.split(",") if c.strip()]
    outs = [c for c in parts if c.startswith("=")]
    if len(outs) != 1 or not parts[0].startswith("=") or len(parts) != 1 + len(ts):
        raise ValueError(f"tl.inline_asm_elementwise: constraints {constraints!r} must name one result ('=r', "
                         f"'=f', ...) and then one register per argument ({len(ts)} given)")
    opcode, numbers = parse(asm)
    fn, operand_types, result_type = instruction(asm, opcode)
    if numbers[0] != 0 or len(numbers) != 1 + len(operand_types) or \
            sorted(numbers[1:]) != list(range(1, len(numbers))) or len(numbers) - 1 != len(ts):
        raise ValueError(f"tl.inline_asm_elementwise: {asm!r} needs its result as $0 and its "
                         f"{len(operand_types)} operands as $1..${len(operand_types)}, one per argument "
                         f"({len(ts)} given)")
    wanted = [result_type] + [operand_types[numbers[1:].index(k)] for k in range(1, len(numbers))]
    for letter, want in zip([p.lstrip("=") for p in parts], wanted):
        if REGISTER_BITS.get(letter) != want.bits:
            raise ValueError(f"tl.inline_asm_elementwise: constraint {letter!r} of {constraints!r} is not a "
                             f"{want.bits}-bit register, which {asm!r} uses")
    out = fn(*[_as_register(ts[k - 1], operand_types[i], k, asm) for i, k in enumerate(numbers[1:])])
    if not isinstance(dtype, D.dtype) or dtype.bits != result_type.bits:
        raise TypeError(f"tl.inline_asm_elementwise: dtype {dtype} is not the {result_type.bits}-bit result "
                        f"of {asm!r}")
    return elementwise_alu(out if dtype is result_type else cast(out, dtype, bitcast=True))
