"""Runtime oracle for `hopctl analyze`: what real torch observes when it runs
a graph on real tensors.

It follows the conventions of PyTorch's check_input_alias_and_mutation
(torch/_higher_order_ops/utils.py): storage maps where the last index
sharing a storage wins. Mutation is observed as the older runtime
implementation did, through version counters, plus changed values, which
catch writes a schema hides (torch 1.13's native_batch_norm updates
running_mean/running_var in place without bumping their versions).

Mutated inputs are reported per storage, mapped to the last input index
sharing it (the static checker's `inp_storage_map[storage]`), in ascending
order: the runtime cannot see write order.

    /usr/bin/python3 python/tools/alias_oracle.py testdata/models/mlp.pb mlp
"""

import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _storage_key(t):
    """An identity for t's storage that equal for views of one tensor."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage().data_ptr()
    return t.storage().data_ptr()


def _flatten(out):
    if isinstance(out, (list, tuple)):
        leaves = []
        for o in out:
            leaves.extend(_flatten(o))
        return leaves
    return [out]


def observe(gm, inputs):
    """Runs gm on inputs and returns the four results as hopctl's JSON has them."""
    tensors = [x if isinstance(x, torch.Tensor) else None for x in inputs]
    versions = [t._version if t is not None else None for t in tensors]
    before = [t.detach().clone() if t is not None else None for t in tensors]
    inp_storage_map = {}
    for i, t in enumerate(tensors):
        if t is not None:
            inp_storage_map[_storage_key(t)] = i
    with torch.no_grad():
        outs = _flatten(gm(*inputs))
    out_storage_map = {}
    for j, o in enumerate(outs):
        if isinstance(o, torch.Tensor):
            out_storage_map[_storage_key(o)] = j
    inp_inp = {}
    inp_out = {}
    for i, t in enumerate(tensors):
        if t is None:
            continue
        key = _storage_key(t)
        if inp_storage_map[key] != i:
            inp_inp[str(i)] = inp_storage_map[key]
        if key in out_storage_map:
            inp_out[str(i)] = out_storage_map[key]
    out_out = {}
    for j, o in enumerate(outs):
        if isinstance(o, torch.Tensor) and out_storage_map[_storage_key(o)] != j:
            out_out[str(j)] = out_storage_map[_storage_key(o)]
    mutated = set()
    for i, t in enumerate(tensors):
        if t is None:
            continue
        changed = t._version != versions[i]
        if not changed:
            same = torch.equal(t.detach(), before[i]) or (
                t.is_floating_point() and torch.allclose(t.detach(), before[i], equal_nan=True, rtol=0, atol=0))
            changed = not same
        if changed:
            mutated.add(inp_storage_map[_storage_key(t)])
    return {
        "inp_inp_alias": inp_inp,
        "inp_out_alias": inp_out,
        "out_out_alias": out_out,
        "mutated_inputs": sorted(mutated),
    }


def main(argv):
    import corpus
    import hopctl_torch

    path, name = argv[1], argv[2]
    gm = hopctl_torch.load(path)
    print(json.dumps(observe(gm, corpus.make_inputs(name)), sort_keys=True))


if __name__ == "__main__":
    main(sys.argv)
