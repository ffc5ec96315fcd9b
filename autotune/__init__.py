"""Auto-tuning for minitriton kernels on HypoGPU: `@autotune`, `tune`, tuners, spaces, cache and records."""
from .space import Config, Space, as_config
from .task import Task
from .driver import tune, TuneResult, NoValidConfig, Tuning
from .network import tune_network, NetworkResult, WeightedSum, LatencyRequirement, GeomeanSpeedup
from .autotuner import autotune, Autotuner
from .heuristics import heuristics, Heuristics
from .runtime_api import RuntimeAutotuner
from .records import Record, RecordLog
from . import te
from . import codegen  # noqa: F401 (gives te its `generate`)

__all__ = ["Config", "Space", "as_config", "Task", "tune", "TuneResult", "NoValidConfig", "Tuning",
           "tune_network", "NetworkResult", "WeightedSum", "LatencyRequirement", "GeomeanSpeedup", "autotune", "heuristics",
           "Autotuner", "Heuristics", "Record", "RecordLog", "te"]
