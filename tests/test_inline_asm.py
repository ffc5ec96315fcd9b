"""tl.inline_asm_elementwise: PTX run by its meaning (minitriton/inline_asm.py, ptx.py), the rest
refused by name.  The forms are the ones real kernels write (Mamba-3's tanh.approx, sglang's
div.rn, fast-GELU kernels' add.rn / mul.rn, bit work on packed bytes); Triton's own tests of it are
in tests/triton/test_inline_asm.py."""
import ml_dtypes
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import lanes


@mt.jit
def unary_kernel(x_ptr, y_ptr, n, ASM: tl.constexpr, C: tl.constexpr, OUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    y = tl.inline_asm_elementwise(ASM, C, [tl.load(x_ptr + offs, mask=m)], dtype=OUT, is_pure=True, pack=1)
    tl.store(y_ptr + offs, y, mask=m)


@mt.jit
def nary_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, ASM: tl.constexpr, C: tl.constexpr, THREE: tl.constexpr,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x, y = tl.load(x_ptr + offs, mask=m), tl.load(y_ptr + offs, mask=m)
    if THREE:
        r = tl.inline_asm_elementwise(asm=ASM, constraints=C, args=[x, y, tl.load(z_ptr + offs, mask=m)],
                                      dtype=x.dtype, is_pure=True, pack=1)
    else:
        r = tl.inline_asm_elementwise(asm=ASM, constraints=C, args=[x, y], dtype=x.dtype, is_pure=True, pack=1)
    tl.store(out_ptr + offs, r, mask=m)


def unary(asm, x, constraints="=f,f", out=tl.float32):
    y = np.empty(x.shape, out.np if hasattr(out, "np") else np.float32)
    unary_kernel[(triton_cdiv(x.size, 128),)](x, y, x.size, asm, constraints, out, BLOCK=128)
    return y


def nary(asm, *xs, constraints=None):
    out = np.empty_like(xs[0])
    letter = "f" if xs[0].dtype == np.float32 else "d"
    constraints = constraints or ",".join(["=" + letter] + [letter] * len(xs))
    z = xs[2] if len(xs) == 3 else xs[0]
    nary_kernel[(triton_cdiv(out.size, 128),)](xs[0], xs[1], z, out, out.size, asm, constraints, len(xs) == 3,
                                               BLOCK=128)
    return out


def triton_cdiv(a, b):
    return (a + b - 1) // b


RNG = np.random.default_rng(7)
X = (RNG.standard_normal(300) * 3).astype(np.float32)
Y = (RNG.standard_normal(300) * 3).astype(np.float32)


@pytest.mark.parametrize("asm, ref", [
    ("tanh.approx.f32 $0, $1;", np.tanh), ("ex2.approx.ftz.f32 $0, $1;", np.exp2), ("sin.approx.f32 $0, $1;", np.sin),
    ("{ cos.approx.f32 $0, $1; }", np.cos), ("lg2.approx.f32 $0, $1;", lambda v: np.log2(np.abs(v))),
    ("rsqrt.approx.f32 $0, $1;", lambda v: 1 / np.sqrt(np.abs(v))), ("rcp.approx.ftz.f32 $0, $1;", lambda v: 1 / v),
    ("sqrt.rn.f32 $0, $1;", lambda v: np.sqrt(np.abs(v))), ("abs.f32 $0, $1;", np.abs), ("neg.f32 $0, $1;", np.negative),
    ("mov.b32 $0, $1;", lambda v: v)])
def test_one_operand_instructions_compute_their_function_in_float32(asm, ref):
    x = np.abs(X) if ("lg2" in asm or "sqrt" in asm) else X
    np.testing.assert_array_equal(unary(asm, x), ref(x).astype(np.float32))


@pytest.mark.parametrize("asm, ref", [
    ("add.rn.f32 $0, $1, $2;", np.add), ("sub.rn.f32 $0, $1, $2;", np.subtract), ("mul.rn.f32 $0, $1, $2;", np.multiply),
    ("div.rn.f32 $0, $1, $2;", np.divide), ("div.full.f32 $0, $1, $2;", np.divide), ("add.f32 $0, $1, $2;", np.add),
    ("sub.rn.f32 $0, $2, $1;", lambda a, b: b - a),             # operands in any order
    ("copysign.f32 $0, $1, $2;", lambda a, b: np.copysign(b, a))])  # PTX: b with the sign of a
def test_two_operand_instructions_round_to_nearest(asm, ref):
    np.testing.assert_array_equal(nary(asm, X, Y), ref(X, Y))
    x64, y64 = X.astype(np.float64) / 7, Y.astype(np.float64) / 3
    np.testing.assert_array_equal(nary(asm.replace("f32", "f64"), x64, y64), ref(x64, y64))


def test_directed_roundings_and_fma_are_exact():
    a = np.array([1.0, 1.0, -1.0, 3.0, 1e30], np.float32)
    b = np.array([2.0 ** -30, -(2.0 ** -30), 2.0 ** -30, 1 / 3, 1e30], np.float32)
    exact = a.astype(np.float64) + b.astype(np.float64)
    down, up = nary("add.rm.f32 $0, $1, $2;", a, b), nary("add.rp.f32 $0, $1, $2;", a, b)
    zero = nary("add.rz.f32 $0, $1, $2;", a, b)
    assert np.all(down <= exact) and np.all(up >= exact) and np.all(np.abs(zero) <= np.abs(exact))
    assert np.all((up.astype(np.float64) - down) <= np.spacing(np.abs(up)))
    assert up[0] == np.nextafter(np.float32(1), np.float32(2)) and down[0] == 1 and zero[1] < 1
    # fma rounds once: x*y+z with the product's low bits kept
    x = np.float32(1 + 2 ** -12) * np.ones(4, np.float32)
    z = -np.float32(1 + 2 ** -11) * np.ones(4, np.float32)
    got = nary("fma.rn.f32 $0, $1, $2, $3;", x, x, z)
    assert got[0] == np.float32(2.0 ** -24) and (x * x + z)[0] == 0      # unfused, the product rounds it away


def test_conversions_round_saturate_and_reinterpret():
    x = np.array([2.5, -2.5, 3.7, -3.7, 1e10, -1e10, np.nan, 0.5], np.float32)
    near = unary("cvt.rni.s32.f32 $0, $1;", x, "=r,f", tl.int32)
    np.testing.assert_array_equal(near, [2, -2, 4, -4, 2 ** 31 - 1, -2 ** 31, 0, 0])
    np.testing.assert_array_equal(unary("cvt.rzi.s32.f32 $0, $1;", x, "=r,f", tl.int32),
                                  [2, -2, 3, -3, 2 ** 31 - 1, -2 ** 31, 0, 0])
    np.testing.assert_array_equal(unary("cvt.rmi.u32.f32 $0, $1;", x, "=r,f", tl.uint32),
                                  [2, 0, 3, 0, 2 ** 32 - 1, 0, 0, 0])
    big = np.array([2 ** 24 + 1, -(2 ** 24 + 1), 7, 2 ** 31 - 1], np.int32)
    np.testing.assert_array_equal(unary("cvt.rz.f32.s32 $0, $1;", big, "=f,r"), [2 ** 24, -(2 ** 24), 7, 2 ** 31 - 128])
    np.testing.assert_array_equal(unary("cvt.rn.f32.s32 $0, $1;", big, "=f,r"), big.astype(np.float32))
    d = np.array([1 + 2.0 ** -40, -(1 + 2.0 ** -40)], np.float64)
    np.testing.assert_array_equal(unary("cvt.rp.f32.f64 $0, $1;", d, "=f,d"),
                                  [np.nextafter(np.float32(1), np.float32(2)), -1])
    np.testing.assert_array_equal(unary("cvt.f64.f32 $0, $1;", X, "=d,f", tl.float64), X.astype(np.float64))
    halves = np.array([2.5, -2.5, 3.5, -0.7], np.float32)
    np.testing.assert_array_equal(unary("cvt.rni.f32.f32 $0, $1;", halves), [2.0, -2.0, 4.0, -1.0])
    np.testing.assert_array_equal(unary("cvt.rmi.f32.f32 $0, $1;", halves), [2.0, -3.0, 3.0, -1.0])
    # a register holds bits: an int32 block read by an f32 instruction, an f32 result kept as int32
    bits = X.view(np.int32)
    np.testing.assert_array_equal(unary("abs.f32 $0, $1;", bits, "=r,r", tl.int32), np.abs(X).view(np.int32))


def test_ftz_sat_and_the_ordering_of_zeros_and_nans():
    tiny = np.float32(1e-40)                         # subnormal
    x = np.array([tiny, -tiny, 1.0, 2.0, -0.5, np.nan], np.float32)
    got = unary("abs.ftz.f32 $0, $1;", x)
    assert got[0] == 0 and got[1] == 0 and not np.signbit(got[1]) and got[2] == 1
    assert np.signbit(unary("neg.ftz.f32 $0, $1;", x)[0])      # flushed to +0, negated to -0
    np.testing.assert_array_equal(unary("abs.f32 $0, $1;", x)[:2], [tiny, tiny])       # no .ftz: kept
    sat = nary("add.rn.sat.f32 $0, $1, $2;", x, np.float32(0.25) * np.ones_like(x))
    np.testing.assert_array_equal(sat, [0.25, 0.25, 1.0, 1.0, 0.0, 0.0])
    a = np.array([0.0, -0.0, np.nan, 1.0], np.float32)
    b = np.array([-0.0, 0.0, 2.0, np.nan], np.float32)
    mx, mn = nary("max.f32 $0, $1, $2;", a, b), nary("min.f32 $0, $1, $2;", a, b)
    assert not np.signbit(mx[0]) and not np.signbit(mx[1]) and np.signbit(mn[0]) and np.signbit(mn[1])
    np.testing.assert_array_equal(mx[2:], [2.0, 1.0])                 # a NaN operand loses
    assert np.isnan(nary("max.NaN.f32 $0, $1, $2;", a, b)[2:]).all()    # ... unless .NaN


def test_scalars_broadcast_and_loops_in_lockstep_agree():
    @mt.jit
    def k(x_ptr, out_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        acc = tl.load(x_ptr + offs)
        for i in range(STEPS):
            acc = tl.inline_asm_elementwise("fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f", [acc, 0.5, i * 1.0],
                                            dtype=tl.float32, is_pure=True, pack=1)
        tl.store(out_ptr + offs, acc)

    want = X[:256].copy()
    for i in range(5):
        want = want * np.float32(0.5) + np.float32(i)
    for enabled in (True, False):
        previous = lanes.set_enabled(enabled)
        try:
            out = np.empty(256, np.float32)
            k[(2,)](X, out, 5, BLOCK=128)
        finally:
            lanes.set_enabled(previous)
        np.testing.assert_array_equal(out, want)


U32 = RNG.integers(0, 2 ** 32, 256, dtype=np.uint64).astype(np.uint32)
V32 = RNG.integers(0, 2 ** 32, 256, dtype=np.uint64).astype(np.uint32)


@mt.jit
def int_kernel(x_ptr, y_ptr, out_ptr, ASM: tl.constexpr, C: tl.constexpr, OUT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    r = tl.inline_asm_elementwise(ASM, C, [tl.load(x_ptr + offs), tl.load(y_ptr + offs)], dtype=OUT, is_pure=True,
                                  pack=1)
    tl.store(out_ptr + offs, r)


def ints(asm, x=U32, y=V32, out=tl.uint32, constraints="=r,r,r"):
    res = np.empty(x.shape, out.np)
    int_kernel[(1,)](x, y, res, asm, constraints, out, BLOCK=x.size)
    return res


def _bytes(v):
    return [(int(v) >> (8 * k)) & 0xFF for k in range(4)]


def test_integer_and_bit_instructions_against_python():
    x, y = [int(v) for v in U32], [int(v) for v in V32]
    checks = {
        "add.u32 $0, $1, $2;": lambda a, b: (a + b) % 2 ** 32,
        "mul.lo.u32 $0, $1, $2;": lambda a, b: a * b % 2 ** 32,
        "mul.hi.u32 $0, $1, $2;": lambda a, b: a * b >> 32,
        "mad.lo.u32 $0, $1, $2, $1;": lambda a, b: (a * b + a) % 2 ** 32,
        "shl.b32 $0, $1, 35;": lambda a, b: 0,                      # shifts past the width give 0
        "shr.u32 $0, $1, 7;": lambda a, b: a >> 7,
        "xor.b32 $0, $1, $2;": lambda a, b: a ^ b, "not.b32 $0, $1;": lambda a, b: ~a % 2 ** 32,
        "popc.b32 $0, $1;": lambda a, b: bin(a).count("1"),
        "clz.b32 $0, $1;": lambda a, b: 32 - a.bit_length(),
        "brev.b32 $0, $1;": lambda a, b: int(f"{a:032b}"[::-1], 2),
        "bfe.u32 $0, $1, 4, 9;": lambda a, b: (a >> 4) & 0x1FF,
        "bfi.b32 $0, $1, $2, 8, 12;": lambda a, b: (b & ~(0xFFF << 8)) | ((a & 0xFFF) << 8),
        "prmt.b32 $0, $1, $2, 0x7340;": lambda a, b: sum(((b << 32 | a) >> (8 * s) & 0xFF) << (8 * k)
                                                         for k, s in enumerate([0, 4, 3, 7])),
        "lop3.b32 $0, $1, $2, $1, 0x96;": lambda a, b: a ^ b ^ a,    # 0x96: a ^ b ^ c
        "shf.r.clamp.b32 $0, $1, $2, 40;": lambda a, b: b,           # the shift clamps at 32: all of b
        "max.u32 $0, $1, $2;": max, "min.s32 $0, $1, $2;": None,
    }
    for asm, fn in checks.items():
        got = [int(v) for v in ints(asm)]
        if fn is None:                                   # signed: compare as int32
            want = [min(a - (a >> 31) * 2 ** 32, b - (b >> 31) * 2 ** 32) % 2 ** 32 for a, b in zip(x, y)]
        else:
            want = [fn(a, b) for a, b in zip(x, y)]
        assert got == want, asm
    signed = ints("shr.s32 $0, $1, 40;", out=tl.int32)             # the sign fills past the width
    np.testing.assert_array_equal(signed, np.where(U32.view(np.int32) < 0, -1, 0))
    np.testing.assert_array_equal(ints("bfe.s32 $0, $1, 0, 8;", out=tl.int32), U32.view(np.int32).astype(np.int8))
    wide = np.empty(256, np.uint64)
    mul_wide = mt.jit(int_kernel.fn)
    mul_wide[(1,)](U32, V32, wide, "mul.wide.u32 $0, $1, $2;", "=l,r,r", tl.uint64, BLOCK=256)
    np.testing.assert_array_equal(wide, U32.astype(np.uint64) * V32.astype(np.uint64))
    mul_wide[(1,)](U32, V32, wide, "{ .reg .b64 c; mov.b64 c, 7; mad.wide.u32 $0, $1, $2, c; }", "=l,r,r", tl.uint64,
                   BLOCK=256)                              # mad.wide adds a 64-bit operand
    np.testing.assert_array_equal(wide, U32.astype(np.uint64) * V32.astype(np.uint64) + np.uint64(7))


def test_programs_with_temporaries_predicates_and_packed_halves():
    # a .reg temporary, a comparison into a predicate, a guarded move, selp, comments
    asm = """{
        .reg .pred p;
        .reg .b32 t;
        .reg .pred q;
        setp.lt.u32 p, $1, $2;      // p: x < y
        setp.ne.u32 q, $1, 0;
        and.pred p, p, q;           // ... and x != 0
        sub.u32 t, $2, $1;
        @!p sub.u32 t, $1, $2;      // |x - y| without wrapping
        selp.b32 $0, t, 0, p;       // and 0 where not p
    }"""
    want = np.where((U32 < V32) & (U32 != 0), V32 - U32, 0)
    np.testing.assert_array_equal(ints(asm), want)
    # two fp16 elements to a 32-bit register (pack=2): swap the halves of each pair
    @mt.jit
    def swap(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        y = tl.inline_asm_elementwise("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $1; mov.b32 $0, {hi, lo}; }", "=r,r",
                                      [tl.load(x_ptr + offs)], dtype=tl.float16, is_pure=True, pack=2)
        tl.store(out_ptr + offs, y)

    h = np.arange(16, dtype=np.float16) / 4
    out = np.empty_like(h)
    swap[(1,)](h, out, BLOCK=16)
    np.testing.assert_array_equal(out, h.reshape(8, 2)[:, ::-1].ravel())
    # two floats rounded to halves and packed in one register (high, low), read back as halves
    @mt.jit
    def pair(x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs)
        y = tl.inline_asm_elementwise("{ .reg .b32 t; cvt.rn.bf16x2.f32 t, $1, $2; mov.b32 $0, t; }", "=r,f,f",
                                      [x, x * 2], dtype=tl.uint32, is_pure=True, pack=1)
        tl.store(out_ptr + offs, y)

    packed = np.empty(16, np.uint32)
    pair[(1,)](X, packed, BLOCK=16)
    to_bf16 = lambda v: v.astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint32)
    np.testing.assert_array_equal(packed, (to_bf16(X[:16]) << 16) | to_bf16(X[:16] * 2))
    # comments of both kinds, a % in one of them
    np.testing.assert_array_equal(unary("/* 100% of x */ abs.f32 $0, $1; // |x|, 50% faster", X), np.abs(X))
    # immediates: a float written as its bits, a hex integer
    np.testing.assert_array_equal(unary("add.rn.f32 $0, $1, 0f3F800000;", X), X + np.float32(1))
    np.testing.assert_array_equal(unary("mul.rn.f32 $0, $1, 0.5;", X), X * np.float32(0.5))


def test_a_pause_changes_nothing_but_its_operand_is_checked():
    # nanosleep only waits (a delay Triton kernels write between polls of a flag); time is not modelled
    np.testing.assert_array_equal(unary("nanosleep.u32 100; mov.b32 $0, $1;", X), X)
    np.testing.assert_array_equal(unary("nanosleep.u32 $1; mov.b32 $0, $1;", X[:16].view(np.uint32), "=r,r",
                                        tl.uint32), X[:16].view(np.uint32))
    with pytest.raises(ValueError, match="nanosleep.u32 takes 1 operand"):
        unary("nanosleep.u32 1, 2; mov.b32 $0, $1;", X)


@pytest.mark.parametrize("asm, constraints, pack, match", [
    ("mov.u32 $0, %clock; nanosleep.u32 1;", "=r", 1, "GPU register"),
    ("ld.global.f32 $0, [$1];", "=f,f", 1, "memory"),
    ("@p bra DONE;", "=f,f", 1, "branches"),
    ("vote.sync.all.pred $0, $1, 0xffffffff;", "=f,f", 1, "warp"),
    ("cvt.rn.satfinite.e2m1x2.f32 $0, $1, $1;", "=r,f", 1, "does not run (types e2m1x2 from f32)"),
    ("cvt.rs.f16x2.f32 $0, $1, $1, $1;", "=r,f", 1, "stochastic rounding (.rs, sm_100 on) is not run"),
    ("tanh.approx.f16 $0, $1;", "=f,f", 1, "16-bit float arithmetic"),
    ("mov.u32 $0, %clock;", "=r", 1, "GPU register"),
    ("tex.2d.v4.f32.f32 $0, [$1];", "=f,f", 1, "modifiers"),
    ("mul.f32 $0, $1, $1, $1, $1;", "=f,f", 1, "takes 3 operands"),
])
def test_other_assembly_is_refused_by_name(asm, constraints, pack, match):
    @mt.jit
    def k(x_ptr, ASM: tl.constexpr, C: tl.constexpr, PACK: tl.constexpr):
        offs = tl.arange(0, 4)
        x = tl.load(x_ptr + offs)
        args = [x] if C.count(",") else []
        y = tl.inline_asm_elementwise(ASM, C, args, dtype=tl.float32, is_pure=True, pack=PACK)
        tl.store(x_ptr + offs, y)

    x = np.arange(4, dtype=np.float32)
    with pytest.raises((NotImplementedError, ValueError)) as info:
        k[(1,)](x, asm, constraints, pack)
    assert match in str(info.value) and "inline_asm_elementwise" in str(info.value)
    np.testing.assert_array_equal(x, np.arange(4))            # nothing stored


def test_mismatched_constraints_widths_and_result_types_are_refused():
    x = X[:128]
    with pytest.raises(ValueError, match="must name 1 result register .* then 1 argument register"):
        unary("abs.f32 $0, $1;", x, "=f,f,f")
    with pytest.raises(ValueError, match="constraint 'd' .* is not the 32-bit register"):
        unary("abs.f32 $0, $1;", x, "=f,d")
    with pytest.raises(ValueError, match=r"\$1 is a 16-bit register; .* reads it as .f32"):
        unary("abs.f32 $0, $1;", x.astype(np.float16), "=h,h", tl.float16)
    with pytest.raises(ValueError, match="constraint 'f' .* is not the 64-bit register"):
        unary("abs.f32 $0, $1;", x, "=f,f", tl.float64)
    with pytest.raises(ValueError, match="never writes \\$0"):
        unary("{ .reg .f32 t; abs.f32 t, $1; }", x)
    with pytest.raises(ValueError, match="pack=4 needs a block whose last axis is a multiple of 4"):
        _packed_odd()


def _packed_odd():
    @mt.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.uint8,
                                      is_pure=True, pack=4)
        tl.store(x_ptr + offs, y)
    k[(1,)](np.zeros(2, np.uint8), BLOCK=2)


def test_the_coverage_line_says_what_runs_in_part():
    from minitriton import compat
    supported, refused, broken = compat.coverage()
    assert "inline_asm_elementwise" in supported and not refused and not broken
    assert "`inline_asm_elementwise`: PTX arithmetic" in compat.coverage_line()
