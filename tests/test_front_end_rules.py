"""What Triton's front end refuses or gates, refused or gated here too, so that a kernel that runs
on minitriton also compiles for a GPU: a loop or a runtime `if` that changes a carried variable's
type (minitriton/carried.py), math functions called on types libdevice lacks, and `assert`,
which is a device assert checked in debug mode only."""
import re

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


@mt.jit
def python_assert_kernel(O, N: tl.constexpr):
    assert N % 16 == 0, "N must be a multiple of 16"
    tl.store(O, N)


def test_a_python_assert_in_a_kernel_is_a_device_assert():
    """Triton's front end turns `assert` into tl.device_assert even when the test is a Python
    value, so a false one is checked in debug mode only (tl.static_assert checks at compile time)."""
    o = np.zeros(1, np.int32)
    python_assert_kernel[(1,)](o, 24)
    assert o[0] == 24
    with pytest.raises(AssertionError, match="N must be a multiple of 16"):
        python_assert_kernel[(1,)](o, 40, debug=True)
    python_assert_kernel[(1,)](o, 32, debug=True)
    assert o[0] == 32


@mt.jit
def carried_kernel(out_ptr, n, KIND: tl.constexpr):
    acc = 0
    block = tl.zeros((4,), tl.float32)
    if KIND == "number":
        for i in range(n):
            acc += 1.5                              # int32 to fp32
    elif KIND == "block":
        for i in range(n):
            block = block.to(tl.float16)            # fp32[4] to fp16[4]
    elif KIND == "shape":
        k = 0
        while k < n:
            block = block[None, :] + 1              # fp32[4] to fp32[1, 4]
            k += 1
    elif KIND == "static":
        for i in tl.static_range(2):
            block = block[None, :]                  # unrolled: no loop to type
    else:
        acc = acc.to(tl.float32)
        for i in range(n):
            acc += 1.5
    tl.store(out_ptr + tl.arange(0, 4), tl.reshape(block, (4,)) + acc)


@pytest.mark.parametrize("kind, trips", [("number", 1), ("number", 3), ("block", 2), ("shape", 1)])
def test_a_loop_that_changes_a_carried_variables_type_is_refused(kind, trips):
    """Triton compiles a loop only if each variable it carries keeps its type and shape
    (test_for_iv converts its `acc = 0` to int64 before the loop for this reason); a number assigned
    in a kernel counts as the tensor Triton makes it (int32, fp32)."""
    out = np.zeros(4, np.float32)
    with pytest.raises(AssertionError, match="Loop-carried variable (acc|block) has initial type (int32|fp32\\[4\\]) "
                                             "but is re-assigned to (fp32|fp16\\[4\\]|fp32\\[1, 4\\]) in loop"):
        carried_kernel[(1,)](out, trips, kind)
    carried_kernel[(1,)](out, 0, "static")          # a static_range is unrolled, as Triton compiles it
    carried_kernel[(1,)](out, 2, "consistent")
    np.testing.assert_array_equal(out, 3.0)


@mt.jit
def branch_type_kernel(out_ptr, n, KIND: tl.constexpr):
    x = tl.arange(0, 4)
    y = 0
    if KIND == "then":
        if n > 0:                   # a runtime condition: Triton types both sides
            x = x.to(tl.float32)
    elif KIND == "else":
        if n > 0:
            y = 2
        else:
            y = 2.5                 # int32 to fp32
    elif KIND == "constexpr":
        if KIND == "constexpr":     # a compile-time condition: only the side taken is compiled
            x = x.to(tl.float32)
    else:
        if n > 0:
            x = x + 1
            y = 3
    tl.store(out_ptr + tl.arange(0, 4), x + y)


@pytest.mark.parametrize("kind, n, message", [
    ("then", 3, "initial value for `x` is of type int32\\[4\\], but the then block redefines it as fp32\\[4\\]"),
    ("else", 0, "initial value for `y` is of type int32, but the else block redefines it as fp32")])
