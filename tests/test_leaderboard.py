"""The leaderboard's scoring (benchmarks/leaderboard.py) and smoke runs of the issue-27 benchmarks
(their --quick settings), with our tuners only: the peers are an optional extra."""
import pathlib

import numpy as np
import pytest

from benchmarks import cross_gpu, held_out, leaderboard, peers


def test_random_sampling_expectation_is_exact():
    rng = np.random.default_rng(0)
    times = np.concatenate([rng.lognormal(0, 0.5, 300), np.full(40, np.inf)])   # 40 failed configs
    exact = leaderboard.random_expectation(times, 30)
    draws = np.array([np.minimum.accumulate(rng.permutation(times)[:30]) for _ in range(6000)])
    worst = np.max(times[np.isfinite(times)])
    simulated = np.where(np.isfinite(draws), draws, worst).mean(0)
    assert np.allclose(exact, simulated, rtol=0.02)   # 6,000 draws: about 1 % of Monte-Carlo noise at b = 1
    assert exact[0] == pytest.approx(np.mean(np.where(np.isfinite(times), times, worst)), rel=1e-9)
    past = leaderboard.random_expectation(times[:50], 80)     # a budget past the space draws all of it
    assert np.all(past[49:] == np.min(times[:50])) and np.all(np.diff(past) <= 1e-12)


def test_the_score_is_zero_for_random_sampling_and_one_at_the_optimum():
    times = np.random.default_rng(1).lognormal(0, 0.5, 500)
    best = times.min()
    expected = leaderboard.random_expectation(times, 50)
    assert leaderboard.score(np.ones((3, 50)), expected, best, times.max()) == pytest.approx(1.0)
    assert leaderboard.score((best / expected)[None], expected, best, times.max()) == pytest.approx(0.0, abs=1e-9)
    assert leaderboard.score(np.zeros((1, 50)), expected, best, times.max()) < 0   # found nothing: worse than random


def test_the_benchmarks_quick_runs(monkeypatch):
    monkeypatch.setattr(peers, "available", lambda: {"kernel_tuner": None, "optuna": None})
    text = leaderboard.run(quick=True)
    for tuner in leaderboard.OURS:
        assert f"| ours: {tuner} |" in text
    assert "random sampling (expected)" in text and "Goals (judged on 2 seeds; the issue asks 20):" in text
    text = cross_gpu.run(quick=True)
    assert "with / without" in text and "Goals (judged on 2 seeds; the issue asks 20):" in text
    text = held_out.run(quick=True)     # the four small held-out landscapes: the default against random
    assert text.count("random sampling (expected)") == 4 and "| ours: default |" in text and "Goals (" in text


def test_the_default_and_the_tuner_it_is_share_one_stored_run(tmp_path):
    from benchmarks.curve_store import Store
    path = str(next(pathlib.Path("datasets").glob("pnpoly_*.json.gz")))
    name = leaderboard.default_name(path)
    store = Store(tmp_path / "store")
    done = leaderboard.run_curves([(path, leaderboard.DEFAULT, 12, 0), (path, name, 12, 0)], store)
    (a, chosen_a), (b, chosen_b) = done.values()
    assert np.array_equal(a, b) and chosen_a == chosen_b and 0 < chosen_a <= 1
    stored = store.get(path, name, leaderboard.code_of(name), 12, 0)
    assert stored is not None and np.allclose(stored[0], a, rtol=1e-6)
    assert store.get(path, leaderboard.DEFAULT, leaderboard.code_of(name), 12, 0) is None   # one entry, not two


def test_the_default_is_judged_against_the_other_tuners_not_itself():
    """Where the default is one tuner on every landscape its runs are that tuner's: being 'above
    every other of ours' cannot ask it to beat itself; where it is a mix, each one counts."""
    curve = np.linspace(0.5, 1.0, 25)
    row = {"random (expected)": (100 * curve * 0.9, 0.0), leaderboard.DEFAULT: (100 * curve, 0.7),
           "bayes_tpe": (100 * curve, 0.7), "ansor": (100 * curve, 0.6), "ga": (100 * curve, 0.5)}
    table = {"a": row, "b": row}
    missed, _, _ = leaderboard.goals(table, [25], ["bayes_tpe", "ansor"], ["ga"], defaults=["bayes_tpe"])
    assert missed == []
    missed, _, _ = leaderboard.goals(table, [25], ["bayes_tpe", "ansor"], ["ga"], defaults=["ansor", "bayes_tpe"])
    assert missed == ["average score 0.700 not above bayes_tpe's 0.700"]
    row["ga"] = (100 * curve, 0.68)                                # the best peer within 0.05 of it
    missed, _, _ = leaderboard.goals(table, [25], ["bayes_tpe", "ansor"], ["ga"], defaults=["bayes_tpe"])
    assert missed == ["average score 0.700 not 0.05 above ga's 0.680"]
