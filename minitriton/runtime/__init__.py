"""Triton's `triton.runtime` names, for code written against them: the launch's (`JITFunction`,
`reinterpret`, the errors, `driver`: the device as HypoGPU models it) from minitriton, and the tuner's (`Autotuner` with Triton's
constructor, `Heuristics`, `autotune`, `heuristics`) from the autotune package, loaded on first
use by this module's `__getattr__`, as minitriton's own package does."""
import importlib

from ..configs import Config
from ..errors import InterpreterError
from ..hypogpu import OutOfResources
from ..host import reinterpret
from ..addresses import TensorWrapper
from ..interface import KernelInterface
from ..jit import JITFunction
from . import errors, jit       # the modules, as in Triton (`triton.runtime.jit.TensorWrapper`)
from .driver import driver

_TUNER_NAMES = {"Autotuner": "RuntimeAutotuner", "Heuristics": "Heuristics", "autotune": "autotune",
                "heuristics": "heuristics"}

__all__ = ["Config", "InterpreterError", "OutOfResources", "JITFunction", "KernelInterface", "reinterpret", "TensorWrapper", "driver",
           *_TUNER_NAMES]


def __getattr__(name):
    if name == "autotuner":     # the module (`triton.runtime.autotuner.Autotuner`), as Triton's package loads it
        return importlib.import_module(f".{name}", __name__)
    if name in _TUNER_NAMES:
        import autotune as _autotune   # the upward alias, on first use (setup.cfg's contracts ignore it)
        return getattr(_autotune, _TUNER_NAMES[name])
    raise AttributeError(f"module 'minitriton.runtime' has no attribute {name!r}")
