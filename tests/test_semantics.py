"""Triton's semantics where a lockstep executor is most tempted to differ: atomics, aliasing,
integer widths and wrap-around, typing of scalars, and small language details.

Each test runs its kernel both in lockstep and one program at a time (`both`): the two paths
must agree, and with Triton."""
import contextlib
import importlib.util
import io

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


def both(run):
    """run() in lockstep and one program at a time; returns both results."""
    first = run()
    with mt.one_program_at_a_time():
        second = run()
    return first, second


# ---------------------------------------------------------------- atomics
@mt.jit
def counter_kernel(c_ptr, old_ptr):
    o = tl.atomic_add(c_ptr, 1)
    tl.store(old_ptr + tl.program_id(0), o)


def test_uniform_atomic_acts_once_per_program_in_program_order():
    def run():
        c, old = np.zeros(1, np.int32), np.full(10, -1, np.int32)
        counter_kernel[(10,)](c, old)
        return c, old
    for c, old in both(run):
        assert c[0] == 10
        np.testing.assert_array_equal(old, np.arange(10))


@mt.jit
def lane_atomic_kernel(c_ptr, old_ptr, N: tl.constexpr):
    lanes = tl.arange(0, N)
    o = tl.atomic_add(c_ptr + lanes % 2, 1)          # lanes of a program hit two counters
    tl.store(old_ptr + tl.program_id(0) * N + lanes, o)


