"""minitriton: a Triton-compatible block language executed on the CPU.  `__version__` is the Triton
release it answers for (compat.TRITON_VERSION), as code written for Triton reads it; the
project's own version is its package's (`importlib.metadata.version("minitriton")`)."""
import importlib

from .jit import jit, JITFunction, one_program_at_a_time
from .host import cdiv, next_power_of_2, reinterpret, set_allocator
from .interface import KernelInterface
from .memory import OutOfBoundsError
from .errors import TritonError, CompilationError, InterpreterError
from .addresses import data_ptr, TensorWrapper
from . import language, compiler, knobs, tools, backends
from .compat import TRITON_VERSION as __version__
from .compiler import compile
from .configs import Config
from .aggregates import aggregate, constexpr_function
from .hypogpu import OutOfResources

__all__ = ["jit", "JITFunction", "KernelInterface", "TensorWrapper", "cdiv", "next_power_of_2", "one_program_at_a_time", "reinterpret", "set_allocator", "OutOfBoundsError", "TritonError", "CompilationError", "InterpreterError", "data_ptr", "language", "compiler", "compile", "tools", "backends", "Config", "aggregate", "constexpr_function", "OutOfResources", "knobs"]


def __getattr__(name):
    # Triton's names for the tuner (`triton.autotune`, `triton.heuristics`), so ported code runs;
    # loaded on first use, since the autotune package builds on this one
    if name in ("autotune", "heuristics"):
        import autotune as _autotune   # the upward alias (setup.cfg's contracts ignore it)
        return getattr(_autotune, name)
    if name in ("testing", "runtime"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'minitriton' has no attribute {name!r}")
