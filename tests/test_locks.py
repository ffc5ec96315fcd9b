"""Critical sections behind a spin lock run in rounds of the programs the lock admits at once
(minitriton/locks.py): the same bits as the fallback that runs the launch in smaller groups,
the lock handed over in program order, and the fallback still there when the rounds cannot
apply."""
import ast
import textwrap

import numpy as np
import pytest

import minitriton as mt
import minitriton.language as tl
from minitriton import locks
from kernels.tutorials import layer_norm_dw


def both_ways(kernel, fn):
    """fn() with the rounds on, then off (each from a cold start: no remembered group size)."""
    out = []
    for on in (True, False):
        prev = locks.set_enabled(on)
        kernel._groups.clear()
        try:
            out.append(fn())
        finally:
            locks.set_enabled(prev)
            kernel._groups.clear()
    return out


def test_layer_norm_partial_sums_under_locks_take_rounds_with_the_same_bits():
    rng = np.random.default_rng(0)
    rows, cols, group = 300, 200, 16      # 300 rows over 16 locks: uneven rounds
    x, dy = (rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2))
    mean, rstd = x.mean(1).astype(np.float32), (1 / x.std(1)).astype(np.float32)

    def run():
        dw, lock, count = np.zeros((group, cols), np.float32), np.zeros(group, np.int32), np.zeros(group, np.int32)
        layer_norm_dw[(rows,)](dy, x, mean, rstd, dw, lock, count, cols, cols, GROUP=group, BLOCK=256)
        return dw, lock, count, dict(layer_norm_dw.last_launch)
    (dw, lock, count, on), (dw_off, _, count_off, off) = both_ways(layer_norm_dw, run)
    assert on["rounds"] == -(-rows // group) and on["path"] == "lockstep"
    assert off["rounds"] == 0 and "programs at a time" in off["path"]
    np.testing.assert_array_equal(dw, dw_off)
    assert lock.tolist() == [0] * group and count.tolist() == count_off.tolist() == [
        len(range(g, rows, group)) for g in range(group)]
    # each group's sum in program order, as a GPU handing the lock over in that order would add
    partial = dy * (x - mean[:, None]) * rstd[:, None]
    want = np.stack([np.cumsum(partial[g::group], axis=0, dtype=np.float32)[-1] for g in range(group)])
    np.testing.assert_array_equal(dw, want)


@mt.jit
def one_lock_kernel(lock_ptr, total_ptr, log_ptr):
    pid = tl.program_id(0)
    if pid % 3 == 1:
        return                         # these programs never reach the lock
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    t = tl.load(total_ptr)
    tl.store(log_ptr + t, pid)
    tl.store(total_ptr, t + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_one_lock_for_every_program_is_handed_over_in_program_order():
    n = 20
    takers = [p for p in range(n) if p % 3 != 1]

    def run():
        lock, total, log = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(n, -1, np.int32)
        one_lock_kernel[(n,)](lock, total, log)
        return lock, total, log, dict(one_lock_kernel.last_launch)
    (lock, total, log, on), (_, total_off, log_off, off) = both_ways(one_lock_kernel, run)
    assert on["rounds"] == len(takers) and on["path"] == "lockstep"
    assert lock[0] == 0 and total[0] == total_off[0] == len(takers)
    assert log[:len(takers)].tolist() == takers and log_off.tolist() == log.tolist()
    with mt.one_program_at_a_time():
        lock, total, log = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(n, -1, np.int32)
        one_lock_kernel[(n,)](lock, total, log)
    assert log[:len(takers)].tolist() == takers


@mt.jit
def lock_in_a_branch(lock_ptr, total_ptr, flag):
    if flag > 0:                       # not the kernel's top level: no rounds, the groups' fallback
        while tl.atomic_cas(lock_ptr, 0, 1) == 1:
            pass
        tl.store(total_ptr, tl.load(total_ptr) + 1)
        tl.atomic_xchg(lock_ptr, 0)


def test_a_lock_the_rounds_do_not_cover_still_falls_back():
    lock, total = np.zeros(1, np.int32), np.zeros(1, np.int32)
    lock_in_a_branch[(6,)](lock, total, 1)
    assert total[0] == 6 and lock[0] == 0
    assert lock_in_a_branch.last_launch["rounds"] == 0
    assert lock_in_a_branch.last_launch["path"].startswith("one program at a time")


@mt.jit
def unreleased_lock(lock_ptr, seen_ptr):
    while tl.atomic_cas(lock_ptr + tl.program_id(0) % 2, 0, 1) == 1:
        pass
    tl.atomic_add(seen_ptr, 1)         # never released: only the first program of each lock gets in


def test_a_lock_never_released_is_a_deadlock_reported_at_once():
    """Programs 2 and 3 wait for locks nobody releases: a GPU would spin forever.  Run as
    threads that hand over while they wait (cooperative.py), a round in which they only spin
    and nobody writes is a deadlock, reported as one, long before the launch's time limit."""
    seen = np.zeros(1, np.int32)
    with pytest.raises(RuntimeError, match=r"programs \[2, 3\] \(2 of 4\) are in the loop at line \d+, .*a lock never released"):
        unreleased_lock[(4,)](np.zeros(2, np.int32), seen)
    assert seen[0] == 0                # the launch wrote nothing


@pytest.mark.parametrize("src, found", [
    ("while tl.atomic_cas(Lock, 0, 1) == 1:\n    pass", "Lock"),
    ("while tl.atomic_cas(pointer=Lock + g, cmp=0, val=1) != 0:\n    pass", "Lock + g"),
    ("while atomic_cas(L, 0, 1):\n    '''spin'''", "L"),
    ("while tl.atomic_cas(tl.load(P), 0, 1) == 1:\n    pass", None),       # pointer read from memory
    ("while tl.atomic_cas(L, 0, 1) == 1:\n    n += 1", None),             # a loop that does work
    ("while tl.atomic_add(L, 0) < 3:\n    pass", None),                   # a barrier, not a lock
    ("while tl.atomic_cas(L, 0, 1) == 1 and tl.atomic_cas(M, 0, 1) == 1:\n    pass", None),
])
def test_spin_locks_are_recognised_by_their_shape(src, found):
    stmt = ast.parse(textwrap.dedent(src)).body[0]
    pointer = locks.spin_pointer(stmt)
    assert (None if pointer is None else ast.unparse(pointer)) == found


def test_the_arithmetic_every_round_would_repeat_is_done_once_before_the_rounds():
    region = ast.parse(textwrap.dedent('''
        while tl.atomic_cas(Lock, 0, 1) == 1:
            pass
        count = tl.load(Count + lock_id)
        if count != 0:
            partial += tl.load(DW + lock_id * N + cols, mask=mask)
        tl.store(DW + lock_id * N + cols, partial, mask=mask)
        tl.store(Count + lock_id, count + 1)
        tl.atomic_xchg(Lock, 0)
    ''')).body
    names = iter(["t0", "t1", "t2"])
    before = {"Lock", "Count", "lock_id", "DW", "N", "cols", "mask", "partial"}
    hoisted, out = locks.invariants(region, before, lambda: next(names))
    assert [ast.unparse(h) for h in hoisted] == ["t0 = Count + lock_id", "t1 = DW + lock_id * N + cols"]
    body = ast.unparse(ast.Module(out, []))
    assert "tl.load(t0)" in body and body.count("t1") == 2           # each computed once, read twice
    assert "count + 1" in body and "partial +=" in body              # what the region rebinds stays in it
    assert ast.unparse(region[0]) == ast.unparse(out[0])            # the spin loop is left as it is


@mt.jit
def owner_waits_for_peers(x_ptr, scratch, flags, out, PEERS: tl.constexpr, N: tl.constexpr):
    pid = tl.program_id(0)
    tile = pid // PEERS
    offs = tl.arange(0, N)
    v = tl.load(x_ptr + pid * N + offs)
    if pid % PEERS == 0:               # the owner waits for each later peer's flag, as stream-K's fix-up does
        acc = v
        for peer in range(1, PEERS):
            while tl.atomic_cas(flags + tile * PEERS + peer, 1, 1) != 1:
                pass
            acc += tl.load(scratch + (tile * PEERS + peer) * N + offs, volatile=True)
        tl.store(out + tile * N + offs, acc)
    else:
        tl.store(scratch + pid * N + offs, v)
        tl.atomic_xchg(flags + pid, 1)


@pytest.mark.parametrize("tiles, peers", [(4, 3), (25, 2)])
def test_a_program_waiting_for_a_later_one_ends_as_on_a_gpu(tiles, peers):
    """Lockstep runs the owners' branch first and one program at a time runs them in order, so
    an owner waiting for a later peer would spin forever; each program in a thread that hands
    over while it waits (cooperative.py) lets the peers run, as a GPU's concurrent programs do."""
    x = np.random.default_rng(tiles).standard_normal((tiles * peers, 32)).astype(np.float32)
    out = np.zeros((tiles, 32), np.float32)
    owner_waits_for_peers[(tiles * peers,)](x, np.zeros_like(x), np.zeros(tiles * peers, np.int32), out,
                                            PEERS=peers, N=32)
    want = x.reshape(tiles, peers, 32)
    total = want[:, 0].copy()
    for p in range(1, peers):
        total += want[:, p]                         # the owner adds its peers in order
    np.testing.assert_array_equal(out, total)
    assert "each in a thread that hands over while it waits" in owner_waits_for_peers.last_launch["path"]


def test_a_kernel_whose_programs_wait_for_each_other_can_be_tuned(tmp_path):
    """HypoGPU times a config by tracing its launch; the trace runs the waiting programs the same
    way (every program, each handing over while it waits), so the configs run and one is chosen."""
    from autotune import Config, autotune
    tuned = autotune(configs=[Config({}, num_warps=4), Config({}, num_warps=8)], key=["N"],
                     cache_dir=tmp_path)(owner_waits_for_peers)
    x = np.random.default_rng(0).standard_normal((12, 32)).astype(np.float32)
    out = np.zeros((4, 32), np.float32)
    tuned[(12,)](x, np.zeros_like(x), np.zeros(12, np.int32), out, PEERS=3, N=32)
    want = x.reshape(4, 3, 32)
    np.testing.assert_array_equal(out, want[:, 0] + want[:, 1] + want[:, 2])
    assert tuned.best_config in (Config({}, num_warps=4), Config({}, num_warps=8))
    assert all(r.ok for r in tuned.last_tuning.history)
