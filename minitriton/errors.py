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
import linecache
import re


class TritonError(Exception):
    """What Triton's errors derive from."""


class CompilationError(TritonError):
    """A kernel that Triton would refuse to compile (a type or shape error in its body)."""
    error_message = None    # Triton's message of its own, beside the cause's (here: the cause)


class InterpreterError(TritonError):
    """An error raised while a kernel runs."""


class StaticAssertionError(CompilationError, AssertionError):
    """A failed `tl.static_assert`: Triton's CompileTimeAssertionFailure, raised as it is (no cause)."""


class DeviceAssertionError(AssertionError, RuntimeError):
    """A failed `tl.device_assert` (or `assert` in a kernel under debug): an AssertionError, as
    Triton's interpreter raises, and a RuntimeError, as a GPU's runtime reports a device-side
    assert to code written for Triton."""


_NOT_ITERABLE = re.compile(r"cannot unpack non-iterable \S+ object")


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
    if isinstance(error, TypeError) and error.args and isinstance(error.args[0], str):
        # Python names the type it could not unpack; Triton's front end says "value"
        out.args = (_NOT_ITERABLE.sub("cannot unpack non-iterable value", error.args[0]),) + error.args[1:]
    out.__dict__.update(getattr(error, "__dict__", {}))    # its attributes, and its notes
    if "__notes__" in out.__dict__:
        out.__notes__ = list(out.__notes__)
    out.__traceback__ = error.__traceback__
    return out


class BlockCondition(ValueError):
    """An `if` on a block of more than one value: refused in a kernel, as Triton refuses it.
    Its own class so that a combine function, which Triton runs on scalars, can be run again
    element by element when it branches on its operands (user_reductions.py)."""


class LaunchOptionError(ValueError, AssertionError):
    """A bad launch option (`num_warps=3`): Triton refuses it with an assert, so code written for
    Triton catches an AssertionError; it is a bad value, so ours may catch a ValueError."""


def kernel_positions(tb, entries) -> list[str]:
    """Where each @jit function on a traceback was when the error passed through it, outermost
    first, as Triton's compiler says it: `at L:C:` (line 1 is the `def` line, columns counted
    from its indentation), the source line and a caret.  A frame is a @jit function's when the
    frame before it is one of `entries` ((file, function) pairs: the launch and the call from one
    @jit function to another)."""
    out, entering = [], False
    while tb is not None:
        code = tb.tb_frame.f_code
        if entering:
            place = _place(code, tb.tb_lasti)
            if place is not None:
                out.append(place)
        entering = (code.co_filename, code.co_name) in entries
        tb = tb.tb_next
    return out


def _place(code, lasti):
    """(The columns of a lowered kernel are already counted from its `def`'s indentation: it is
    parsed dedented.)"""
    positions = list(code.co_positions())
    if not 0 <= lasti // 2 < len(positions):
        return None
    line, _, col, _ = positions[lasti // 2]
    header = linecache.getline(code.co_filename, code.co_firstlineno)
    text = linecache.getline(code.co_filename, line).rstrip("\n") if line else ""
    if line is None or col is None or not header or not text:
        return None
    indent = len(header) - len(header.lstrip())
    return f"at {line - code.co_firstlineno + 1}:{col}:\n{text[indent:]}\n{' ' * col}^"


def note_positions(error: Exception, where: list[str]):
    """Notes on `error`: where it was raised in the kernel (the innermost @jit function; and the
    kernel's own line when that is another function), and, for a variable read before Python
    bound it, Triton's words for that."""
    for place in (where[-1:] if len(where) < 2 else [where[-1], where[0]]):
        error.add_note(place)
    if isinstance(error, UnboundLocalError):
        found = re.search(r"local variable '(\w+)'", str(error))
        if found:
            error.add_note(f"({found.group(1)} is not defined on this path)")
