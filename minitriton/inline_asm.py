"""`tl.inline_asm_elementwise`: the PTX that kernels write, run by its meaning.

Kernels reach for inline assembly to get an instruction Triton does not expose: an approximate
transcendental (`tanh.approx.f32`, `ex2.approx.ftz.f32`), an IEEE-rounded operation the compiler
may not fuse or reorder (`add.rn.f32`, `div.rn.f32`), a conversion with a named rounding
(`cvt.rzi.s32.f32`), or bit work (`shf.l.wrap.b32`, `prmt.b32`, `lop3.b32`, a few instructions
over four bytes packed in a register).  Such a call runs here: the assembly is read as a short
program over registers, one lane per element, each instruction computed by ptx.py.  So those
kernels (Mamba-3's angle cumsum, sglang's quantisers, fast-GELU kernels, Inductor's tests) run on
a CPU; Triton's own interpreter refuses all inline assembly.

What a register holds is bits, as on the GPU: `$0 .. $(k-1)` are the k results and the rest the
arguments, in order; an argument's register holds its element's bits (an int32 block read by an
`.f32` instruction is its float bits), and with `pack` p that many consecutive elements along the
last axis, element j in bits [j*w, (j+1)*w).  A result's bits become elements of its `dtype`.
Temporaries are declared with `.reg .b32 t;` inside `{ }`; operands are registers, `$n`, or
integer and float immediates (`0x1F`, `3`, `1.5`, `0f3F800000`); an instruction may be guarded by
a predicate (`@p`, `@!p`).

Anything else (memory operands, branches, special registers such as `%clock`, vector or packed
float types, more than one register per operand) raises NotImplementedError naming the assembly,
never a wrong result; a constraint list that does not match the arguments is a ValueError.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from . import dtypes as D, ptx
from .arithmetic import elementwise_alu, rows_aligned
from .casts import cast
from .tensor import broadcast_shape, tensor, to_tensor

REGISTER_BITS = {"h": 16, "r": 32, "l": 64, "f": 32, "d": 64}     # constraint letter -> register width
UNSIGNED = {8: (D.uint8, np.uint8), 16: (D.uint16, np.uint16), 32: (D.uint32, np.uint32), 64: (D.uint64, np.uint64)}


class Unsupported(NotImplementedError):
    def __init__(self, asm, why):
        super().__init__(f"tl.inline_asm_elementwise: minitriton runs PTX arithmetic, bit, comparison and "
                         f"conversion instructions on registers (minitriton/inline_asm.py, ptx.py); {asm!r}: {why}")


# ---------------------------------------------------------------- reading the assembly
def uncommented(asm: str) -> str:
    """The assembly without its `// ...` and `/* ... */` comments."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", asm, flags=re.S))


def _split(asm: str) -> list:
    """The statements of the assembly: `;` ends one; a brace that opens a statement is a scope
    (dropped), a brace inside one is a vector operand (`{a, b}`, kept)."""
    text = uncommented(asm)
    out, current, vector = [], "", 0
    for ch in text:
        if ch == "{" and not current.strip():
            current = ""
        elif ch == "{":
            vector += 1
            current += ch
        elif ch == "}" and vector:
            vector -= 1
            current += ch
        elif ch == "}" or ch == ";":
            out.append(current.strip())
            current = ""
        else:
            current += ch
    out.append(current.strip())
    return [s for s in out if s]


def _operands(text: str) -> list:
    """Comma-separated operands; a vector `{a, b}` is one operand, a list of its names."""
    out, depth, current = [], 0, ""
    for ch in text + ",":
        if ch == "," and not depth:
            o = current.strip()
            out.append([v.strip() for v in o[1:-1].split(",")] if o.startswith("{") else o)
            current = ""
            continue
        depth += (ch == "{") - (ch == "}")
        current += ch
    return out


def statements(asm: str) -> list:
    """[(kind, ...)]: ("reg", type, [names]) declarations and ("op", guard, opcode, [operands])."""
    out = []
    for line in _split(asm):
        if line.startswith(".reg"):
            found = re.fullmatch(r"\.reg\s+\.(\w+)\s+(.+)", line)
            if found is None or found.group(1) not in ptx.NUMPY:
                raise Unsupported(asm, f"declaration {line!r}")
            names = []
            for n in (x.strip() for x in found.group(2).split(",")):
                ranged = re.fullmatch(r"([A-Za-z_]\w*)<(\d+)>", n)
                if ranged:                  # tmp<4>: tmp0 .. tmp3
                    names += [f"{ranged.group(1)}{k}" for k in range(int(ranged.group(2)))]
                elif re.fullmatch(r"[A-Za-z_]\w*", n):
                    names.append(n)
                else:
                    raise Unsupported(asm, f"declaration {line!r}")
            out.append(("reg", found.group(1), names))
            continue
        guard = None
        found = re.match(r"@(!?)([A-Za-z_]\w*)\s+", line)
        if found:
            guard, line = (found.group(2), found.group(1) == "!"), line[found.end():]
        found = re.fullmatch(r"([a-z][a-z0-9]*(?:\.[A-Za-z0-9]+)*)\s+(.+)", line)
        if found is None:
            raise Unsupported(asm, f"{line!r} is not an instruction with operands")
        opcode, operands = found.groups()
        if opcode.split(".")[0] in ("ld", "st", "bra", "call", "ret", "exit", "bar", "atom", "red", "vote", "shfl"):
            raise Unsupported(asm, f"{opcode}: memory, branches, calls and warp instructions are not run")
        out.append(("op", guard, opcode, _operands(operands)))
    if not any(s[0] == "op" for s in out):
        raise Unsupported(asm, "no instruction")
    return out


