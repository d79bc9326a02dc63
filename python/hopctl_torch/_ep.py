"""torch.export ExportedProgram support: the graph module plus its graph signature.

An ExportedProgram is written as its graph module (``ep.graph_module``: parameters,
buffers and constants are lifted to placeholders already) with the program's graph
signature in ``File.signature`` (format 1.1): one input spec per placeholder (kind,
placeholder name, state_dict target, buffer persistence) and one output spec per
output (kind, value name, target). The dialect (``ep.verifiers``) and the range
constraints go into annotations, spelled as hopctl's .pt2 reader spells them, so a
program exported here and the same program saved with torch.export.save read alike.
"""

from ._proto.hopctl.v1 import graph_pb2 as pb


def is_exported_program(obj):
    """True for a torch.export.ExportedProgram (any torch 2.x)."""
    t = type(obj)
    return t.__name__ == "ExportedProgram" and hasattr(obj, "graph_signature") and hasattr(obj, "graph_module")


def _arg_name(arg):
    return getattr(arg, "name", "") or ""


def current_hop_conventions(msg):
    """Rewrite torch 2.6's calling conventions of two HOPs into the current ones
    hopctl's HOP table describes, as hopctl's .pt2 reader does (pkg/pt2's
    normalizeHOP): invoke_subgraph(g, id, [ops]) -> invoke_subgraph(g, id, *ops);
    scan(f, init, xs, 0, False, add) -> scan(f, init, xs, add). A scan over another
    dim, or reversed, is refused."""
    graphs = [msg.graph] + [s.graph for s in msg.submodules]
    for g in graphs:
        for n in g.nodes:
            args = list(n.args)
            if n.target == "higher_order.invoke_subgraph" and len(args) == 3 \
                    and args[1].WhichOneof("kind") == "str" and args[2].WhichOneof("kind") in ("list", "tuple"):
                seq = args[2].list if args[2].WhichOneof("kind") == "list" else args[2].tuple
                new = args[:2] + list(seq.items)
            elif n.target == "higher_order.scan" and len(args) == 6 \
                    and args[3].WhichOneof("kind") == "int" and args[4].WhichOneof("kind") == "bool":
                if args[3].int != 0 or args[4].bool:
                    raise ValueError("node %r: scan over dim %d with reverse=%s (torch 2.6's form): hopctl reads it "
                                     "only for dim 0, reverse False" % (n.name, args[3].int, args[4].bool))
                new = args[:3] + [args[5]]
            else:
                continue
            new = [pb.Arg.FromString(a.SerializeToString()) for a in new]
            del n.args[:]
            n.args.extend(new)
    return msg


def add_signature(msg, ep):
    """Record ep's graph signature, dialect and range constraints in msg."""
    sig = ep.graph_signature
    msg.format_version.minor = max(msg.format_version.minor, 1)  # 1.1: File.signature
    out = msg.signature
    out.SetInParent()
    for s in sig.input_specs:
        spec = out.inputs.add()
        spec.kind = pb.InputKind.Value("INPUT_KIND_" + s.kind.name)
        spec.name = _arg_name(s.arg)
        if s.target is not None:
            spec.target = str(s.target)
        if s.kind.name == "BUFFER":
            spec.persistent = bool(s.persistent)
    for s in sig.output_specs:
        spec = out.outputs.add()
        spec.kind = pb.OutputKind.Value("OUTPUT_KIND_" + s.kind.name)
        spec.name = _arg_name(s.arg)
        if s.target is not None:
            spec.target = str(s.target)
    verifiers = [getattr(v, "dialect", None) for v in getattr(ep, "verifiers", []) or []]
    verifiers = [v for v in verifiers if v]
    notes = []
    if verifiers:
        notes.append(("torch.export.verifiers", ",".join(verifiers)))
    if ep.range_constraints:
        notes.append(("torch.export.range_constraints", str(ep.range_constraints)))
    for k, v in notes:
        a = msg.annotations.add()
        a.key, a.value = k, v
    return msg
