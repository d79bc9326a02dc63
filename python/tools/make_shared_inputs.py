"""Writes testdata/pt2/shared/<torch major.minor>/{same,views,distinct}.pt2:
torch.export.save of programs whose user inputs are one tensor passed twice
(f(t, t)), two views of one tensor (f(x[0], x[1])) and two tensors, each
writing its first input. The archive's example inputs record the sharing
the program JSON does not (pkg/pt2/sampleinputs.go reads it).

    scripts/torch.sh 2.6 -- python3 python/tools/make_shared_inputs.py
    scripts/torch.sh 2.14 -- python3 python/tools/make_shared_inputs.py
"""

import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class WriteFirst(torch.nn.Module):
    def forward(self, a, b):
        a.mul_(2)
        return a + b


def main():
    v = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    out = os.path.join(HERE, "..", "..", "testdata", "pt2", "shared", v)
    os.makedirs(out, exist_ok=True)
    t = torch.randn(3)
    base = torch.randn(2, 3)
    for name, args in [("same", (t, t)), ("views", (base[0], base[1])), ("distinct", (torch.randn(3), torch.randn(3)))]:
        ep = torch.export.export(WriteFirst(), args)
        torch.export.save(ep, os.path.join(out, name + ".pt2"))
        print(os.path.join(out, name + ".pt2"))


if __name__ == "__main__":
    main()
