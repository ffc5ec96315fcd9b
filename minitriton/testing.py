"""One-call numerical checks for kernels run under several configs.

A config changes how a kernel computes (tiling, summation order), never what it computes
(lecture §2.1).  So every config's output must (1) match a float64 reference to within the
output dtype's rounding plus the fp32 accumulation error, and (2) agree with every other
config to within `ulps` units in the last place, except where fp32 summation order dominates
(near zero), which `abs_tol` bounds.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np

FP32_UNIT_ROUNDOFF = 2.0 ** -24


def accumulation_bound(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise bound on fp32 summation error of a @ b: K · 2⁻²⁴ · Σ_k |a_ik| |b_kj|.

    The classic bound for recursive summation of K terms in a precision with unit roundoff u
    is γ_K·Σ|terms| ≈ K·u·Σ|terms|; it holds for any summation order, so it covers every
    BLOCK_K and SPLIT_K.
    """
    K = a.shape[-1]
    return K * FP32_UNIT_ROUNDOFF * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))


def _spacing(x: np.ndarray, dtype) -> np.ndarray:
    """One ulp of |x| in `dtype` (the output precision), as float64."""
    return np.spacing(np.abs(np.asarray(x, np.float64)).astype(dtype)).astype(np.float64)


@dataclasses.dataclass
class ConfigCheck:
    configs: list
    max_abs_error: list          # per config, against the reference (None without one)
    max_ulps_apart: float        # worst disagreement with the first config, in output ulps
    outputs: list

    def table(self) -> str:
        rows = ["| config | max abs error vs float64 |", "|---|---|"]
        for cfg, err in zip(self.configs, self.max_abs_error):
            rows.append(f"| {cfg} | {'-' if err is None else f'{err:.3g}'} |")
        return "\n".join(rows)


def check_configs(run: Callable, configs: Sequence, reference: np.ndarray | None = None, *,
                  abs_tol=0.0, ulps: float = 1.0) -> ConfigCheck:
    """Run `run(config)` for every config and assert the outputs are numerically equivalent.

    `reference`: float64 exact-ish result; `abs_tol`: elementwise accumulation bound (e.g.
    `accumulation_bound(a, b)`); `ulps`: allowed disagreement between configs in units of the
    output dtype.  Raises AssertionError naming the first offending config and element.
    """
    configs = list(configs)
    if not configs:
        raise ValueError("check_configs: 'configs' is empty")
    outputs, errors = [], []
    abs_tol = np.asarray(abs_tol, np.float64)
    for cfg in configs:
        out = np.asarray(run(cfg))
        outputs.append(out)
        if reference is not None:
            if out.shape != reference.shape:
                raise AssertionError(f"config {cfg}: output shape {out.shape} != reference shape {reference.shape}")
            o64 = out.astype(np.float64)
            err = np.abs(o64 - reference)
            allowed = abs_tol + 0.5 * np.maximum(_spacing(o64, out.dtype), _spacing(reference, out.dtype))
            _assert_within(err, allowed, f"config {cfg} vs float64 reference", o64, reference)
            errors.append(float(err.max()) if err.size else 0.0)
        else:
            errors.append(None)
    first = outputs[0].astype(np.float64)
    worst = 0.0
    for cfg, out in zip(configs[1:], outputs[1:]):
        o64 = out.astype(np.float64)
        unit = np.maximum(_spacing(o64, out.dtype), _spacing(first, out.dtype))
        diff = np.abs(o64 - first)
        _assert_within(diff, ulps * unit + 2 * abs_tol, f"config {cfg} vs config {configs[0]}", o64, first)
        if diff.size:
            worst = max(worst, float(np.max(np.where(diff > 2 * abs_tol, diff / unit, 0.0))))
    return ConfigCheck(configs, errors, worst, outputs)


def _assert_within(err, allowed, what, got, want):
    bad = ~(err <= allowed)
    if bad.any():
        idx = np.unravel_index(int(np.argmax(bad)), err.shape)
        raise AssertionError(f"{what}: {int(bad.sum())} element(s) out of tolerance; first at {idx}: "
                             f"got {got[idx]!r}, expected {want[idx]!r} (|diff| {err[idx]:.3g} > allowed {allowed[idx]:.3g})")
