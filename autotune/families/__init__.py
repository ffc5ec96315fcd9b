"""What the library's kernel families share with the operators `te` generates: each family's
search space, default config and launch-profile formula (the numbers HypoGPU times a launch by),
and the jitted helpers both write their kernels with.  Below `kernels/` and `autotune/codegen`,
so neither reaches into the other."""
