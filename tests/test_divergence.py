"""Control flow that differs between programs runs in lockstep under masks (control.py) and
gives the bits that running one program at a time gives."""
import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton.testing import assert_dot_close


def lockstep_and_sequential(kernel, grid, make_args, dot=None, **meta):
    """Run in lockstep (asserting no fallback) and one program at a time; return both outputs.
    With `dot` (the operands (a, b) of a kernel computing a @ b), outputs are held to the fp32
    accumulation bound instead of the same bits: lockstep may multiply a grid of tiles as one
    GEMM, which BLAS may sum in another order (tests/test_paths.py)."""
    a = make_args()
    kernel[grid](*a, **meta)
    assert kernel.last_launch["path"] == "lockstep", kernel.last_launch["path"]
    b = make_args()
    with mt.one_program_at_a_time():
        kernel[grid](*b, **meta)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) and dot is not None and x.shape == (dot[0].shape[0], dot[1].shape[1]):
            assert_dot_close(x, y, *dot)
        elif isinstance(x, np.ndarray):
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
def carried_scalar_kernel(out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    t = pid * 0
    for i in range(pid % 4):
        for j in range(pid % 5):
            t = t + 5
            acc += t
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc + t)


@pytest.mark.parametrize("programs", [4, 8, 16])
def test_a_scalar_carried_through_nested_divergent_loops_keeps_its_value(programs):
    """An integer scalar that programs leave an inner loop with, a few at a time, is gathered
    row by row (merging.ExitRows); its affine form must follow the rows written in place (it
    once kept the first departure's values: program 3 got 165 for 225 + 45)."""
    out = lockstep_and_sequential(carried_scalar_kernel, (programs,),
                                  lambda: (np.zeros(programs * 2, np.float32),), BLOCK=2)[0]
    expect = []
    for p in range(programs):
        t = acc = 0
        for _ in range(p % 4):
            for _ in range(p % 5):
                t += 5
                acc += t
        expect.append(acc + t)
    np.testing.assert_array_equal(out[::2], expect)


