"""`triton.runtime.autotuner`: where code written for Triton imports the tuner's classes from
(`from triton.runtime.autotuner import Autotuner, Config, Heuristics`).  Config is minitriton's;
the others are the autotune package's, loaded on first use as `minitriton.runtime` loads them."""
from ..configs import Config
from . import __getattr__ as _tuner_name

__all__ = ["Autotuner", "Config", "Heuristics", "autotune", "heuristics"]


def __getattr__(name):
    return _tuner_name(name)
