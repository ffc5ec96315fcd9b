"""`python -m benchmarks [--quick] [--update-readme]`: run every benchmark in turn."""
import sys

from benchmarks import (executor, tutorials, landscape, profiles, dispatch, config_list, cross_shape, dynamic_m, network, parallel,
                        search_curves, transfer, cost_model, sketches, ansor_compare,
                        ansor_ablation, generated, leaderboard,
                        cross_gpu, restricted, held_out)

for module in (executor, tutorials, landscape, profiles, dispatch, config_list, cross_shape, dynamic_m, search_curves,
               transfer, cost_model, sketches, ansor_compare, ansor_ablation,
               generated, leaderboard, cross_gpu, restricted, held_out, network, parallel):
    print(f"\n## {module.__name__}\n")
    module.main(sys.argv[1:])
