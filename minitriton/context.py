"""The state of the launch being executed: which programs run, and the buffers they touch."""
from __future__ import annotations

import threading

import numpy as np

_local = threading.local()


class LaunchState:
    """Programs `pids` (rows x 3) of kernel `name` running in lockstep over `grid`."""

    def __init__(self, name, grid, pids: np.ndarray, buffers):
        self.name, self.grid, self.pids, self.buffers = name, grid, pids, buffers
        self.rows = pids.shape[0]
        self._pid_tensors = {}
        self.counts = None  # counting.Counts while tracing
        self.active = None  # bool (rows,): the programs taking the current branch or loop trip (None: all)
        self.contexts = []  # control.Frame/Branch/Loop entered and not yet left, innermost last
        self.writes = 0     # stores and changing atomics so far (a loop that sees none may spin)
        self.space = None   # addresses.AddressSpace: arrays reachable through int64 addresses
        self.narrowed = 0   # loops narrowed to the few programs still running them (control.Loop)
        self.fused = 0      # loop trips run as one step (fusion.py)

    def program_ids(self, axis) -> np.ndarray:
        """Each program's id along `axis` (one entry if they all share it)."""
        if axis not in (0, 1, 2):
            raise ValueError(f"program_id axis must be 0, 1 or 2, got {axis!r}")
        c = self._pid_tensors.get(axis)
        if c is None:
            c = self.pids[:, axis].astype(np.int64)
            if self.rows > 1 and (c == c[0]).all():
                c = c[:1]
            self._pid_tensors[axis] = c
        return c

    def pid_tuple(self, row):
        return tuple(int(x) for x in self.pids[min(row, self.rows - 1)])


def current() -> LaunchState:
    st = getattr(_local, "state", None)
    if st is None:
        raise RuntimeError("minitriton language functions can only be called inside a kernel launch "
                           "(kernel[grid](...))")
    return st


def active() -> bool:
    return getattr(_local, "state", None) is not None


class running:
    def __init__(self, state):
        self.state = state

    def __enter__(self):
        self.prev = getattr(_local, "state", None)
        _local.state = self.state
        return self.state

    def __exit__(self, *exc):
        _local.state = self.prev
