#!/usr/bin/env python3
"""Dynamo-level graphs of the real-trace HOP corpus (testdata/hops_real/dynamo).

Dynamo writes HOP subgraphs with torch-level targets (torch.sin,
operator.mul); torch makes some HOP checks on their ATen re-trace, which
hopctl does not have. These near misses pin that hopctl does not refuse
what Dynamo accepted:

* assoc_pointwise.pb: associative_scan with a pointwise combine_fn, the graph
  Dynamo hands its backend (hopctl_torch.dump_backend, aot=False).

    scripts/torch.sh 2.14 -- env PYTHONPATH=python python3 python/tools/hop_corpus_dynamo.py testdata/hops_real/dynamo
"""

import os
import shutil
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/, for hopctl_torch


def assoc_pointwise(x):
    from torch._higher_order_ops.associative_scan import associative_scan
    return associative_scan(lambda a, b: a * b + torch.sin(a), x, dim=0)


PROGRAMS = [("assoc_pointwise", assoc_pointwise, lambda: [torch.randn(5, 4)])]


def main(argv):
    import hopctl_torch
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    for name, fn, make_inputs in PROGRAMS:
        with tempfile.TemporaryDirectory() as d:
            torch.compile(fn, backend=hopctl_torch.dump_backend(d, aot=False), fullgraph=True)(*make_inputs())
            graphs = sorted(os.listdir(d))
            if len(graphs) != 1:
                raise SystemExit("%s: Dynamo wrote %d graphs" % (name, len(graphs)))
            shutil.copy(os.path.join(d, graphs[0]), os.path.join(out, name + ".pb"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
