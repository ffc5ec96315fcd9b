"""One script per experiment; each prints a markdown table (and can refresh its copy in docs/benchmarks.md)."""
