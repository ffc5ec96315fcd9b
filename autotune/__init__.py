"""Auto-tuning for minitriton kernels: configs and spaces (the decorator and tuners build on these)."""
from .space import Config, Space, as_config
from .task import Task

__all__ = ["Config", "Space", "as_config", "Task"]
