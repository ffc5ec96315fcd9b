"""Triton's print tests (python/test/unit/language/test_subprocess.py with the kernels of
print_helper.py), ported to minitriton.

Source: triton-lang/triton (MIT licence), the stored copies read.  Triton runs each kernel in a
subprocess to capture the GPU's printf; here the output is captured in-process.  Triton checks
the lines only when compiled (its interpreter prints in a format of its own); minitriton prints
as the compiled kernels do, so the lines are checked: `pid (x, y, z) idx (i) prefix: value`.
A line the GPU prints once per thread for a scalar is printed once per program here, and a
pointer prints as its byte offset within its argument (an address on a GPU).
"""
import contextlib
import io
import itertools
from collections import Counter

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


@triton.jit
def kernel_device_print(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x: ", x)
    tl.store(Y + tl.arange(0, BLOCK), x)


@triton.jit
def kernel_device_print_hex(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    tl.device_print("x: ", x, hex=True)
    tl.store(Y + tl.arange(0, BLOCK), x)


@triton.jit
def kernel_print(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    # Triton should add a space after this prefix.
    print("x:", x)
    tl.store(Y + tl.arange(0, BLOCK), x)


@triton.jit
def kernel_device_print_large(
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    x = tl.full([BLOCK_M, BLOCK_N], 1, tl.int32)
    # Triton should change this prefix to "x: ".
    tl.device_print("x ", x)


@triton.jit
def kernel_print_multiple_args(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.full((BLOCK, ), 1, tl.int32)
    print("", x, y)


@triton.jit
def kernel_device_print_multiple_args(X, Y, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    y = tl.full((BLOCK, ), 1, tl.int32)
    tl.device_print("", x, y)
    tl.store(Y + tl.arange(0, BLOCK), y)


@triton.jit
def kernel_no_arg_print():
    print("", tl.program_id(0))


@triton.jit
def kernel_print_no_arg():
    print("no arg")


@triton.jit
def kernel_print_pointer(X, Y, BLOCK: tl.constexpr):
    tl.device_print("ptr ", X + tl.arange(0, BLOCK))


torch_types = ["int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]   # torch's "long": int64


def run_print(func, data_type):
    """print_helper.test_print: launch one kernel, and what it printed."""
    N = 128
    num_warps = N // 32
    x = np.arange(0, N, dtype=np.int32).astype(data_type)
    y = np.zeros((N, ), dtype=x.dtype)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if func == "device_print":
            kernel_device_print[(1, )](x, y, num_warps=num_warps, BLOCK=N)
        elif func == "print":
            kernel_print[(1, )](x, y, num_warps=num_warps, BLOCK=N)
        elif func == "device_print_large":
            kernel_device_print_large[(1, 2)](BLOCK_M=64, num_warps=num_warps, BLOCK_N=N)
        elif func == "print_multiple_args":
            kernel_print_multiple_args[(1, )](x, y, num_warps=num_warps, BLOCK=N)
        elif func == "device_print_multiple_args":
            kernel_device_print_multiple_args[(1, )](x, y, num_warps=num_warps, BLOCK=N)
        elif func == "no_arg_print":
            kernel_no_arg_print[(1, )](num_warps=num_warps)
        elif func == "print_no_arg":
            kernel_print_no_arg[(1, )](num_warps=num_warps)
        elif func == "device_print_hex":
            kernel_device_print_hex[(1, )](x, y, num_warps=num_warps, BLOCK=N)
        elif func == "device_print_pointer":
            kernel_print_pointer[(1, )](x, y, num_warps=num_warps, BLOCK=N)
    if func in ("device_print", "print", "device_print_hex"):
        np.testing.assert_equal(y, x)
    return [line for line in out.getvalue().split("\n") if line]


@pytest.mark.parametrize("func_type, data_type", [("device_print", data_type) for data_type in torch_types] + [
    ("print", "int32"),
    ("no_arg_print", "int32"),
    ("print_no_arg", "int32"),
    ("device_print_large", "int32"),
    ("print_multiple_args", "int32"),
    ("device_print_multiple_args", "int32"),
    ("device_print_hex", "int16"),
    ("device_print_hex", "int32"),
    ("device_print_hex", "int64"),
    ("device_print_pointer", "int32"),
])
def test_print(func_type: str, data_type: str):
    outs = run_print(func_type, data_type)
    # The total number of elements in the 1-D tensor to print.
    N = 128

    # Format is
    #   pid (<x>, <y>, <z>) idx (<i1>, <i2>, ...) <prefix> (operand <n>) <elem>
    expected_lines = Counter()
    if func_type == "print" or func_type == "device_print":
        for i in range(N):
            line = f"pid (0, 0, 0) idx ({i:3}) x: {i}"
            if data_type.startswith("float"):
                line += ".000000"
            expected_lines[line] = 1
    elif func_type == "device_print_hex":
        for i in range(N):
            line = f"pid (0, 0, 0) idx ({i:3}) x: 0x"
            if data_type == "int16":
                line += f"{i:04x}"
            if data_type == "int32":
                line += f"{i:08x}"
            if data_type == "int64":
                line += f"{i:016x}"
            expected_lines[line] = 1
    elif func_type == "no_arg_print":
        expected_lines["pid (0, 0, 0) idx (): 0"] = 1           # Triton: N (once per GPU thread)
    elif func_type == "print_no_arg":
        expected_lines["pid (0, 0, 0) no arg"] = 1              # Triton: N (once per GPU thread)
    elif func_type == "device_print_large":
        for i, j, k in itertools.product(range(2), range(64), range(N)):
            expected_lines[f"pid (0, {i}, 0) idx ({j:2}, {k:3}) x: 1"] = 1
    elif func_type == "print_multiple_args" or func_type == "device_print_multiple_args":
        for i in range(N):
            expected_lines[f"pid (0, 0, 0) idx ({i:3}): (operand 0) {i}"] = 1
            expected_lines[f"pid (0, 0, 0) idx ({i:3}): (operand 1) 1"] = 1
    elif func_type == "device_print_pointer":
        for i in range(N):
            expected_lines[f"pid (0, 0, 0) idx ({i:3}) ptr: 0x"] = 1

    actual_lines = Counter()
    for line in outs:
        # Trim the exact pointer address in the output--they can change per run.
        line = (line.split(':')[0] + ": 0x") if func_type == "device_print_pointer" else line
        actual_lines[line] += 1

    diff = Counter(actual_lines)
    diff.subtract(expected_lines)
    for line, delta in diff.items():
        if delta == 0:
            continue
        print(f'Expected line "{line}" {expected_lines[line]} time(s), but saw {actual_lines[line]} time(s)')
    assert all(delta == 0 for delta in diff.values())
