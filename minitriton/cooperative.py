"""Programs that wait for each other, run as a GPU runs them.

A kernel may make one program wait for a flag another program sets: the owner of a stream-K
tile waits for its peers' partial sums, a split-K semaphore, a decoupled look-back scan.  On a
GPU both run at once, so the wait ends.  Lockstep runs one branch's programs before another's,
and one program at a time runs them in program order, so a program waiting for a later one
spins forever (control.Loop notices it: Stalled).

Here each program runs in a thread of its own, and only one thread runs at any moment (the
others wait for their turn), so the executor's state needs no locks and every run takes the
same schedule.  Programs start in program order; a program whose loop makes no progress hands
over to the next one and gets its turn again after the others.  A full round in which every
program still running only waited, and none wrote or ended, is a deadlock, reported as one.
"""
from __future__ import annotations

import collections
import threading

from . import context


class Deadlock(RuntimeError):
    """Every program still running waits for another, and none can go on: on a GPU the launch
    would never end (a lock never released, a flag never set)."""


class _Abort(BaseException):
    """Unwinds a waiting program's thread when the launch ends without it (an error elsewhere)."""


def run(run_program, n: int, kernel: str = "") -> list:
    """Run programs 0..n-1 of `kernel`, `run_program(i)` running program i to its end in the
    calling thread; returns their results in program order."""
    launcher = context.LOCAL.__dict__
    turn = collections.defaultdict(threading.Event)     # made as programs start: a grid may be large
    back = threading.Event()
    results, errors, done, writes, lines = [None] * n, [None] * n, [False] * n, [0] * n, [None] * n
    progress = [0]      # writes seen at a hand-over, and programs ended: kept as they happen
    abort = False

    def wait(i, line):
        lines[i], now = line, context.current().writes
        if now != writes[i]:
            writes[i] = now
            progress[0] += 1
        turn[i].clear()
        back.set()
        turn[i].wait()
        if abort:
            raise _Abort()

    def thread(i):
        context.LOCAL.deadline = launcher.get("deadline")   # the launch's limit, and its debug mode
        context.LOCAL.debug = launcher.get("debug", False)
        context.LOCAL.on_stall = lambda line: wait(i, line)
        turn[i].wait()
        try:
            if not abort:
                results[i] = run_program(i)
        except _Abort:
            pass
        except BaseException as e:     # handed to the launching thread
            errors[i] = e
        done[i] = True
        progress[0] += 1
        back.set()

    threads = {}
    queue = collections.deque(range(n))
    quiet, last = 0, 0
    try:
        while queue:
            i = queue.popleft()
            if i not in threads:
                threads[i] = threading.Thread(target=thread, args=(i,), daemon=True, name=f"program {i}")
                threads[i].start()
            back.clear()
            turn[i].set()
            back.wait()
            if errors[i] is not None:
                raise errors[i]
            if progress[0] != last:
                quiet, last = 0, progress[0]
            else:
                quiet += 1
            if not done[i]:
                queue.append(i)
                if quiet > len(queue):
                    waiting = sorted(queue)
                    loops = sorted({lines[j] for j in waiting if lines[j] is not None})
                    where = f"the loop at line {loops[0]}" if len(loops) == 1 else f"the loops at lines {loops}"
                    raise Deadlock(f"kernel '{kernel}': programs {waiting[:8]}{' ...' if len(waiting) > 8 else ''} "
                                   f"({len(waiting)} of {n}) are in {where}, whose trips repeat with the same values "
                                   f"while no program writes or ends: a loop that would never end on a GPU (a lock "
                                   f"never released, a flag never set, a condition nothing changes)")
    finally:
        abort = True
        for i, t in threads.items():
            if not done[i]:
                turn[i].set()
                t.join()
    return results
