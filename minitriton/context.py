"""The state of the launch being executed: which programs run, and the buffers they touch."""
from __future__ import annotations

import os
import threading
import time

import numpy as np

# The one piece of launch state, per thread: `.state` is the running LaunchState (None between
# launches), `.deadline` the launch timeout.  Hot paths read `LOCAL.__dict__.get("state")`
# directly rather than through current(): it is a dict lookup instead of a call.
LOCAL = threading.local()


class LaunchState:
    """Programs `pids` (rows x 3) of kernel `name` running in lockstep over `grid`."""

    def __init__(self, name, grid, pids: np.ndarray, buffers, num_warps=4):
        self.name, self.grid, self.pids, self.buffers = name, grid, pids, buffers
        self.num_warps = num_warps  # the launch option (tl.extra.cuda.num_warps/num_threads read it)
        self.rows = pids.shape[0]
        self._pid_tensors = {}
        self.counts = None  # counting.Counts while tracing
        self.active = None  # bool (rows,): the programs taking the current branch or loop trip (None: all)
        self.contexts = []  # control.Frame/Branch/Loop entered and not yet left, innermost last
        self.writes = 0     # stores and changing atomics so far (a loop that sees none may spin)
        self.space = None   # addresses.AddressSpace: arrays reachable through int64 addresses
        self.narrowed = 0   # loops narrowed to the few programs still running them (control.Loop)
        self.fused = 0      # loop trips run as one step (fusion.py)
        self.laned = 0      # loops whose trips ran side by side as rows (lanes.py)
        self.rounds = 0     # critical sections run a round of programs at a time (locks.py)

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
    st = getattr(LOCAL, "state", None)
    if st is None:
        raise RuntimeError("minitriton language functions can only be called inside a kernel launch "
                           "(kernel[grid](...))")
    return st


def active() -> bool:
    return getattr(LOCAL, "state", None) is not None


class debugging:
    """The launch runs in Triton's debug mode (`debug=True`, `@jit(debug=True)`, TRITON_DEBUG):
    integer arithmetic is checked for overflow (arithmetic.py), as Triton's sanitizer does."""

    def __init__(self, on: bool):
        self.on = bool(on)

    def __enter__(self):
        self.prev = LOCAL.__dict__.get("debug", False)
        LOCAL.debug = self.on

    def __exit__(self, *exc):
        LOCAL.debug = self.prev


class running:
    def __init__(self, state):
        self.state = state

    def __enter__(self):
        self.prev = getattr(LOCAL, "state", None)
        LOCAL.state = self.state
        return self.state

    def __exit__(self, *exc):
        LOCAL.state = self.prev


# -- a launch's deadline: a loop that never ends stops with an error instead of hanging --------------
LAUNCH_TIMEOUT_VARIABLE = "MINITRITON_LAUNCH_TIMEOUT"
DEFAULT_LAUNCH_SECONDS = 600.0


class LaunchTimeout(RuntimeError):
    """A launch ran past its wall-time limit inside a loop."""

    def __init__(self, kernel, line):
        where = f"the loop at line {line}" if line else "a loop"
        super().__init__(f"kernel '{kernel}': {where} was still running after {launch_seconds():g} s, the launch's "
                         f"limit: a loop whose end never comes? (${LAUNCH_TIMEOUT_VARIABLE} sets the limit in seconds; "
                         f"0 for none)")


def launch_seconds() -> float:
    """The wall-time limit of one launch on the CPU: $MINITRITON_LAUNCH_TIMEOUT seconds (0: none)."""
    text = os.environ.get(LAUNCH_TIMEOUT_VARIABLE)
    if text is None:
        return DEFAULT_LAUNCH_SECONDS
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"${LAUNCH_TIMEOUT_VARIABLE} must be a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise ValueError(f"${LAUNCH_TIMEOUT_VARIABLE} must be >= 0 seconds, got {text!r}")
    return value


def start_deadline():
    """Called as a launch starts (jit): its deadline, kept for the loops it runs."""
    limit = launch_seconds()
    LOCAL.deadline = time.monotonic() + limit if limit > 0 else None


def deadline():
    return LOCAL.__dict__.get("deadline")
