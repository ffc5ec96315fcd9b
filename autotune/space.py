"""Configs and spaces as the tuners use them: `minitriton.configs` (where they live, below the
devices and the tuners alike) re-exported under the name the tuners and kernels import, and the
one rule the kernel library adds, for its configs."""
from __future__ import annotations

from minitriton.configs import LAUNCH_KNOBS, Config, Space, as_config  # noqa: F401 (re-exported)


def library_config(config, default: Config, who: str) -> Config:
    """A library kernel's config: `default` when none is given, else one that names exactly the
    default's meta-parameters (a partial config would silently take the rest from the default)."""
    if config is None:
        return default
    cfg = as_config(config)
    missing = [k for k in default.kwargs if k not in cfg.kwargs]
    unknown = [k for k in cfg.kwargs if k not in default.kwargs]
    if missing or unknown:
        raise ValueError(f"{who}: config must give every one of {list(default.kwargs)}"
                         + (f"; it lacks {missing}" if missing else "") + (f"; it has unknown {unknown}" if unknown else "")
                         + " (or pass config=None for the default)")
    return cfg
