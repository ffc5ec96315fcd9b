"""`python -m benchmarks [--quick] [--update-readme]`: run every benchmark in turn."""
import sys

from benchmarks import executor, landscape, profiles

for module in (executor, landscape, profiles):
    print(f"\n## {module.__name__}\n")
    module.main(sys.argv[1:])