def test_an_if_on_a_runtime_condition_keeps_its_variables_types(kind, n, message):
    # (n = 1 would be a compile-time condition: Triton specialises an integer argument equal to 1)
    out = np.zeros(4, np.float32)
    with pytest.raises(AssertionError, match=message):
        branch_type_kernel[(1,)](out, n, kind)
    branch_type_kernel[(1,)](out, 1, "constexpr")
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    branch_type_kernel[(1,)](out, 3, "same")
    np.testing.assert_array_equal(out, [4, 5, 6, 7])


@mt.jit
def math_dtype_kernel(x_ptr, out_ptr, FN: tl.constexpr, DT: tl.constexpr):
    offs = tl.arange(0, 4)
    x = tl.load(x_ptr + offs).to(DT)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "sqrt_rn":
        y = tl.math.sqrt_rn(x)
    elif FN == "umulhi":
        y = tl.umulhi(x, x)
    else:
        y = tl.sigmoid(x)
    tl.store(out_ptr + offs, y.to(tl.float32))


@pytest.mark.parametrize("fn, dt, accepted", [
    ("exp", tl.float16, "['fp32', 'fp64']"), ("exp", tl.bfloat16, "['fp32', 'fp64']"),
    ("exp", tl.int32, "['fp32', 'fp64']"), ("sigmoid", tl.float16, "['fp32', 'fp64']"),
    ("sqrt_rn", tl.float64, "['fp32']"), ("umulhi", tl.int16, "['int32', 'int64', 'uint32', 'uint64']")])
def test_math_functions_take_the_types_triton_has_them_for(fn, dt, accepted):
    """Triton's math functions follow libdevice: exp, log, sqrt, sin... take fp32 and fp64 (a
    kernel casts its fp16 block first), the correctly rounded ones fp32, umulhi 32- and 64-bit
    integers; another type is a ValueError with Triton's message."""
    x, out = np.arange(1, 5, dtype=np.float32), np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=re.escape(f"Expected dtype {accepted} but got {dt}")):
        math_dtype_kernel[(1,)](x, out, fn, dt)
    math_dtype_kernel[(1,)](x, out, fn, tl.float32 if fn != "umulhi" else tl.int32)
    expected = {"exp": np.exp(x), "sqrt_rn": np.sqrt(x), "umulhi": np.zeros(4), "sigmoid": 1 / (1 + np.exp(-x))}[fn]
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@mt.jit
def two_loops_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Liger-Kernel's cross entropy in miniature: the second loop reuses a name the first bound,
    with another type; Triton scopes a loop body's names to the loop, so nothing is carried."""
    m = float("-inf")
    for i in range(0, n, BLOCK):
        block = tl.load(x_ptr + i + tl.arange(0, BLOCK))          # fp16
        m = tl.maximum(m, tl.max(block.to(tl.float32)))
    for i in range(0, n, BLOCK):
        block = tl.load(x_ptr + i + tl.arange(0, BLOCK))
        block = tl.exp(block.to(tl.float32) - m)                  # fp32: a new variable, as Triton sees it
        tl.store(out_ptr + i + tl.arange(0, BLOCK), block)


def test_a_name_bound_in_an_earlier_loop_is_not_carried_by_a_later_one():
    x = np.arange(8, dtype=np.float16)
    out = np.zeros(8, np.float32)
    two_loops_kernel[(1,)](x, out, 8, BLOCK=4)
    np.testing.assert_allclose(out, np.exp(x.astype(np.float32) - 7), rtol=1e-6)


@mt.jit
def one_sided_kernel(out_ptr, n, READ_AFTER: tl.constexpr):
    x = tl.arange(0, 4)
    if n > 0:                   # a runtime condition
        z = x + 1
        tl.store(out_ptr + x, z)
    if READ_AFTER:
        tl.store(out_ptr + x, z)


def test_a_name_only_one_side_of_a_runtime_if_binds_is_gone_after_it():
    """Triton defines after an if on a runtime condition only what both sides bind."""
    out = np.zeros(4, np.int32)
    one_sided_kernel[(1,)](out, 3, False)
    np.testing.assert_array_equal(out, [1, 2, 3, 4])
    with pytest.raises(NameError, match="'z'"):
        one_sided_kernel[(1,)](out, 3, True)
