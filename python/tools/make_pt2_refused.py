"""torch 2.6 archives hopctl must refuse (pkg/pt2 TestTorch26FormsRefused).

torch 2.6's scan HOP carried dim and reverse; current torch has neither
(its caller permutes and flips), so hopctl reads the 2.6 form only for dim 0
and reverse False (pkg/pt2/hopforms.go). Run with torch 2.6:

    scripts/torch.sh 2.6 -- python3 python/tools/make_pt2_refused.py pkg/pt2/testdata
"""

import os
import sys

import torch
from torch import nn


class ScanDim1(nn.Module):
    def forward(self, init, xs):
        from torch._higher_order_ops.scan import scan

        def combine(c, x):
            n = c + x
            return n, n.clone()
        return scan(combine, init, xs, dim=1)


class ScanReverse(nn.Module):
    def forward(self, init, xs):
        from torch._higher_order_ops.scan import scan

        def combine(c, x):
            n = c + x
            return n, n.clone()
        return scan(combine, init, xs, reverse=True)


PROGRAMS = {
    "scan_dim1": (ScanDim1(), (torch.randn(5), torch.randn(5, 4))),
    "scan_reverse": (ScanReverse(), (torch.randn(4), torch.randn(5, 4))),
}


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, (model, args) in PROGRAMS.items():
        ep = torch.export.export(model, args)
        print(name, torch.__version__)
        print(ep.graph_module.code)
        torch.export.save(ep, os.path.join(out, "torch%s_%s.pt2" % (torch.__version__.split("+")[0][:3], name)))


if __name__ == "__main__":
    main(sys.argv[1])
