"""Triton's `KernelInterface`: what every launchable kernel object is (a @jit function, the
autotuner and heuristics wrapped around one): `kernel[grid](*args, **kwargs)` calls its
`run(*args, grid=grid, **kwargs)`.  Code written for Triton subclasses it to make kernels of its
own, and checks for it."""


class KernelInterface:
    def run(self, *args, grid, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define run(*args, grid, **kwargs)")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, **kwargs)
