"""Loops whose trips are independent run side by side as rows (minitriton/lanes.py): the same
bits as trip by trip, and loops that carry a value, read what they store, or are read after
are left to run trip by trip."""
import ast
import textwrap

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton.testing import assert_dot_close
from minitriton import lanes
from kernels.tutorials import matmul_persistent, softmax_persistent


@pytest.fixture
def both_ways():
    """Run a callable with lanes on, then off; return both results."""
    def run(fn):
        out = []
        for on in (True, False):
            prev = lanes.set_enabled(on)
            try:
                out.append(fn())
            finally:
                lanes.set_enabled(prev)
        return out
    return run


def test_persistent_softmax_runs_as_rows_with_the_same_bits(both_ways):
    rng = np.random.default_rng(0)
    rows, cols = 1000, 256            # 1000 rows over 96 programs: uneven trip counts
    x = rng.standard_normal((rows, cols)).astype(np.float32)

    def run():
        y = np.empty_like(x)
        softmax_persistent[(96,)](y, x, cols, cols, rows, cols, BLOCK_SIZE=256, num_stages=2)
        return y, softmax_persistent.last_launch["laned"]
    (on, laned_on), (off, laned_off) = both_ways(run)
    assert (laned_on, laned_off) == (1, 0)
    np.testing.assert_array_equal(on, off)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(on, e / e.sum(1, keepdims=True), rtol=1e-6)


def test_persistent_matmul_with_an_inner_dot_loop(both_ways):
    rng = np.random.default_rng(1)
    m = 384
    a, b = (rng.standard_normal((m, m)).astype(np.float16) for _ in range(2))

    def run():
        c = np.zeros((m, m), np.float16)
        matmul_persistent[(5,)](a, b, c, m, m, m, NUM_SMS=5, BM=64, BN=64, BK=32)
        return c, matmul_persistent.last_launch["laned"]
    (on, laned), (off, _) = both_ways(run)
    assert laned == 1
    assert_dot_close(on, off, a, b)      # lanes may multiply a grid of tiles as one GEMM (tests/test_paths.py)
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(on.astype(np.float32), ref.astype(np.float32), atol=0.05, rtol=1e-2)


@mt.jit
def last_trip_kernel(out_ptr, n):
    pid = tl.program_id(0)
    for t in range(pid, n, tl.num_programs(0)):
        tl.store(out_ptr + pid, t)          # every trip of a program stores to the same place


def test_a_later_trip_stores_last(both_ways):
    def run():
        out = np.full(4, -1, np.int32)
        last_trip_kernel[(4,)](out, 23)
        return out, last_trip_kernel.last_launch["laned"]
    (on, laned), (off, _) = both_ways(run)
    assert laned == 1
    np.testing.assert_array_equal(on, [20, 21, 22, 19])
    np.testing.assert_array_equal(on, off)


@mt.jit
def scan_kernel(x_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    for i in range(1, n):                     # trip i reads what trip i - 1 stored
        prev = tl.load(x_ptr + (i - 1) * BLOCK + cols)
        tl.store(x_ptr + i * BLOCK + cols, prev + 1)


def test_a_loop_that_loads_what_it_stores_runs_trip_by_trip():
    x = np.zeros((6, 8), np.float32)
    scan_kernel[(2,)](x, 6, BLOCK=8)
    assert scan_kernel.last_launch["laned"] == 0
    np.testing.assert_array_equal(x, np.arange(6)[:, None] * np.ones(8))


def _plan(src):
    fn = ast.parse(textwrap.dedent(src)).body[0]
    loop = next(s for s in fn.body if isinstance(s, ast.For))
    loads = {}
    for x in ast.walk(fn):
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load):
            loads[x.id] = loads.get(x.id, 0) + 1
        elif isinstance(x, ast.AugAssign):
            loads[x.target.id] = loads.get(x.target.id, 0) + 1
    reads = sorted({x.id for s in loop.body for x in ast.walk(s) if isinstance(x, ast.Name)
                    and isinstance(x.ctx, ast.Load)} - {x.id for s in loop.body for x in ast.walk(s)
                                                         if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)})
    return lanes.plan(loop, reads, loads)


@pytest.mark.parametrize("src, why", [
    ("""
     def k(x, n):
         acc = 0
         for i in range(n):
             acc += tl.load(x + i)
         tl.store(x, acc)
     """, "a value carried from trip to trip"),
    ("""
     def k(x, n):
         for i in range(n):
             y = tl.load(x + i)
         tl.store(x, y)
     """, "read after the loop"),
    ("""
     def k(x, n):
         for i in range(n):
             tl.atomic_add(x, i)
     """, "an atomic"),
    ("""
     def k(x, n):
         for i in range(n):
             if i > 3:
                 break
             tl.store(x + i, i)
     """, "a break"),
    ("""
     def k(x, n):
         for i in range(n):
             for j in range(n):
                 z = tl.load(x + j)
             tl.store(x + i, z)
     """, "bound only inside an inner loop that may not run"),
    ("""
     def k(x, n):
         for i in range(n):
             print("i", i)
     """, "a print, whose lines would change order"),
])
def test_loops_with_dependent_trips_are_not_planned(src, why):
    assert _plan(src) is None, why


def test_an_independent_loop_is_planned_with_its_pointers():
    p = _plan("""
    def k(x, y, n, s):
        for i in range(n):
            v = tl.load(x + i * s)
            w = v * 2
            tl.store(y + i * s, w)
    """)
    assert p is not None
    assert p.assigned == ["v", "w"] and p.loaded == ["s", "x"] and p.stored == ["s", "y"]
