"""Control flow that differs between programs runs in lockstep under masks (control.py) and
gives the bits that running one program at a time gives."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl


def lockstep_and_sequential(kernel, grid, make_args, **meta):
    """Run in lockstep (asserting no fallback) and one program at a time; return both outputs."""
    a = make_args()
    kernel[grid](*a, **meta)
    assert kernel.last_launch["path"] == "lockstep", kernel.last_launch["path"]
    b = make_args()
    with mt.one_program_at_a_time():
        kernel[grid](*b, **meta)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
    return a


@mt.jit
def branches_kernel(out_ptr, n):
    pid = tl.program_id(0)
    if pid >= n:
        return
    acc = 0
    i = 0
    while i < pid:          # trip count differs per program
        acc += i
        i += 1
    if pid % 2 == 0:
        v = acc * 10
    elif pid % 3 == 0:
        v = acc + 1000
    else:
        v = -acc
    tl.store(out_ptr + pid, v)


def test_early_return_while_and_if_elif_else():
    out, = lockstep_and_sequential(branches_kernel, (10,), lambda: (np.full(10, -99, np.int32), 7))[:1]
    expect = []
    for p in range(10):
        if p >= 7:
            expect.append(-99)
            continue
        acc = sum(range(p))
        expect.append(acc * 10 if p % 2 == 0 else acc + 1000 if p % 3 == 0 else -acc)
    np.testing.assert_array_equal(out, expect)


@mt.jit
def row_loop_kernel(out_ptr, in_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    """Persistent: program p handles rows p, p + P, ...; breaks on a negative row sum,
    skips rows whose first element is zero."""
    cols = tl.arange(0, BLOCK)
    count = 0
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(in_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        if tl.sum(x, axis=0) < -4.0:
            break
        if tl.load(in_ptr + row * n_cols) == 0.0:
            continue
        count += 1
        tl.store(out_ptr + row * n_cols + cols, x * 2, mask=cols < n_cols)
    tl.store(out_ptr + n_rows * n_cols + tl.program_id(0), count)


def test_per_program_trip_counts_with_break_and_continue():
    rng = np.random.default_rng(0)
    rows, cols, progs = 23, 10, 4
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x[[3, 9], 0] = 0.0
    x[14] -= 3.0
    out = lockstep_and_sequential(row_loop_kernel, (progs,),
                                  lambda: (np.zeros(rows * cols + progs, np.float32), x, rows, cols), BLOCK=16)[0]
    expect, counts = np.zeros((rows, cols), np.float32), [0] * progs
    for p in range(progs):
        for r in range(p, rows, progs):
            if x[r].sum() < -4.0:
                break
            if x[r, 0] == 0.0:
                continue
            counts[p] += 1
            expect[r] = x[r] * 2
    np.testing.assert_array_equal(out[:rows * cols].reshape(rows, cols), expect)
    np.testing.assert_array_equal(out[rows * cols:], counts)


@mt.jit
def causal_kernel(q_ptr, k_ptr, out_ptr, N: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
    """A causal-attention-shaped loop: block m accumulates q_m @ k_j^T over j <= m."""
    m = tl.program_id(0)
    r = tl.arange(0, BLOCK)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + (m * BLOCK + r)[:, None] * D + d[None, :])
    acc = tl.zeros([BLOCK, BLOCK], tl.float32)
    for j in range(0, m + 1):
        k = tl.load(k_ptr + (j * BLOCK + r)[:, None] * D + d[None, :])
        acc += tl.dot(q, tl.trans(k))
    tl.store(out_ptr + (m * BLOCK + r)[:, None] * BLOCK + r[None, :], acc)


def test_loop_bound_from_program_id_with_dots():
    rng = np.random.default_rng(1)
    N, D, B = 64, 16, 16
    q = rng.standard_normal((N, D)).astype(np.float16)
    k = rng.standard_normal((N, D)).astype(np.float16)
    out = lockstep_and_sequential(causal_kernel, (N // B,), lambda: (q, k, np.zeros((N, B), np.float32)),
                                  N=N, D=D, BLOCK=B)[2]
    q64, k64 = q.astype(np.float64), k.astype(np.float64)
    for m in range(N // B):
        ref = sum(q64[m * B:(m + 1) * B] @ k64[j * B:(j + 1) * B].T for j in range(m + 1))
        np.testing.assert_allclose(out[m * B:(m + 1) * B], ref, rtol=1e-5, atol=1e-4)


@mt.jit
def clamp_helper(x, lo):
    if x < lo:
        return lo
    return x


@mt.jit
def expressions_kernel(out_ptr, x_ptr, n):
    pid = tl.program_id(0)
    x = tl.load(x_ptr + pid)
    a = x if pid % 2 == 0 else -x                         # a divergent conditional expression
    ok = (pid > 1) and (pid < n) or not (pid != 0)        # and / or / not between blocks
    b = clamp_helper(x, 0.5)                              # a helper returning early in some programs
    one = (1).to(tl.float32)                              # a literal used as a tensor
    tl.store(out_ptr + pid, a + ok.to(tl.float32) * 100 + b * 1000 + one * 10000)


def test_divergent_expressions_and_helpers():
    x = np.array([0.25, 1.5, 0.75, 0.1, 2.0, 0.6], np.float32)
    out = lockstep_and_sequential(expressions_kernel, (6,), lambda: (np.zeros(6, np.float32), x, 4))[0]
    p = np.arange(6)
    ok = ((p > 1) & (p < 4)) | (p == 0)
    expect = np.where(p % 2 == 0, x, -x) + ok * 100 + np.maximum(x, 0.5) * 1000 + 10000
    np.testing.assert_allclose(out, expect.astype(np.float32), rtol=1e-6)


@mt.jit
def masked_effects_kernel(out_ptr, count_ptr, n):
    pid = tl.program_id(0)
    if pid < n:                        # out has n entries: other programs' offsets are out of bounds
        tl.store(out_ptr + pid, pid * 2)
        tl.atomic_add(count_ptr, 1)
    else:
        tl.atomic_add(count_ptr + 1, 1)


def test_inactive_programs_touch_no_memory():
    out, count, _ = lockstep_and_sequential(masked_effects_kernel, (9,),
                                            lambda: (np.zeros(5, np.int32), np.zeros(2, np.int32), 5))
    np.testing.assert_array_equal(out, np.arange(5) * 2)
    np.testing.assert_array_equal(count, [5, 4])


@mt.jit
def nested_kernel(out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    total = tl.zeros([N], tl.int32)
    if pid % 3 != 0:
        for i in range(pid):
            j = 0
            while j < i:
                if (i + j) % 4 == 1:
                    j += 2
                    continue
                total += tl.arange(0, N) * j
                j += 1
    tl.store(out_ptr + pid * N + tl.arange(0, N), total)


def test_nested_divergent_loops_and_branches():
    P, N = 7, 4
    out = lockstep_and_sequential(nested_kernel, (P,), lambda: (np.zeros(P * N, np.int32),), N=N)[0]
    expect = np.zeros((P, N), np.int32)
    for p in range(P):
        if p % 3 != 0:
            for i in range(p):
                j = 0
                while j < i:
                    if (i + j) % 4 == 1:
                        j += 2
                        continue
                    expect[p] += np.arange(N) * j
                    j += 1
    np.testing.assert_array_equal(out.reshape(P, N), expect)


@mt.jit
def lock_kernel(lock_ptr, total_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_a_spin_lock_that_lockstep_cannot_run_falls_back_and_is_right():
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    lock_kernel[(6,)](lock, total)
    assert total[0] == 6 and lock[0] == 0
    assert lock_kernel.last_launch["path"].startswith("one program at a time")


def test_block_conditions_are_refused():
    @mt.jit
    def k(out_ptr):
        x = tl.arange(0, 4)
        if x > 2:
            tl.store(out_ptr, 1)
    with pytest.raises(ValueError, match="must be a scalar"):
        k[(2,)](np.zeros(1, np.int32))
