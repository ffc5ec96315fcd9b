"""The exceptions a kernel's launch raises, as Triton names them.

Triton reports a kernel that cannot be built as `CompilationError` and, in its interpreter
(the mode minitriton mirrors), an error raised while a kernel runs as `InterpreterError`; both
are `TritonError`, which is what code written for Triton catches.  Here an error raised inside
a kernel keeps its own type as well (a bad axis is still a ValueError, an out-of-bounds access
still an IndexError), so callers that catch either kind see it: the launch re-raises it as a
class derived from both, with the same message, the original as its cause.
"""
from __future__ import annotations

import functools


class TritonError(Exception):
    """What Triton's errors derive from."""


class CompilationError(TritonError):
    """A kernel that Triton would refuse to compile (a type or shape error in its body)."""
    error_message = None    # Triton's message of its own, beside the cause's (here: the cause)


class InterpreterError(TritonError):
    """An error raised while a kernel runs."""


@functools.lru_cache(maxsize=None)
def _both(kind: type) -> type:
    return type(kind.__name__, (CompilationError, InterpreterError, kind),
                {"__module__": kind.__module__, "__doc__": kind.__doc__})


def as_triton_error(error: Exception) -> Exception:
    """`error` as a TritonError that still is an instance of its own class (see above)."""
    if isinstance(error, TritonError):
        return error
    try:
        kind = _both(type(error))
        out = kind.__new__(kind)
    except TypeError:           # a class that cannot be combined (a builtin layout conflict)
        return error
    out.args = error.args
    out.__dict__.update(getattr(error, "__dict__", {}))    # its attributes, and its notes
    if "__notes__" in out.__dict__:
        out.__notes__ = list(out.__notes__)
    out.__traceback__ = error.__traceback__
    return out


class LaunchOptionError(ValueError, AssertionError):
    """A bad launch option (`num_warps=3`): Triton refuses it with an assert, so code written for
    Triton catches an AssertionError; it is a bad value, so ours may catch a ValueError."""
