"""Triton's python/test/unit/test_debug.py, ported to minitriton: `tl.device_assert` under every
combination of the kernel's `debug=`, the launch's `debug=` and TRITON_DEBUG (and its `mask=`),
`tl.static_assert`, and debug mode's integer-overflow sanitizer for add, sub and mul.

Source: triton-lang/triton (MIT licence), the stored copy at commit
00e397fbd15e7445e381a5bf90490df923020bac.  Kernels unchanged; host code ours on numpy.  Triton's
`run_in_process` runs each case in a fresh process (a device-side assert leaves a CUDA context
unusable); here `run_in_process` below runs it in this process with the environment set for the
call, since a failed assert leaves nothing behind.  A GPU reports a failed device assert as a
RuntimeError, which is what these tests catch; minitriton's is also an AssertionError, as
Triton's interpreter raises.  Not ported: `test_expect_zero_device_assert`, which calls
`tl.expect_zero`, a builtin of that commit's language whose definition is not in the stored
sources (tests/triton/README.md).
"""
import os
from dataclasses import dataclass

import numpy as np
import pytest

import minitriton as triton                 # was: import triton
import minitriton.language as tl            # was: import triton.language as tl


@dataclass
class _Result:
    exc: BaseException | None


def run_in_process(fn, args, env=None):
    """Triton's triton._internal_testing.run_in_process: the exception `fn(*args)` raised (or None),
    with the environment variables `env` set for the call."""
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        fn(*args)
        return _Result(None)
    except Exception as e:
        return _Result(e)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        triton.knobs.refresh_knobs()


def _run_device_assert(cond, mask, opt_flag, jit_flag, device):
    triton.knobs.refresh_knobs()
    np.zeros([1], dtype=np.int32)

    @triton.jit(debug=jit_flag)
    def _kernel(COND: tl.constexpr, MASK: tl.constexpr):
        tl.device_assert(COND, 'test', mask=MASK)

    kwargs = {}
    if opt_flag is not None:
        kwargs["debug"] = opt_flag

    _kernel[(1, )](cond, mask, **kwargs)


def _run_device_assert_barrier(device):
    triton.knobs.refresh_knobs()
    tensor = np.zeros([16], dtype=np.int32)

    @triton.jit
    def _kernel(in_ptr0):
        xindex = tl.arange(0, 8)
        tmp0 = tl.load(in_ptr0 + xindex)
        tl.device_assert(tmp0 < 1)

    _kernel[(1, )](tensor)


@pytest.mark.parametrize('cond', [True, False])
@pytest.mark.parametrize('mask', [True, False, None])
@pytest.mark.parametrize('opt_flag', [True, False, None])
@pytest.mark.parametrize('env_var', [True, False])
@pytest.mark.parametrize('jit_flag', [True, False])
def test_device_assert(cond, mask, opt_flag, env_var, jit_flag, device):
    is_debug = env_var or (opt_flag if opt_flag is not None else jit_flag)
    result = run_in_process(_run_device_assert, (cond, mask, opt_flag, jit_flag, device),
                            env={"TRITON_DEBUG": str(int(env_var))})

    if not cond and is_debug and mask is not False:
        assert isinstance(result.exc, RuntimeError)
        return

    assert result.exc is None, result.exc


def test_device_assert_barrier(device):
    result = run_in_process(_run_device_assert_barrier, (device, ), env={"TRITON_DEBUG": "1"})
    assert result.exc is None, result.exc


@pytest.mark.parametrize("cond", [False, True])
def test_static_assert(cond):

    @triton.jit
    def _kernel(COND: tl.constexpr):
        tl.static_assert(COND)

    if not cond:
        with pytest.raises(triton.compiler.errors.CompileTimeAssertionFailure):
            _kernel[(1, )](cond)
        return

    _kernel[(1, )](cond)


def _run_overflow(x, y, x_dtype, y_dtype, debug, op, device):
    if op == "add":

        @triton.jit
        def tri_func(X, Y, Z):
            tl.store(Z, tl.load(X) + tl.load(Y))

        ref_func = lambda lhs, rhs: lhs + rhs
    elif op == "mul":

        @triton.jit
        def tri_func(X, Y, Z):
            tl.store(Z, tl.load(X) * tl.load(Y))

        ref_func = lambda lhs, rhs: lhs * rhs
    else:
        assert op == "sub"

        @triton.jit
        def tri_func(X, Y, Z):
            tl.store(Z, tl.load(X) - tl.load(Y))

        ref_func = lambda lhs, rhs: lhs - rhs

    x = np.array([x], dtype=getattr(np, x_dtype))
    y = np.array([y], dtype=getattr(np, y_dtype))
    z = np.empty_like(x)
    tri_func[(1, )](x, y, z, debug=debug)
    with np.errstate(over="ignore"):        # torch wraps silently, as the kernel does without debug
        assert int(z[0]) == int(ref_func(x, y)[0])


def _assert_overflow_result(result, debug, should_overflow):
    if should_overflow and debug:
        assert isinstance(result.exc, RuntimeError)
        assert "device-side assert" in str(result.exc)
        return

    assert result.exc is None, result.exc


# integer overflow sanitization


@pytest.mark.parametrize("x, y, x_dtype, y_dtype, debug, should_overflow", [
    (-2**31, -1, 'int32', 'int32', False, False),
    (-2**31, -1, 'int32', 'int32', True, True),
    (2**31 - 1, 1, 'int32', 'int32', True, True),
    (2**31 - 1, 100, 'int32', 'int32', True, True),
    (-2**31, 0, 'int32', 'int32', True, False),
    (-2**31, 2, 'int32', 'int32', True, False),
    (0, -1, 'int32', 'int32', True, False),
    (-2**15, -1, 'int16', 'int16', True, True),
    (2**15 - 1, 1, 'int16', 'int16', True, True),
])
def test_sanitize_int_add_overflow(x, y, x_dtype, y_dtype, debug, should_overflow, device):
    result = run_in_process(_run_overflow, (x, y, x_dtype, y_dtype, debug, "add", device))
    _assert_overflow_result(result, debug, should_overflow)


# mul overflow


@pytest.mark.parametrize("x, y, x_dtype, y_dtype, debug, should_overflow", [
    (2**30, 4, 'int32', 'int32', False, False),
    (2**30, 4, 'int32', 'int32', True, True),
    (2**30, 2, 'int32', 'int32', True, True),
    (-2**30, -4, 'int32', 'int32', True, True),
    (-2**31, 1, 'int32', 'int32', True, False),
    (-2**30, 2, 'int32', 'int32', True, False),
])
def test_sanitize_int_mul_overflow(x, y, x_dtype, y_dtype, debug, should_overflow, device):
    result = run_in_process(_run_overflow, (x, y, x_dtype, y_dtype, debug, "mul", device))
    _assert_overflow_result(result, debug, should_overflow)


# sub overflow


@pytest.mark.parametrize("x, y, x_dtype, y_dtype, debug, should_overflow", [
    (-2**31, 1, 'int32', 'int32', False, False),
    (-2**31, 1, 'int32', 'int32', True, True),
    (2**31 - 1, -1, 'int32', 'int32', True, True),
    (2**31 - 1, 1, 'int32', 'int32', True, False),
    (-2**31, -1, 'int32', 'int32', True, False),
])
def test_sanitize_int_sub_overflow(x, y, x_dtype, y_dtype, debug, should_overflow, device):
    result = run_in_process(_run_overflow, (x, y, x_dtype, y_dtype, debug, "sub", device))
    _assert_overflow_result(result, debug, should_overflow)