def _immediate(text: str, kind: str):
    """An immediate operand as a 0-d array of type `kind`, or None if `text` is not one."""
    np_type = ptx.NUMPY[kind]
    if re.fullmatch(r"0[fF][0-9A-Fa-f]{8}", text):
        value = struct.unpack(">f", bytes.fromhex(text[2:]))[0]
    elif re.fullmatch(r"0[dD][0-9A-Fa-f]{16}", text):
        value = struct.unpack(">d", bytes.fromhex(text[2:]))[0]
    elif re.fullmatch(r"-?(0[xX][0-9A-Fa-f]+|\d+)[uU]?", text):
        value = int(text.rstrip("uU"), 0)
        if np.dtype(np_type).kind in "iub":
            width = ptx.bits(kind)
            return np.array(value % (1 << width), UNSIGNED[width][1]).view(np_type) if width > 1 else np.array(value != 0)
    elif re.fullmatch(r"-?\d+\.\d*(e-?\d+)?", text):
        value = float(text)
    else:
        return None
    if np.dtype(np_type).kind not in "f" and np_type is not ptx.NUMPY["bf16"]:
        raise ValueError(f"tl.inline_asm_elementwise: a float immediate {text!r} for a .{kind} operand")
    return np.array(value, np_type)


# ---------------------------------------------------------------- registers
class Registers:
    """The program's registers: name -> (bits as an unsigned array, or bools for a predicate)."""

    def __init__(self, asm, shape):
        self.asm, self.shape, self.values, self.widths = asm, shape, {}, {}

    def declare(self, name, width):
        self.widths[name] = width

    def read(self, text, kind):
        width = ptx.bits(kind)
        if text not in self.widths and not text.startswith("$"):
            imm = _immediate(text, kind)
            if imm is None:
                raise Unsupported(self.asm, f"operand {text!r} is not a register, an argument or an immediate")
            return imm
        if text not in self.widths:
            raise ValueError(f"tl.inline_asm_elementwise: {self.asm!r} names {text}, but there are "
                             f"{sum(k.startswith('$') for k in self.widths)} results and arguments")
        if text not in self.values:
            raise ValueError(f"tl.inline_asm_elementwise: {self.asm!r} reads {text} before anything is written to it")
        v, have = self.values[text], self.widths[text]
        if kind == "pred" or have == 1:
            if kind != "pred" or have != 1:
                raise ValueError(f"tl.inline_asm_elementwise: {text} is {'a predicate' if have == 1 else 'not a predicate'}"
                                 f" in {self.asm!r}")
            return v
        if width > have:
            raise ValueError(f"tl.inline_asm_elementwise: {text} is a {have}-bit register; {self.asm!r} reads it "
                             f"as .{kind}")
        if width < have:
            v = v.astype(UNSIGNED[width][1])            # PTX reads the low bits of a wider register
        return v.view(ptx.NUMPY[kind])

    def write(self, text, kind, value, guard=None):
        if text not in self.widths:
            raise ValueError(f"tl.inline_asm_elementwise: {self.asm!r} writes {text}, which is not a register")
        have, width = self.widths[text], ptx.bits(kind)
        value = np.broadcast_to(np.asarray(value, ptx.NUMPY[kind]), self.shape)
        if have == 1 or width == 1:
            if have != width:
                raise ValueError(f"tl.inline_asm_elementwise: {text} and .{kind} in {self.asm!r}: a predicate "
                                 f"and a value")
            bits = value
        else:
            bits = value.view(UNSIGNED[width][1])
            if width != have:
                if width > have:
                    raise ValueError(f"tl.inline_asm_elementwise: a .{kind} result into {text}, a {have}-bit "
                                     f"register, in {self.asm!r}")
                bits = bits.astype(UNSIGNED[have][1])
        if guard is not None:
            keep = self.values.get(text, np.zeros(self.shape, bits.dtype))
            bits = np.where(guard, bits, keep).astype(bits.dtype)
        self.values[text] = bits


