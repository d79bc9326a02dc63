#!/usr/bin/env python3
"""Export every corpus entry (with its example inputs) to OUTDIR/<name>.pb.

    PYTHONPATH=python /usr/bin/python3 python/tools/make_testdata.py testdata/models
    PYTHONPATH=python scripts/torch.sh 2.14 -- python3 python/tools/make_testdata.py testdata/models-torch2.14

Deterministic: running it twice gives byte-identical files.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch

import corpus  # noqa: E402
import hopctl_torch  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("names", nargs="*", help="corpus entries (default: all)")
    args = ap.parse_args(argv)
    names = args.names or corpus.NAMES
    for name, why in sorted(corpus.UNAVAILABLE.items()):
        print("%-16s skipped: %s" % (name, why))
    unknown = [n for n in names if n not in corpus.BUILDERS]
    if unknown:
        ap.error("unknown corpus entries: %s (have: %s)" % (", ".join(unknown), ", ".join(corpus.NAMES)))
    os.makedirs(args.outdir, exist_ok=True)
    for name in names:
        t0 = time.time()
        gm, inputs = corpus.trace(name)
        path = os.path.join(args.outdir, name + ".pb")
        hopctl_torch.export(gm, path, example_inputs=inputs)
        n_nodes = len(gm.graph.nodes)
        print("%-16s %5d nodes %8d bytes  %.2fs  %s"
              % (name, n_nodes, os.path.getsize(path), time.time() - t0, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