@mt.jit
def lock_kernel(lock_ptr, total_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_a_spin_lock_that_every_program_shares_is_taken_in_rounds_and_is_right():
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    lock_kernel[(6,)](lock, total)
    assert total[0] == 6 and lock[0] == 0
    # (tests/test_locks.py: the rounds, and the fallback where they do not apply)
    assert lock_kernel.last_launch["path"] == "lockstep" and lock_kernel.last_launch["rounds"] == 6


def test_block_conditions_are_refused():
    @mt.jit
    def k(out_ptr):
        x = tl.arange(0, 4)
        if x > 2:
            tl.store(out_ptr, 1)
    with pytest.raises(ValueError, match="more than one value is ambiguous"):    # Triton's words
        k[(2,)](np.zeros(1, np.int32))


def test_membership_and_two_targets_are_refused_and_chained_comparisons_run_as_triton_3_9_runs_them():
    """Triton's front end refuses `in` and `a = b = x`; since 3.9 it runs `a < b < c` as
    `a < b and b < c` (elementwise for blocks).  The usual slip behind a chained comparison,
    `x < M & y < N`, which Python reads as `x < (M & y) < N`, runs with that meaning too, as in
    Triton, but is warned about."""
    @mt.jit
    def scalars(out_ptr, lo, n):
        pid = tl.program_id(0)
        if lo <= pid < n:
            tl.store(out_ptr + pid, 1)

    @mt.jit
    def blocks(out_ptr, lo, n, B: tl.constexpr):
        r = tl.arange(0, B)
        tl.store(out_ptr + r, (lo <= r < n).to(tl.int32))

    @mt.jit
    def precedence(out_ptr, M, N, B: tl.constexpr):
        r, c = tl.arange(0, B), tl.arange(0, B)
        tl.store(out_ptr + r, r, mask=r < M & c < N)

    @mt.jit
    def membership(out_ptr, n):
        if n in (1, 2):
            tl.store(out_ptr, 1)

    @mt.jit
    def two_targets(out_ptr):
        a = b = tl.arange(0, 4)
        tl.store(out_ptr + a, b)

    out = np.zeros(4, np.int32)
    with pytest.raises(TypeError, match=r"Simultaneous multiple assignment is not supported. \(line 2.*a = b ="):
        two_targets[(1,)](out)      # Triton: a TypeError at the launch, from the pass that hashes the kernel
    with pytest.raises(mt.CompilationError, match=r"operator 'In' is not \(currently\) implemented.*n in \(1, 2\)"):
        membership[(1,)](out, 1)
    assert not out.any()
    scalars[(4,)](out, 1, 3)
    np.testing.assert_array_equal(out, [0, 1, 1, 0])
    blocks[(1,)](out, 2, 4, B=4)
    np.testing.assert_array_equal(out, [0, 0, 1, 1])
    out[:] = 7
    with pytest.warns(SyntaxWarning, match=r"`r < M & c < N` is a chained comparison"):
        precedence[(1,)](out, 3, 3, B=4)
    # r < (M & c) < N: M & c is [0, 1, 2, 3] & 3 = c, so r < c is never true and nothing is stored
    np.testing.assert_array_equal(out, 7)


@mt.jit
def temporaries_kernel(out_ptr, seen_ptr, n):
    """Names bound inside divergent statements: some local to them (not merged), some read
    after them or in the other branch (merged)."""
    pid = tl.program_id(0)
    t = pid * 100            # read in the else branch: the else must see this value
    total = 0
    i = 0
    while i < pid:
        tmp = i * 2          # local to the loop body
        for j in range(i):
            inner = j + tmp  # local to the inner loop
            total += inner
        last = tmp           # read after the loop
        i += 1
    if pid % 2 == 0:
        t = t + 1
        scratch = t * 3      # local to this branch
        total += scratch
    else:
        total += t           # the value from before the if
    tl.store(out_ptr + pid, total)
    if pid > 0:
        tl.store(seen_ptr + pid, last)


def test_loop_and_branch_temporaries_keep_python_semantics():
    out, seen = lockstep_and_sequential(temporaries_kernel, (7,), lambda: (np.zeros(7, np.int32),
                                                                             np.full(7, -1, np.int32), 7))[:2]
    want, want_seen = [], []
    for p in range(7):
        t, total, last = p * 100, 0, -1
        for i in range(p):
            tmp = i * 2
            for j in range(i):
                total += j + tmp
            last = tmp
        if p % 2 == 0:
            t = t + 1
            total += t * 3
        else:
            total += t
        want.append(total)
        want_seen.append(last)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(seen, want_seen)


def test_lowering_merges_only_names_observed_outside_their_statement():
    import ast
    from minitriton import lowering
    src = '''
def k(x):
    i = 0
    while i < x:
        tmp = i * 2
        for j in range(i):
            inner = j + tmp
        kept = tmp
        i += 1
    use = kept
    if x:
        t = 1
        u = t
    else:
        u = 2
    return u
'''
    fdef = ast.parse(src).body[0]
    low = lowering._Lower("f", set(), lowering.load_counts(fdef))
    seen = []
    names = low.names
    low.names = lambda *a, **kw: seen.append(names(*a, **kw)) or seen[-1]
    low.block(fdef.body)
    assert [sorted(s) for s in seen] == [["i", "kept"], [], ["u"]]  # while, inner for, if


# ---------------------------------------------------------------- addresses
@mt.jit
def grouped_copy_kernel(src_ptrs, dst_ptrs, sizes, n_groups, BLOCK: tl.constexpr):
    """Program p copies (and doubles) block p of whichever group it falls in."""
    pid = tl.program_id(0)
    start = 0
    for g in range(n_groups):
        n = tl.load(sizes + g)
        blocks = tl.cdiv(n, BLOCK)
        if pid >= start and pid < start + blocks:
            src = tl.load(src_ptrs + g).to(tl.pointer_type(tl.float32))
            dst = tl.load(dst_ptrs + g).to(tl.pointer_type(tl.float32))
            offs = (pid - start) * BLOCK + tl.arange(0, BLOCK)
            tl.store(dst + offs, tl.load(src + offs, mask=offs < n) * 2, mask=offs < n)
        start += blocks


def test_pointers_cast_from_addresses_reach_each_groups_arrays():
    rng = np.random.default_rng(0)
    sizes = [100, 64, 33]
    srcs = [rng.standard_normal(n).astype(np.float32) for n in sizes]

    def make():
        dsts = [np.zeros(n, np.float32) for n in sizes]
        return (np.array([mt.data_ptr(s) for s in srcs], np.int64), np.array([mt.data_ptr(d) for d in dsts], np.int64),
                np.array(sizes, np.int32), len(sizes), dsts)
    args = make()
    grouped_copy_kernel[(8,)](*args[:4], BLOCK=32)
    assert grouped_copy_kernel.last_launch["path"] == "lockstep"
    for s, d in zip(srcs, args[4]):
        np.testing.assert_array_equal(d, 2 * s)
    args = make()
    with mt.one_program_at_a_time():
        grouped_copy_kernel[(8,)](*args[:4], BLOCK=32)
    for s, d in zip(srcs, args[4]):
        np.testing.assert_array_equal(d, 2 * s)


def test_unknown_addresses_and_type_mismatches_are_errors_that_write_nothing():
    dst = np.zeros(32, np.float32)
    table = np.array([12345678, mt.data_ptr(dst)], np.int64)
    with pytest.raises(mt.OutOfBoundsError, match="no array argument"):
        grouped_copy_kernel[(1,)](table[:1], table[1:], np.array([32], np.int32), 1, BLOCK=32)
    ints = np.arange(32, dtype=np.int32)
    with pytest.raises(TypeError, match="pointer<fp32>"):
        grouped_copy_kernel[(1,)](np.array([mt.data_ptr(ints)], np.int64), table[1:], np.array([32], np.int32), 1,
                                  BLOCK=32)
    assert not dst.any()


@mt.jit
def pick_kernel(a_ptr, b_ptr, out_ptr, addr_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    p = tl.where(pid % 2 == 0, a_ptr, b_ptr) + offs      # pointers into different arguments
    tl.store(out_ptr + pid * BLOCK + offs, tl.load(p))
    tl.store(addr_ptr + pid, (a_ptr + pid).to(tl.int64))  # a pointer's address


def test_where_between_arguments_and_pointer_to_address():
    a, b = np.arange(8, dtype=np.float32), -np.arange(8, dtype=np.float32)
    out, addr = np.zeros((4, 8), np.float32), np.zeros(4, np.int64)
    pick_kernel[(4,)](a, b, out, addr, BLOCK=8)
    np.testing.assert_array_equal(out, [a, b, a, b])
    np.testing.assert_array_equal(addr, mt.data_ptr(a) + 4 * np.arange(4))


@mt.jit
def clamped_persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BM: tl.constexpr,
                              BN: tl.constexpr, BK: tl.constexpr):
    """Tutorial 09's addressing: rows and columns past the edge clamped with tl.where and %."""
    num_pid_n = tl.cdiv(N, BN)
    for tile in range(tl.program_id(0), tl.cdiv(M, BM) * num_pid_n, NUM_SMS):
        rows = tile // num_pid_n * BM + tl.arange(0, BM)
        cols = tile % num_pid_n * BN + tl.arange(0, BN)
        safe_rows = tl.where(rows < M, rows, 0)
        safe_cols = cols % N
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            ks = k * BK + tl.arange(0, BK)
            a = tl.load(a_ptr + safe_rows[:, None] * K + ks[None, :], mask=ks[None, :] < K, other=0.0)
            b = tl.load(b_ptr + ks[:, None] * N + safe_cols[None, :], mask=ks[:, None] < K, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("shape", [(128, 128, 64), (100, 72, 40)])
def test_clamped_persistent_matmul_with_uneven_tiles(shape):
    M, N, K = shape
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c, = lockstep_and_sequential(clamped_persistent_matmul, (5,), lambda: (a, b, np.zeros((M, N), np.float32), M, N, K),
                                 dot=(a, b), NUM_SMS=5, BM=32, BN=32, BK=16)[2:3]
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- narrowing
@mt.jit
def few_programs_loop_kernel(x_ptr, out_ptr, trips_ptr, BLOCK: tl.constexpr):
    """Most programs leave at once; the few left narrow the launch to themselves, reading
    blocks defined before the loop, breaking, continuing, nesting a per-program range."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    base = tl.load(x_ptr + pid * BLOCK + offs)        # read in the loop, not assigned there
    trips = tl.load(trips_ptr + pid)
    acc = tl.zeros([BLOCK], tl.float32)
    i = 0
    while i < trips:
        i += 1
        if i % 3 == 0:
            continue
        for j in range(0, i):                         # per-program bound inside the narrowed loop
            acc += base * (j + 1)
        if tl.sum(acc, axis=0) > 1e6:
            break
    tl.store(out_ptr + pid * BLOCK + offs, acc + i)


def test_loops_narrow_to_the_few_programs_still_running_and_keep_the_bits():
    rng = np.random.default_rng(3)
    P, B = 32, 16
    x = rng.uniform(0, 1, (P, B)).astype(np.float32)
    trips = np.zeros(P, np.int32)
    trips[[3, 17, 30]] = [5, 9, 40]                   # three of 32 programs loop
    out, = lockstep_and_sequential(few_programs_loop_kernel, (P,), lambda: (x, np.zeros((P, B), np.float32), trips),
                                   BLOCK=B)[1:2]
    assert few_programs_loop_kernel.last_launch["narrowed"] == 0  # (the sequential run narrows nothing)
    few_programs_loop_kernel[(P,)](x, np.zeros((P, B), np.float32), trips, BLOCK=B)
    assert few_programs_loop_kernel.last_launch["narrowed"] >= 1
    want = np.zeros((P, B), np.float32)
    for p in range(P):
        acc, i = np.zeros(B, np.float32), 0
        while i < trips[p]:
            i += 1
            if i % 3 == 0:
                continue
            for j in range(i):
                acc += x[p] * np.float32(j + 1)
            if acc.sum() > 1e6:
                break
        want[p] = acc + i
    np.testing.assert_allclose(out, want, rtol=1e-6)


@mt.jit
def unmasked_address_kernel(src_ptrs, out_ptr, which_ptr, n_active, BLOCK: tl.constexpr):
    """Unmasked block loads through pointers cast from addresses: programs below n_active read
    block pid of the array their entry names (one array for all, or several), the rest idle."""
    pid = tl.program_id(0)
    if pid < n_active:
        src = tl.load(src_ptrs + tl.load(which_ptr + pid)).to(tl.pointer_type(tl.float32))
        offs = tl.arange(0, BLOCK)
        block = tl.load(src + pid * BLOCK + offs[:, None] * 1 + offs[None, :] * 0)
        tl.store(out_ptr + pid * BLOCK * BLOCK + offs[:, None] * BLOCK + offs[None, :], block + 1)


@pytest.mark.parametrize("which", [[0] * 6, [0, 1, 0, 1, 1, 0]], ids=["one array", "two arrays"])
def test_unmasked_loads_through_addresses_in_divergent_code(which):
    srcs = [np.arange(64, dtype=np.float32), -np.arange(64, dtype=np.float32)]
    table = np.array([mt.data_ptr(s) for s in srcs], np.int64)
    got = {}
    for mode in ("lockstep", "sequential"):
        out = np.zeros((6, 8, 8), np.float32)
        args = (table, out, np.array(which, np.int32), 4)
        if mode == "sequential":
            with mt.one_program_at_a_time():
                unmasked_address_kernel[(6,)](*args, BLOCK=8)
        else:
            unmasked_address_kernel[(6,)](*args, BLOCK=8)
            assert unmasked_address_kernel.last_launch["path"] == "lockstep"
        got[mode] = out
    want = np.zeros((6, 8, 8), np.float32)
    for p in range(4):
        want[p] = srcs[which[p]][p * 8 + np.arange(8)][:, None] + 1
    np.testing.assert_array_equal(got["lockstep"], want)
    np.testing.assert_array_equal(got["sequential"], want)
    out = np.zeros((6, 8, 8), np.float32)
    with pytest.raises(mt.OutOfBoundsError, match="out of bounds"):   # block 8 would end past the array
        unmasked_address_kernel[(9,)](table, np.zeros((9, 8, 8), np.float32), np.zeros(9, np.int32), 9, BLOCK=8)


@mt.jit
def staggered_exit_kernel(x_ptr, out_ptr, idx_ptr, n_ptr, BLOCK: tl.constexpr):
    """Program p runs p + 1 trips: a float block, an index block, a pointer block and a scalar
    each leave the loop with the value of the program's own last trip."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    idx = offs
    ptrs = x_ptr + offs
    n = 0
    for t in range(0, pid + 1):
        acc = acc * 0.5 + tl.load(ptrs)
        idx = idx + t
        ptrs += BLOCK
        n += 1
    tl.store(out_ptr + pid * BLOCK + offs, acc)
    tl.store(idx_ptr + pid * BLOCK + offs, idx)
    tl.store(n_ptr + pid, n)


def test_programs_leaving_one_by_one_keep_their_values_through_repeated_narrowing():
    P, B = 40, 8
    x = np.random.default_rng(3).standard_normal(P * B).astype(np.float32)
    make = lambda: (x, np.zeros((P, B), np.float32), np.zeros((P, B), np.int32), np.zeros(P, np.int32))  # noqa: E731
    staggered_exit_kernel[(P,)](*make(), BLOCK=B)
    assert staggered_exit_kernel.last_launch["narrowed"] >= 3   # 40 -> 20 -> 10 -> 5 programs
    out = lockstep_and_sequential(staggered_exit_kernel, (P,), make, BLOCK=B)
    want = np.zeros((P, B), np.float64)
    for p in range(P):
        acc = np.zeros(B, np.float32)
        for t in range(p + 1):
            acc = acc * np.float32(0.5) + x[t * B:(t + 1) * B]
        want[p] = acc
        assert (out[2][p] == np.arange(B) + p * (p + 1) // 2).all()
    np.testing.assert_array_equal(out[1], want)
    assert (out[3] == np.arange(1, P + 1)).all()