def run(asm, program, regs: Registers):
    for s in program:
        if s[0] == "reg":
            for name in s[2]:
                regs.declare(name, ptx.bits(s[1]))
            continue
        _, guard, opcode, operands = s
        if opcode == "nanosleep.u32":   # a pause: it changes no register, and time is not modelled
            if len(operands) != 1:
                raise ValueError(f"tl.inline_asm_elementwise: nanosleep.u32 takes 1 operand, {len(operands)} "
                                 f"given in {asm!r}")
            regs.read(operands[0], "u32")
            continue
        if any(isinstance(o, list) for o in operands):
            _vector_move(asm, guard, opcode, operands, regs)
            continue
        try:
            result, sources, fn = ptx.decode(opcode)
        except ptx.Unsupported as e:
            raise Unsupported(asm, str(e)) from None
        if len(operands) != 1 + len(sources):
            raise ValueError(f"tl.inline_asm_elementwise: {opcode} takes {1 + len(sources)} operands, "
                             f"{len(operands)} given in {asm!r}")
        values = [np.broadcast_to(regs.read(o, k), regs.shape) for o, k in zip(operands[1:], sources)]
        when = None
        if guard is not None:
            when = regs.read(guard[0], "pred")
            when = ~when if guard[1] else when
        with np.errstate(all="ignore"):
            regs.write(operands[0], result, fn(*values), when)


def _vector_move(asm, guard, opcode, operands, regs):
    """mov.bN {a, b, ...}, r splits r's bits among a, b, ... (a lowest); mov.bN r, {a, b, ...} joins them."""
    name, *mods = opcode.split(".")
    if name != "mov" or len(mods) != 1 or mods[0] not in ("b16", "b32", "b64") or len(operands) != 2 or guard:
        raise Unsupported(asm, f"{opcode} with a vector operand (only mov.b16/b32/b64 splits and joins)")
    width = ptx.bits(mods[0])
    dst, src = operands
    parts = dst if isinstance(dst, list) else src
    if isinstance(dst, list) == isinstance(src, list) or width % len(parts) or width // len(parts) < 8:
        raise Unsupported(asm, f"{opcode}: one vector of 8-bit or wider parts, on one side")
    piece = width // len(parts)
    mask = np.uint64((1 << piece) - 1)
    if isinstance(dst, list):
        whole = np.broadcast_to(regs.read(src, mods[0]), regs.shape).astype(np.uint64)
        for k, part in enumerate(dst):
            regs.write(part, f"b{piece}", ((whole >> np.uint64(k * piece)) & mask).astype(UNSIGNED[piece][1]))
        return
    whole = np.zeros(regs.shape, np.uint64)
    for k, part in enumerate(src):
        whole |= np.broadcast_to(regs.read(part, f"b{piece}"), regs.shape).astype(np.uint64) << np.uint64(k * piece)
    regs.write(dst, mods[0], whole.astype(UNSIGNED[width][1]))


# ---------------------------------------------------------------- operands as registers
def layout(bits: int, pack: int, asm: str):
    """(registers per operand, elements per register, register width) for `pack` elements of
    `bits` bits, as Triton lays them out: up to 32 bits in one register, else 32-bit registers
    (or one per element, for 64-bit elements)."""
    total = bits * pack
    if total <= 32:
        if total < 16:
            raise Unsupported(asm, f"{bits}-bit elements packed {pack} to a register make {total} bits; "
                                   f"registers of 16, 32 and 64 bits are run")
        return 1, pack, total
    width = max(32, bits)
    return total // width, width // bits, width


