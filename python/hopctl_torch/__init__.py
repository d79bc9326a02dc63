"""hopctl_torch: export torch.fx graphs to the hopctl interchange format and load them back.

    import hopctl_torch
    hopctl_torch.export(gm, "graph.pb", example_inputs=inputs)   # .pb / .json / .pbtxt
    gm2 = hopctl_torch.load("graph.pb")                          # executable GraphModule
    torch.compile(fn, backend=hopctl_torch.dump_backend("out/"))  # torch 2.x: Dynamo/AOT graphs
    hopctl_torch.export(ep, "prog.pb")        # a torch.export.ExportedProgram, signature kept
    report = hopctl_torch.analyze(ep)         # runs the hopctl binary (bundled, $HOPCTL or PATH)

See python/README.md for the conventions (target spelling, dtypes, storage_id).
"""

from ._common import FORMAT_MAJOR, FORMAT_MINOR, __version__, callable_name, resolve_target
from ._export import ExportError, export, to_proto
from ._load import LoadError, from_proto, load
from ._run import HopctlError, HopctlVersionError, Report, analyze, lint
from ._values import OpaqueValue, SymDesc, TensorDesc
from ._common import read_file as read_proto
from ._dynamo import DumpBackend, dump_backend

__all__ = [
    "export", "load", "to_proto", "from_proto", "read_proto", "analyze", "lint", "Report", "HopctlError", "HopctlVersionError",
    "dump_backend", "DumpBackend",
    "ExportError", "LoadError", "TensorDesc", "SymDesc", "OpaqueValue",
    "callable_name", "resolve_target", "FORMAT_MAJOR", "FORMAT_MINOR", "__version__",
]
