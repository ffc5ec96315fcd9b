"""`triton.runtime.autotuner`: where code written for Triton imports the tuner's classes from
(`from triton.runtime.autotuner import Autotuner, Config, Heuristics`, and the OutOfResources it
catches).  Config and the error are minitriton's; the others are the autotune package's, loaded
on first use as `minitriton.runtime` loads them."""
from ..configs import Config
from .errors import OutOfResources
from . import __getattr__ as _tuner_name

__all__ = ["Autotuner", "Config", "Heuristics", "OutOfResources", "autotune", "heuristics"]


def __getattr__(name):
    if name not in __all__:
        raise AttributeError(f"module 'minitriton.runtime.autotuner' has no attribute {name!r}")
    return _tuner_name(name)
