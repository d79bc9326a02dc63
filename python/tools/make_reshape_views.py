"""Writes pkg/opschema/testdata/reshape_views.json: for tensors of many
layouts (permuted, sliced, expanded, with size-1 and size-0 dimensions),
whether torch's reshape to each new shape returns a view (the result shares
the input's storage) and whether contiguous() returns self. The Go test of
opschema.ViewOrCopyKind.IsView replays them.

    /usr/bin/python3 python/tools/make_reshape_views.py
"""

import itertools
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "pkg", "opschema", "testdata", "reshape_views.json")


def layouts():
    base = torch.arange(2 * 3 * 4, dtype=torch.float32)
    yield "contiguous", base.view(2, 3, 4)
    yield "t", base.view(6, 4).t()
    yield "permute", base.view(2, 3, 4).permute(2, 0, 1)
    yield "transpose12", base.view(2, 3, 4).transpose(1, 2)
    yield "slice_rows", base.view(6, 4)[::2]
    yield "slice_cols", base.view(6, 4)[:, :2]
    yield "narrow_inner", base.view(2, 3, 4)[:, :, 1:3]
    yield "unsqueezed", base.view(6, 4).unsqueeze(1)
    yield "expand", torch.arange(4.).view(1, 4).expand(3, 4)
    yield "size1_odd_stride", base.view(24, 1)[:, :1].as_strided((4, 1, 6), (6, 7, 1))
    yield "empty", torch.empty(0, 3)
    yield "scalar", torch.tensor(1.)


def new_shapes(n):
    shapes = set()
    for k in (1, 2, 3):
        for combo in itertools.product([1, 2, 3, 4, 6, 8, 12, 24], repeat=k):
            p = 1
            for c in combo:
                p *= c
            if p == n:
                shapes.add(combo)
    if n == 0:
        shapes = {(0,), (3, 0), (0, 1, 3)}
    return sorted(shapes)


def main():
    cases = []
    for name, x in layouts():
        for shape in new_shapes(x.numel()):
            y = x.reshape(shape)
            cases.append({"layout": name, "shape": list(x.shape), "stride": list(x.stride()),
                          "new_shape": list(shape), "op": "reshape",
                          "view": y.data_ptr() == x.data_ptr() and y._base is not None or y.numel() == 0})
        c = x.contiguous()
        cases.append({"layout": name, "shape": list(x.shape), "stride": list(x.stride()),
                      "new_shape": list(x.shape), "op": "contiguous", "view": c is x})
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
        f.write("\n")
    print("%d cases, %d views -> %s" % (len(cases), sum(c["view"] for c in cases), OUT))


if __name__ == "__main__":
    main()