def test_atomics_act_once_per_lane_and_return_each_old_value():
    def run():
        c, old = np.zeros(2, np.int32), np.zeros(3 * 4, np.int32)
        lane_atomic_kernel[(3,)](c, old, N=4)
        return c, old
    for c, old in both(run):
        np.testing.assert_array_equal(c, [6, 6])
        # program p, lane l: counter l % 2 has seen 2 * p + l // 2 earlier increments
        np.testing.assert_array_equal(old, [2 * p + l // 2 for p in range(3) for l in range(4)])


@mt.jit
def big_atomic_kernel(c_ptr, v, w):
    tl.atomic_add(c_ptr, v)
    tl.atomic_max(c_ptr + 1, w)
    tl.atomic_xchg(c_ptr + 2, v)


def test_64_bit_integer_atomics_are_exact():
    c = np.array([1, 2 ** 62 + 3, 0], np.int64)
    big_atomic_kernel[(1,)](c, 2 ** 60 + 1, 2 ** 62 + 5)
    assert c.tolist() == [2 ** 60 + 2, 2 ** 62 + 5, 2 ** 60 + 1]


@mt.jit
def half_atomic_kernel(c_ptr):
    tl.atomic_add(c_ptr + tl.arange(0, 4) * 0, 0.1)   # four lanes on one fp16 counter
    tl.atomic_max(c_ptr + 1, tl.program_id(0).to(tl.float16))


def test_fp16_atomics_round_every_result_to_fp16():
    c = np.zeros(2, np.float16)
    half_atomic_kernel[(3,)](c)
    total = np.float16(0)
    for _ in range(12):
        total = np.float16(total + np.float16(0.1))
    assert c[0] == total and c[1] == 2


@mt.jit
def bitwise_atomic_kernel(c_ptr):
    pid = tl.program_id(0)
    tl.atomic_or(c_ptr, 1 << pid)
    tl.atomic_and(c_ptr + 1, ~(1 << pid))
    tl.atomic_xor(c_ptr + 2, pid + 1)


def test_bitwise_atomics():
    c = np.array([0, -1, 0], np.int32)
    bitwise_atomic_kernel[(5,)](c)
    assert c.tolist() == [0b11111, ~0b11111, 1 ^ 2 ^ 3 ^ 4 ^ 5]


@mt.jit
def spin_lock_kernel(lock_ptr, total_ptr, log_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    t = tl.load(total_ptr)
    tl.store(log_ptr + t, tl.program_id(0))
    tl.store(total_ptr, t + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_spin_lock_serialises_every_program():
    def run():
        lock, total, log = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(12, -1, np.int32)
        spin_lock_kernel[(12,)](lock, total, log)
        return lock, total, log
    for lock, total, log in both(run):
        assert lock[0] == 0 and total[0] == 12
        assert sorted(log.tolist()) == list(range(12))


def test_atomic_rejects_bad_semantics_and_float_bitwise():
    @mt.jit
    def bad_sem(c_ptr):
        tl.atomic_add(c_ptr, 1, sem="sometimes")

    @mt.jit
    def float_or(c_ptr):
        tl.atomic_or(c_ptr, 1.0)
    with pytest.raises(ValueError, match="sem must be one of"):
        bad_sem[(1,)](np.zeros(1, np.int32))
    with pytest.raises(TypeError, match="atomic_or needs an integer"):
        float_or[(1,)](np.zeros(1, np.float32))


# ---------------------------------------------------------------- aliasing
@mt.jit
def alias_kernel(a_ptr, b_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(a_ptr + i, tl.load(a_ptr + i) + 1)
    tl.store(b_ptr + i, tl.load(b_ptr + i) + 10)


def test_overlapping_views_see_each_others_stores():
    def run():
        x = np.zeros(8, np.float32)
        alias_kernel[(1,)](x[:4], x[2:6], N=4)
        return x
    for x in both(run):
        np.testing.assert_array_equal(x, [1, 1, 11, 11, 10, 10, 0, 0])


@mt.jit
def transpose_alias_kernel(a_ptr, at_ptr, stride0, stride1, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(a_ptr + r * N + r, tl.zeros([N], tl.float32) + 7)        # a's diagonal
    col = tl.load(at_ptr + r * stride1)                                  # a.T[0, :] = a[:, 0], by its strides
    tl.store(at_ptr + stride0 + r * stride1, col)                        # a.T[1, :] = a[:, 1]


def test_a_transposed_view_of_the_same_array():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    expect = a.copy()
    np.fill_diagonal(expect, 7)
    expect[:, 1] = expect[:, 0]
    at = a.T
    transpose_alias_kernel[(1,)](a, at, at.strides[0] // 4, at.strides[1] // 4, N=4)
    np.testing.assert_array_equal(a, expect)


def test_overlapping_arguments_of_different_types_refuse_stores():
    x = np.zeros(8, np.float32)
    with pytest.raises(NotImplementedError, match="overlap in memory"):
        alias_kernel[(1,)](x, x.view(np.int32), N=4)
    assert (x == 0).all()


# ---------------------------------------------------------------- integer widths
@mt.jit
def compare_kernel(out_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, (offs < n).to(tl.int32))


def test_integer_arguments_past_int32_are_int64():
    out = np.zeros(4, np.int32)
    compare_kernel[(1,)](out, 2 ** 31, N=4)
    np.testing.assert_array_equal(out, 1)
    compare_kernel[(1,)](out, 2, N=4)
    np.testing.assert_array_equal(out, [1, 1, 0, 0])


@mt.jit
def wrap_kernel(out_ptr, base, N: tl.constexpr):
    offs = base + tl.arange(0, N)
    tl.store(out_ptr + tl.arange(0, N), offs * 2)                      # kept symbolic
    tl.store(out_ptr + N + tl.arange(0, N), offs * 2 + tl.zeros([N], tl.int32))  # computed


def test_int32_arithmetic_wraps_around_everywhere():
    out = np.zeros(8, np.int64)
    wrap_kernel[(1,)](out, 2 ** 30, N=4)
    expect = ((2 ** 30 + np.arange(4)) * 2).astype(np.int64).astype(np.int32)
    np.testing.assert_array_equal(out[:4], expect)
    np.testing.assert_array_equal(out[4:], expect)
    assert expect[0] == -2 ** 31


@mt.jit
def scalar_ops_kernel(out_ptr, x, y):
    p = tl.program_id(0)
    xs = (x, x + p * 0 - p + p)              # uniform, and per-program (the same values)
    for i in tl.static_range(2):
        a = xs[i]
        base = out_ptr + p * 20 + i * 10
        tl.store(base + 0, a + y)
        tl.store(base + 1, a - y)
        tl.store(base + 2, a * y)
        tl.store(base + 3, a // y)
        tl.store(base + 4, a % y)
        tl.store(base + 5, (a < y).to(tl.int32))
        tl.store(base + 6, (a >= y).to(tl.int32))
        tl.store(base + 7, (a == y).to(tl.int32))
        tl.store(base + 8, tl.cdiv(a, y))
        tl.store(base + 9, ((a + tl.zeros([2], tl.int32)) // y).sum() // 2)  # computed lane by lane


@pytest.mark.parametrize("programs", [3, 40])   # per-program values in Python ints, and in numpy
@pytest.mark.parametrize("x,y", [(7, 2), (-7, 2), (7, -2), (-7, -2), (2 ** 31 - 5, 3), (-2 ** 31 + 1, 7), (5, 9)])
def test_scalar_integer_arithmetic_is_c_arithmetic_in_int32(x, y, programs):
    """Scalars are the loop bookkeeping of every kernel: `//` and `%` truncate toward zero and
    results wrap around in int32, whether the scalar is the same in every program or not."""
    out = both(lambda: (scalar_ops_kernel[(programs,)](o := np.zeros(20 * programs, np.int64), x, y), o)[1])
    wrap = lambda v: int(np.array(v, np.int64).astype(np.int32))  # noqa: E731
    div = lambda a, b: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # noqa: E731
    q = div(x, y)
    want = [wrap(x + y), wrap(x - y), wrap(x * y), q, x - q * y, int(x < y), int(x >= y), int(x == y),
            div(wrap(x + y - 1), y), q]
    for got in out:
        for p in range(programs):
            for i in range(2):
                np.testing.assert_array_equal(got[p * 20 + i * 10:p * 20 + i * 10 + 10], want, err_msg=f"{p} {i}")


def test_python_literal_out_of_range_for_the_tensor_type_is_an_error():
    @mt.jit
    def k(out_ptr):
        offs = tl.arange(0, 4)
        tl.store(out_ptr + offs, (offs < 2 ** 31).to(tl.int32))
    with pytest.raises(ValueError, match="out of range for type int32"):
        k[(1,)](np.zeros(4, np.int32))


@mt.jit
def typing_kernel(out_ptr, x_ptr, u_ptr, scale):
    i = tl.arange(0, 4)
    x = tl.load(x_ptr + i)          # fp16
    u = tl.load(u_ptr + i)          # uint8
    tl.store(out_ptr + i, (x * scale).to(tl.float64))          # fp32 argument: computes in fp32
    tl.store(out_ptr + 4 + i, (x / x).to(tl.float64) * 0 + (x / 3).dtype.primitive_bitwidth)
    tl.store(out_ptr + 8 + i, (u + 1).to(tl.float64) * 0 + (u + 1).dtype.primitive_bitwidth)
    tl.store(out_ptr + 12 + i, (u - 1).to(tl.float64))


def test_scalar_typing_follows_triton():
    x = np.array([1, 2, 3, 1e-4], np.float16)
    u = np.array([0, 1, 2, 255], np.uint8)
    out = np.zeros(16)
    typing_kernel[(1,)](out, x, u, 1.0001)
    np.testing.assert_array_equal(out[:4], (x.astype(np.float32) * np.float32(1.0001)).astype(np.float64))
    assert (out[4:8] == 32).all()      # fp16 / number computes in fp32
    assert (out[8:12] == 8).all()      # uint8 + int literal stays uint8 (Triton: (uint8, int) -> uint8)
    np.testing.assert_array_equal(out[12:], u - np.uint8(1))   # and wraps, as uint8 does


def test_integer_division_of_mixed_signedness_is_refused():
    @mt.jit
    def k(out_ptr, a_ptr, b_ptr):
        i = tl.arange(0, 4)
        tl.store(out_ptr + i, tl.load(a_ptr + i) // tl.load(b_ptr + i))
    with pytest.raises(TypeError, match="different signedness"):
        k[(1,)](np.zeros(4, np.int32), np.ones(4, np.int32), np.ones(4, np.uint32))


@mt.jit
def shift_kernel(out_ptr, a_ptr, s_ptr):
    i = tl.arange(0, 4)
    tl.store(out_ptr + i, (tl.load(a_ptr + i) >> tl.load(s_ptr + i)).to(tl.int32, bitcast=True))


def test_right_shift_of_a_signed_value_by_an_unsigned_one_is_arithmetic():
    a = np.array([-16, -1, 16, -2 ** 31], np.int32)
    s = np.array([2, 1, 2, 4], np.uint32)
    out = np.zeros(4, np.int32)
    shift_kernel[(1,)](out, a, s)
    np.testing.assert_array_equal(out, a >> s.astype(np.int32))


# ---------------------------------------------------------------- small details
@mt.jit
def int1_sum_kernel(out_ptr, N: tl.constexpr):
    ones = tl.full([N], 1, tl.int1)
    tl.store(out_ptr, tl.sum(ones, axis=0, dtype=tl.int1).to(tl.int32))
    tl.store(out_ptr + 1, tl.sum(tl.arange(0, N) < N - 1, axis=0, dtype=tl.int1).to(tl.int32))
    tl.store(out_ptr + 2, tl.sum(ones, axis=0).to(tl.int32))


def test_sum_in_int1_is_one_bit_addition():
    out = np.zeros(3, np.int32)
    int1_sum_kernel[(1,)](out, N=1024)
    assert out.tolist() == [0, 1, 1024]


@mt.jit
def static_range_kernel(out_ptr):
    acc = 0
    for i in tl.static_range(0, 10, step=3):
        acc += i
    for i in tl.range(10, 0, -4):
        acc += 100 * i
    tl.store(out_ptr, acc)


def test_range_steps_are_honoured():
    out = np.zeros(1, np.int32)
    static_range_kernel[(1,)](out)
    assert out[0] == (0 + 3 + 6 + 9) + 100 * (10 + 6 + 2)


@mt.jit
def shape_kernel(out_ptr, N: tl.constexpr):
    x = tl.arange(0, N)
    tl.static_assert(x.shape == [N])
    tl.static_assert(x[:, None].shape == [N, 1])
    tl.static_assert(tl.int32 == tl.constexpr(tl.int32))
    tl.static_assert(x.dtype == tl.int32)
    tl.store(out_ptr + x, x)


def test_shapes_compare_to_lists_and_dtypes_to_constexprs():
    out = np.zeros(32, np.int32)
    shape_kernel[(1,)](out, N=32)
    np.testing.assert_array_equal(out, np.arange(32))


@mt.jit
def print_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 2))
    tl.device_print("hex", x, hex=True)
    print("py", x)


def test_device_print_hex_and_python_print_show_values():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_kernel[(1,)](np.array([255, -1], np.int32))
    text = buf.getvalue()
    assert "0x000000ff" in text and "0xffffffff" in text
    assert "py" in text and "255" in text and "-1" in text


@mt.jit
def numbers_as_tensors_kernel(out_ptr, N: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)          # before the loop: a loop may not change a carried variable's type
    value = 1
    z = tl.full((N,), 3, dtype=value.dtype)
    for i in range(3):
        acc += i.to(tl.int64)
    tl.store(out_ptr + tl.arange(0, N), z + acc + (acc.dtype == tl.int64) + (value.dtype == tl.int32))


def test_a_number_held_in_a_variable_is_a_tensor_when_used_as_one():
    # Triton: after `acc = 0`, `acc.dtype` is int32; a loop's index has `.to`; `value.dtype` types a full
    out = np.zeros(4, np.int64)
    numbers_as_tensors_kernel[(1,)](out, 4)
    np.testing.assert_array_equal(out, 3 + 3 + 1 + 1)


# ---------------------------------------------------------------- tuple arguments and warmup
@mt.jit
def tuple_arguments_kernel(pair, scale, N: tl.constexpr):
    src, dst = pair
    offs = tl.arange(0, N)
    tl.store(dst + offs, tl.load(src + offs) * scale[0] + scale[1])


def test_tuple_arguments_bind_each_member_as_an_argument():
    def run():
        src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
        tuple_arguments_kernel[(1,)]((src, dst), (2.0, 3), N=8)
        return dst
    for dst in both(run):
        np.testing.assert_array_equal(dst, np.arange(8) * 2 + 3)
    # two members that are views of one array share its memory, as two arguments would
    x = np.zeros(16, np.float32)
    x[:8] = 1
    tuple_arguments_kernel[(1,)]((x[:8], x[8:]), (5.0, 0), N=8)
    np.testing.assert_array_equal(x[8:], 5)
    # a member no launch can take is named by its place in the tuple
    with pytest.raises(TypeError, match=r"'pair\[1\]' has unsupported type list"):
        tuple_arguments_kernel[(1,)]((x, [1, 2]), (1.0, 0), N=8)


def test_tl_tuple_is_immutable_and_concatenates():
    @mt.jit
    def concat(out):
        t = tl.tuple((1, 2)) + (3, )
        for i in tl.static_range(len(t)):
            tl.store(out + i, t[i])

    @mt.jit
    def assign(out):
        t = tl.tuple([5, 6])
        t[0] = 0

    out = np.zeros(3, np.int32)
    concat[(1,)](out)
    np.testing.assert_array_equal(out, [1, 2, 3])
    with pytest.raises(mt.CompilationError):
        assign[(1,)](out)


def test_warmup_refuses_what_a_compiler_would_and_writes_nothing():
    @mt.jit
    def checked(out, N: tl.constexpr):
        tl.static_assert(N % 2 == 0, "N must be even")
        tl.store(out + tl.arange(0, N), tl.zeros([N], tl.float32) + 1)

    out = np.zeros(4, np.float32)
    checked.warmup(out, N=4, grid=(4,))
    assert (out == 0).all()                     # a warmup runs the body but keeps none of its writes
    with pytest.raises(mt.compiler.errors.CompileTimeAssertionFailure, match="N must be even"):
        checked.warmup(out, N=3, grid=(1,))
    checked[(1,)](out, N=4)
    assert (out == 1).all()


@mt.aggregate
class Window:
    start: tl.tensor
    WIDTH: tl.constexpr

    @mt.jit
    def values(self, ptr):
        return tl.load(ptr + self.start + tl.arange(0, self.WIDTH))


def test_an_aggregate_chosen_per_program_keeps_each_programs_fields():
    """Programs that take different branches hold different aggregates; after the branch each
    has its own (merged field by field), in lockstep as one program at a time."""
    @mt.jit
    def kernel(src, dst, W: tl.constexpr):
        pid = tl.program_id(0)
        w = Window(pid * 0, W)
        if pid % 2 == 1:
            w = Window(pid * W, W)
        i = 0
        while i < pid:                    # a loop with per-program trip counts carries it too
            w = tl.aggregate_replace(w, start=w.start + 0)
            i += 1
        tl.store(dst + pid * W + tl.arange(0, W), w.values(src))

    def run():
        src = np.arange(16, dtype=np.float32)
        dst = np.zeros(16, np.float32)
        kernel[(4,)](src, dst, W=4)
        return dst
    for dst in both(run):
        np.testing.assert_array_equal(dst, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15])


def test_a_kernel_kept_as_a_class_attribute_stays_launchable():
    """Only an aggregate binds a @jit method to its instance; any other class keeps the kernel."""
    class Model:
        kernel = tuple_arguments_kernel

    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    Model().kernel[(1,)]((src, dst), (1.0, 1), N=8)
    np.testing.assert_array_equal(dst, np.arange(8) + 1)


def test_a_quoted_constexpr_annotation_under_postponed_annotations(tmp_path):
    """`N: "tl.constexpr"` in a module with `from __future__ import annotations` reaches the
    kernel as the string "'tl.constexpr'": still a constexpr, as in Triton."""
    src = tmp_path / "quoted_kernel.py"
    src.write_text("from __future__ import annotations\nimport minitriton as mt\nimport minitriton.language as tl\n\n"
                   "@mt.jit\ndef k(x, N: \"tl.constexpr\"):\n"
                   "    tl.store(x + tl.arange(0, N), tl.zeros((N,), tl.float32) + 1)\n")
    spec = importlib.util.spec_from_file_location("quoted_kernel", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.zeros(8, np.float32)
    module.k[(1,)](x, 8)
    assert module.k.constexprs == ["N"] and (x == 1).all()


@mt.jit
def selu_scalar(x, alpha):
    if x > 0:
        return x
    else:
        return alpha * (tl.exp(x) - 1)


@mt.jit
def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps, n


@mt.jit
def map_elementwise_kernel(X, Y, S, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    tl.store(Y + offs, tl.map_elementwise(selu_scalar, x, 1.5))
    steps, one = tl.map_elementwise(collatz_steps, (offs + 1).to(tl.int32))
    tl.store(S + offs, steps + one - 1)


def test_map_elementwise_takes_control_flow_per_element():
    """tl.map_elementwise: a scalar function's `if` and data-dependent `while` run per element."""
    x = np.linspace(-3, 3, 64).astype(np.float32)

    def run():
        y, s = np.zeros(64, np.float32), np.zeros(64, np.int32)
        map_elementwise_kernel[(4,)](x, y, s, BLOCK=16)
        return y, s

    def collatz(n):
        k = 0
        while n != 1:
            n, k = (n // 2 if n % 2 == 0 else 3 * n + 1), k + 1
        return k
    for y, s in both(run):
        np.testing.assert_allclose(y, np.where(x > 0, x, 1.5 * (np.exp(x) - 1)), rtol=1e-6)
        np.testing.assert_array_equal(s, [collatz(i + 1) for i in range(64)])


@mt.jit
def assert_in_branch_kernel(B, O):
    pid = tl.program_id(0)
    b = tl.load(B + pid)
    if pid % 2 == 0:
        tl.device_assert(b != 0, "zero")
        tl.store(O + pid, 10 // b)


def test_an_assert_in_a_branch_is_checked_only_by_programs_taking_it():
    """Programs 1 and 3 hold zeros but never reach the assert; program 2 with a zero does.  As in
    Triton, a device assert is checked in debug mode only."""
    def run(b, debug=True):
        o = np.zeros(4, np.int32)
        assert_in_branch_kernel[(4,)](np.array(b, np.int32), o, debug=debug)
        return o
    for o in both(lambda: run([5, 0, 5, 0])):
        np.testing.assert_array_equal(o, [2, 0, 2, 0])
    with pytest.raises(AssertionError, match=r"program \(2, 0, 0\): zero"):
        run([5, 0, 0, 0])
    with pytest.raises(RuntimeError, match="device-side assert triggered"):    # as a GPU reports it
        run([5, 0, 0, 0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(run([5, 0, 0, 5], debug=False)[[0, 1, 3]], [2, 0, 0])   # not checked


PLAIN_GLOBAL = 3


@mt.jit
def reads_a_plain_global(out_ptr):
    tl.store(out_ptr, PLAIN_GLOBAL)


def test_a_plain_global_is_refused_unless_allowed_and_errors_say_where(monkeypatch):
    out = np.zeros(1, np.int32)
    with pytest.raises(NameError, match="Cannot access global variable PLAIN_GLOBAL") as e:
        reads_a_plain_global[(1,)](out)
    assert isinstance(e.value, mt.CompilationError)
    monkeypatch.setenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS", "1")
    reads_a_plain_global[(1,)](out)
    assert out[0] == 3

    def local_block():
        size = 8

        @mt.jit
        def k(out_ptr):
            tl.store(out_ptr + tl.arange(0, size), 1)
        return k
    monkeypatch.delenv("TRITON_ALLOW_NON_CONSTEXPR_GLOBALS")
    with pytest.raises(NameError, match="size is not defined"):
        local_block()[(1,)](np.zeros(8, np.int32))


@mt.jit
def sums_on_a_missing_axis(x):
    return tl.sum(x, axis=2)


@mt.jit
def calls_a_failing_helper(out_ptr):
    x = tl.arange(0, 8)
    tl.store(out_ptr, sums_on_a_missing_axis(x))


def test_an_error_in_a_kernel_says_where_in_the_kernel_and_in_the_helper():
    with pytest.raises(ValueError) as e:
        calls_a_failing_helper[(1,)](np.zeros(1, np.int32))
    notes = "\n".join(e.value.__notes__)
    assert "at 2:11:\n    return tl.sum(x, axis=2)\n           ^" in notes       # in the helper
    assert "at 3:22:\n    tl.store(out_ptr, sums_on_a_missing_axis(x))\n                      ^" in notes   # and the call


def test_compile_checks_a_kernel_for_a_signature_and_refuses_what_it_cannot_check():
    @mt.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

    done = mt.compile(mt.compiler.ASTSource(scale, {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64}))
    assert done.name == "scale" and done.metadata["constexprs"] == {"BLOCK": 64}
    with pytest.raises(mt.CompilationError, match="power of 2"):
        mt.compile(mt.compiler.ASTSource(scale, {"x_ptr": "*fp32", "n": "i32"}, {"BLOCK": 48}))
    with pytest.raises(ValueError, match="unknown type 'f99'"):
        mt.compile(mt.compiler.ASTSource(scale, {"x_ptr": "*fp32", "n": "f99"}, {"BLOCK": 64}))
    with pytest.raises(ValueError, match=r"\['m'\] are not parameters"):
        mt.compiler.ASTSource(scale, {"m": "i32"})
    with pytest.raises(TypeError, match="must be a @jit function"):
        mt.compiler.ASTSource(lambda: None, {})
    with pytest.raises(NotImplementedError, match="ir_override"):
        scale[(1,)](np.zeros(4, np.float32), 4, BLOCK=4, ir_override="kernel.ttgir")
