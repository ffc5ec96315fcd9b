"""HypoGPU: a simulated A100-class GPU that times minitriton launches.

`HypoGPU` holds the spec and the performance model; `Measurer` is how tuners see it (noise,
simulated compile and run time); `oracle` gives exact times for tests and benchmarks only.
"""
from .spec import Spec, A100
from .profile import Profile
from .device import HypoGPU, OutOfResources
from .measure import Measurer, Measurement
from .oracle import oracle, OracleResult

__all__ = ["Spec", "A100", "Profile", "HypoGPU", "OutOfResources", "Measurer", "Measurement", "oracle",
           "OracleResult"]
