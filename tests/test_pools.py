"""Measuring pools: the same seed gives the same records whatever the pool; a dead worker's
configs are measured again; a pool that cannot start falls back; simulated devices."""
import os

import numpy as np
import pytest

import kernels
import minitriton as mt
import minitriton.language as tl
from autotune import Task, Space, tune, tune_network
from autotune.pools import makespan, make_pool, InProcess, LocalProcesses


@mt.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


SPACE = Space(BLOCK=[32, 64, 128, 256, 512, 1024], num_warps=[1, 2, 4, 8], num_stages=[1])


def traced_task(n=5000):
    x, y = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)

    def launch(cfg):
        scale[(mt.cdiv(n, cfg.kwargs["BLOCK"]),)](x, y, n, **cfg.all_kwargs())
    return Task(scale, space=SPACE, launch=launch, name=f"scale(n={n})")


def records(result):
    return [(r.config, r.samples, r.error, r.cost) for r in result.history]


def test_local_processes_give_the_records_of_in_process_measuring():
    one = tune(traced_task(), "random", budget=20, seed=4, parallel=1, progress=False)
    two = tune(traced_task(), "random", budget=20, seed=4, parallel=2, progress=False)
    assert records(one) == records(two)
    assert one.best_config == two.best_config


def test_traced_kernels_default_to_local_processes_when_cores_are_free():
    pool = make_pool(None, traced_task().device, traced_task())
    try:
        if len(os.sched_getaffinity(0)) > 1:
            assert isinstance(pool, LocalProcesses) and pool.n >= 2
        else:
            assert isinstance(pool, InProcess)
    finally:
        pool.close()
    stated = Task(kernels.matmul, M=512, N=512, K=512)
    assert isinstance(make_pool(None, stated.device, stated), InProcess)


class _Dying:
    """A stated kernel whose profile kills the worker process computing it, once."""
    __name__ = "dying_matmul"

    def __init__(self, flag, parent):
        self.flag, self.parent = flag, parent
        self.space, self.shape_keys = kernels.matmul.space, kernels.matmul.shape_keys

    def launch_profile(self, shape, cfg):
        if os.getpid() != self.parent and not os.path.exists(self.flag):
            open(self.flag, "w").close()
            os._exit(1)                  # the worker dies mid-measurement
        return kernels.matmul.launch_profile(shape, cfg)


def test_a_killed_worker_has_its_configs_measured_again(tmp_path):
    shape = dict(M=512, N=512, K=512)
    calm = tune(Task(kernels.matmul, **shape), "random", budget=32, seed=2, parallel=1, progress=False)
    dying = Task(_Dying(str(tmp_path / "died"), os.getpid()), **shape)
    dying.name = calm.history[0].kernel
    recovered = tune(dying, "random", budget=32, seed=2, parallel=2, progress=False)
    assert (tmp_path / "died").exists()                   # a worker did die
    assert records(recovered) == records(calm)            # nothing lost, nothing counted twice


def test_a_pool_that_cannot_start_warns_and_measures_in_process(monkeypatch):
    import multiprocessing

    def broken(method=None):
        raise OSError("no processes here")
    monkeypatch.setattr(multiprocessing, "get_context", broken)
    with pytest.warns(RuntimeWarning, match="could not start.*no processes here"):
        fell_back = tune(traced_task(), "random", budget=8, seed=1, parallel=2, progress=False)
    monkeypatch.undo()
    assert records(fell_back) == records(tune(traced_task(), "random", budget=8, seed=1, parallel=1,
                                              progress=False))
    with pytest.raises(ValueError, match="parallel"):
        tune(traced_task(), "random", budget=2, parallel=0, progress=False)
    with pytest.raises(ValueError, match="devices"):
        tune(traced_task(), "random", budget=2, devices=0, progress=False)


def test_simulated_devices_share_each_batch():
    assert makespan([1.0, 2.0, 3.0], 1) == 6.0
    assert makespan([1.0, 2.0, 3.0, 4.0], 2) == 6.0        # each to the device free first: 1+3 and 2+4
    task = Task(kernels.matmul, M=512, N=512, K=512)
    times = {d: tune(task, "random", budget=64, seed=0, devices=d, progress=False) for d in (1, 4, 16)}
    assert records(times[1]) == records(times[4]) == records(times[16])   # only the clock differs
    one = times[1].simulated_seconds
    assert 3.5 < one / times[4].simulated_seconds <= 4.0 + 1e-9
    assert 12.0 < one / times[16].simulated_seconds <= 16.0 + 1e-9


def test_tune_network_measures_through_the_pool():
    tasks = [(traced_task(3000), 1), (traced_task(9000), 2)]
    a = tune_network(tasks, "random", units=4, unit_size=4, seed=0, parallel=1, cache=False, progress=False)
    b = tune_network(tasks, "random", units=4, unit_size=4, seed=0, parallel=2, cache=False, progress=False)
    assert a.configs == b.configs and a.units == b.units and a.times == b.times


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_a_local_ray_cluster_gives_the_same_records(ray_cluster):
    local = tune(traced_task(), "random", budget=12, seed=5, parallel=1, progress=False)
    on_ray = tune(traced_task(), "random", budget=12, seed=5, parallel="ray", progress=False)
    assert records(on_ray) == records(local)
    assert ray_cluster.cluster_resources().get("CPU") == 2


def test_a_ray_worker_that_dies_is_replaced_and_nothing_is_counted_twice(ray_cluster, tmp_path):
    shape = dict(M=512, N=512, K=512)
    calm = tune(Task(kernels.matmul, **shape), "random", budget=16, seed=6, parallel=1, progress=False)
    dying = Task(_Dying(str(tmp_path / "died"), os.getpid()), **shape)
    dying.name = calm.history[0].kernel
    recovered = tune(dying, "random", budget=16, seed=6, parallel="ray", progress=False)
    assert (tmp_path / "died").exists()
    assert records(recovered) == records(calm)


ORPHAN_SCRIPT = '''
import os, sys, time
from autotune.pools import LocalProcesses
pool = LocalProcesses(2, None, None)
pool.pool.submit(time.sleep, 0).result()          # the workers are up
print(os.getpid(), flush=True)
time.sleep(600)
'''


def test_workers_die_with_a_tuning_killed_by_sigkill(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    proc = subprocess.Popen([sys.executable, "-c", ORPHAN_SCRIPT], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.dirname(__file__)))
    pid = int(proc.stdout.readline())
    children = [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    assert children, "the pool's workers should be running"
    os.kill(pid, signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    alive = children
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        alive = [c for c in alive if os.path.exists(f"/proc/{c}") and
                 open(f"/proc/{c}/stat").read().split(")")[-1].split()[0] != "Z"]
    assert not alive, f"workers {alive} outlived the tuning that was killed"


def test_settling_the_choice_shares_its_re_timings_over_the_devices():
    """The re-timings that settle a choice are spread over the simulated devices like the
    search's batches: the same choice, for a fraction of the simulated time."""
    task = Task(kernels.matmul, M=1024, N=2048, K=1024)
    one = tune(task, "ansor", budget=96, seed=0, batch_size=32, progress=False)    # (the same batches as 4 devices)
    four = tune(task, "ansor", budget=96, seed=0, batch_size=32, devices=4, progress=False)
    assert one.best_config == four.best_config and one.remeasured["contenders"] > 4
    assert four.remeasured["seconds"] <= 0.5 * one.remeasured["seconds"]
