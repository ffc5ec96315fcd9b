"""`python -m autotune`: the tuning cache, numerical checks, and the demo.

  list                 tuned entries in the cache
  show KEY             one entry (a key prefix is enough)
  export [-o FILE]     every entry as JSON
  clear [KEY]          remove one entry (by prefix) or all of them, with the records log
  verify KERNEL        run a library kernel under several configs and check they agree
  demo                 tune the library matmul on the lecture's shapes and check its numbers
"""
from __future__ import annotations

import argparse
import json
import sys


from .cache import TuningCache


def _entries(cache, prefix):
    found = cache.find(prefix)
    if not found:
        raise SystemExit(f"no cache entry with key starting {prefix!r} in {cache.dir}")
    return found


def cmd_list(args):
    cache = TuningCache(args.cache_dir)
    rows = cache.entries()
    print(f"{len(rows)} tuned entries in {cache.dir}")
    for e in rows:
        c = e["config"]
        print(f"{e['key'][:12]}  {e['kernel']}{e['args']}  {e['settings']['tuner']}  {e['measured']} measured  "
              f"{e['time'] * 1e6:.1f} µs  {c['kwargs']} warps={c['num_warps']} stages={c['num_stages']}")


def cmd_show(args):
    for e in _entries(TuningCache(args.cache_dir), args.key):
        print(json.dumps(e, indent=2, sort_keys=True, default=str))


def cmd_export(args):
    data = json.dumps(TuningCache(args.cache_dir).entries(), indent=2, sort_keys=True, default=str)
    if args.output:
        with open(args.output, "w") as f:
            f.write(data + "\n")
    else:
        print(data)


def cmd_clear(args):
    cache = TuningCache(args.cache_dir)
    if args.key:
        n = sum(cache.delete(e["key"]) for e in _entries(cache, args.key))
    else:
        n = cache.clear(records=args.records)
    print(f"removed {n} entries from {cache.dir}")


def _shape(text):
    try:
        return {k: int(v) for k, v in (part.split("=") for part in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape must look like M=200,N=300,K=100, got {text!r}") from None


def cmd_verify(args):
    from . import verify
    print(verify.run(args.kernel, args.shape, args.configs, args.seed))


def cmd_demo(args):
    from kernels import demo
    demo.main(quick=args.quick)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m autotune", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache-dir", default=None, help="cache directory (default: $MINITRITON_CACHE_DIR or ~/.cache/minitriton)")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list").set_defaults(fn=cmd_list)
    s = sub.add_parser("show")
    s.add_argument("key")
    s.set_defaults(fn=cmd_show)
    s = sub.add_parser("export")
    s.add_argument("-o", "--output")
    s.set_defaults(fn=cmd_export)
    s = sub.add_parser("clear")
    s.add_argument("key", nargs="?")
    s.add_argument("--records", action="store_true", help="also delete the measurement records (resume data)")
    s.set_defaults(fn=cmd_clear)
    s = sub.add_parser("verify")
    s.add_argument("kernel", choices=["matmul", "row_sum", "softmax"])
    s.add_argument("--shape", type=_shape, required=True)
    s.add_argument("--configs", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_verify)
    s = sub.add_parser("demo")
    s.add_argument("--quick", action="store_true")
    s.set_defaults(fn=cmd_demo)
    args = p.parse_args(argv)
    args.fn(args)


if __name__ == "__main__":
    main(sys.argv[1:])
