"""minitriton: a Triton-compatible block language executed on the CPU."""
from .jit import jit, JITFunction, cdiv, next_power_of_2, one_program_at_a_time, reinterpret, set_allocator
from .memory import OutOfBoundsError
from .errors import TritonError, CompilationError, InterpreterError
from .addresses import data_ptr
from . import language, compiler, tools
from .compiler import compile
from .configs import Config
from .aggregates import aggregate, constexpr_function

__all__ = ["jit", "JITFunction", "cdiv", "next_power_of_2", "one_program_at_a_time", "reinterpret", "set_allocator", "OutOfBoundsError", "TritonError", "CompilationError", "InterpreterError", "data_ptr", "language", "compiler", "compile", "tools", "Config", "aggregate", "constexpr_function"]


def from_autotune(name):
    """One of the tuner's names, which Triton keeps beside its language (`triton.autotune`,
    `triton.heuristics`, `triton.runtime.Autotuner`), so that ported code runs; loaded on first
    use, since the autotune package builds on this one."""
    import autotune as _autotune   # the one upward reference, and only on first use (setup.cfg's contracts)
    return getattr(_autotune, name)


def __getattr__(name):
    if name in ("autotune", "heuristics"):
        return from_autotune(name)
    if name in ("testing", "runtime"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minitriton' has no attribute {name!r}")