def _registers_of(t: tensor, shape, pack: int, count: int, per: int) -> list:
    """An argument's registers: its elements' bits, `per` of them to a register, `count`
    registers for each group of `pack` consecutive elements along the last axis."""
    width = t.dtype.bits
    dt, np_u = UNSIGNED[width]
    raw = t if t.dtype is dt else cast(t, dt, bitcast=True)
    v = rows_aligned(raw, len(shape), dt)
    v = np.broadcast_to(v, (v.shape[0],) + tuple(shape)).astype(np_u)
    if pack == 1:
        return [v]
    groups = v.reshape(v.shape[:-1] + (v.shape[-1] // pack, pack))
    wide = UNSIGNED[width * per][1]
    out = []
    for r in range(count):
        reg = np.zeros(groups.shape[:-1], wide)
        for j in range(per):
            reg |= groups[..., r * per + j].astype(wide) << wide(j * width)
        out.append(reg)
    return out


def _elements_of(registers: list, dtype, shape, pack: int, per: int) -> tensor:
    width = dtype.bits
    dt, np_u = UNSIGNED[width]
    if pack > 1:
        parts = [(reg >> reg.dtype.type(j * width)).astype(np_u) for reg in registers for j in range(per)]
        bits = np.stack(parts, axis=-1)
        bits = bits.reshape(bits.shape[:-2] + (bits.shape[-2] * pack,))
    else:
        bits = registers[0].astype(np_u)
    out = tensor(np.ascontiguousarray(bits.reshape((bits.shape[0],) + tuple(shape))), dt, shape)
    return out if dtype is dt else cast(out, dtype, bitcast=True)


# ---------------------------------------------------------------- the builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack, **_):
    """Triton's signature; `is_pure` changes nothing here (nothing run has side effects)."""
    asm, constraints, pack = (D.constexpr_value(x) for x in (asm, constraints, pack))
    dtype = D.constexpr_value(dtype)
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise TypeError(f"tl.inline_asm_elementwise: asm and constraints are strings, got {type(asm).__name__} "
                        f"and {type(constraints).__name__}")
    several = isinstance(dtype, (tuple, list))
    dtypes = [D.constexpr_value(d) for d in dtype] if several else [dtype]
    if not dtypes or not all(isinstance(d, D.dtype) and d.bits in UNSIGNED for d in dtypes):
        raise TypeError(f"tl.inline_asm_elementwise: dtype must be a type of 8 to 64 bits or a tuple of them, "
                        f"got {dtype!r}")
    if not isinstance(pack, int) or pack < 1:
        raise ValueError(f"tl.inline_asm_elementwise: pack must be a positive integer, got {pack!r}")
    if "%" in uncommented(asm):
        raise Unsupported(asm, "it reads a GPU register (%...)")
    ts = [to_tensor(a) for a in args]
    if any(t.buf is not None for t in ts):
        raise Unsupported(asm, "a pointer argument (memory is not read or written by assembly here)")
    if any(t.dtype.bits not in UNSIGNED for t in ts):
        raise TypeError("tl.inline_asm_elementwise: arguments of 8 to 64 bits are passed in registers, got "
                        + ", ".join(str(t.dtype) for t in ts))
    shape = ts[0].shape if ts else ()
    for t in ts[1:]:
        shape = broadcast_shape(shape, t.shape)
    if pack > 1 and (not shape or shape[-1] % pack):
        raise ValueError(f"tl.inline_asm_elementwise: pack={pack} needs a block whose last axis is a multiple of "
                         f"{pack}, got shape {list(shape)}")
    layouts = [layout(d.bits, pack, asm) for d in dtypes] + [layout(t.dtype.bits, pack, asm) for t in ts]
    parts = [c.strip().replace("&", "") for c in constraints.split(",") if c.strip()]
    n_out = sum(c for c, _, _ in layouts[:len(dtypes)])
    wanted = [w for c, _, w in layouts for _ in range(c)]
    if len(parts) != len(wanted) or not all(c.startswith("=") for c in parts[:n_out]) \
            or any(c.startswith("=") for c in parts[n_out:]):
        raise ValueError(f"tl.inline_asm_elementwise: constraints {constraints!r} must name {n_out} result "
                         f"register{'s' if n_out > 1 else ''} ('=r', '=f', ...) and then "
                         f"{len(wanted) - n_out} argument register{'s' if len(wanted) - n_out != 1 else ''}, "
                         f"for {len(dtypes)} result{'s' if len(dtypes) > 1 else ''} and {len(ts)} "
                         f"argument{'s' if len(ts) != 1 else ''} with pack={pack}")
    for k, (letter, width) in enumerate(zip([c.lstrip("=") for c in parts], wanted)):
        if REGISTER_BITS.get(letter) != width:
            raise ValueError(f"tl.inline_asm_elementwise: constraint {letter!r} of {constraints!r} (${k}) is not "
                             f"the {width}-bit register its elements need")
    program = statements(asm)
    packed = tuple(shape[:-1]) + (shape[-1] // pack,) if pack > 1 else tuple(shape)
    inputs = [reg for t, (count, per, _) in zip(ts, layouts[len(dtypes):])
              for reg in _registers_of(t, shape, pack, count, per)]
    rows = max([v.shape[0] for v in inputs], default=1)
    regs = Registers(asm, (rows,) + packed)
    for k, width in enumerate(wanted):
        regs.declare(f"${k}", width)
    for k, v in enumerate(inputs):
        regs.values[f"${n_out + k}"] = np.broadcast_to(v, (rows,) + packed)
    run(asm, program, regs)
    results, first = [], 0
    for d, (count, per, _) in zip(dtypes, layouts):
        missing = [f"${k}" for k in range(first, first + count) if f"${k}" not in regs.values]
        if missing:
            raise ValueError(f"tl.inline_asm_elementwise: {asm!r} never writes {', '.join(missing)}")
        registers = [regs.values[f"${k}"] for k in range(first, first + count)]
        results.append(elementwise_alu(_elements_of(registers, d, shape, pack, per)))
        first += count
    return tuple(results) if several else results[0]
