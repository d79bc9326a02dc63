"""A torch.compile backend that writes the graphs torch 2.x compiles."""

import os
import threading

import torch

from ._export import export


class DumpBackend:
    """``torch.compile(fn, backend=hopctl_torch.dump_backend(directory))``.

    Every graph Dynamo hands the backend is written to
    ``directory/NNN_dynamo.pb`` (NNN counts the graphs of this backend from
    000, so graph breaks give several), and, with ``aot=True`` (the default),
    the graphs AOTAutograd compiles for it: ``NNN_forward.pb`` and
    ``NNN_backward.pb`` when a gradient may be needed, ``NNN_inference.pb``
    otherwise. The compiled function runs those graphs, so the program
    computes what it computes without the backend. Each file records the
    grad mode the program was traced under: ``torch.is_grad_enabled()`` when
    Dynamo hands over its graph (the caller's mode; AOTAutograd itself
    compiles under no_grad, so its graphs get the Dynamo graph's mode), and
    ``torch.is_inference_mode_enabled()`` likewise.
    ``files`` lists the paths written,
    in order. Errors (a graph the format cannot carry) propagate, so a test
    sees them.
    """

    def __init__(self, directory, aot=True):
        self.directory = os.fspath(directory)
        self.aot = aot
        self.files = []
        self._count = 0
        self._lock = threading.Lock()

    def _write(self, gm, n, kind, grad_enabled, inference_mode):
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, "%03d_%s.pb" % (n, kind))
        export(gm, path, grad_enabled=grad_enabled, inference_mode=inference_mode)
        self.files.append(path)
        return path

    def __call__(self, gm, example_inputs):
        with self._lock:
            n = self._count
            self._count += 1
        grad_enabled, inference_mode = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
        self._write(gm, n, "dynamo", grad_enabled, inference_mode)
        if not self.aot:
            return gm.forward
        from functorch.compile import make_boxed_func
        from torch._functorch.aot_autograd import aot_module_simplified

        def compiler(kind):
            def compile_graph(g, _inputs):
                self._write(g, n, kind, grad_enabled, inference_mode)
                return make_boxed_func(g.forward)
            return compile_graph

        return aot_module_simplified(gm, example_inputs, fw_compiler=compiler("forward"),
                                     bw_compiler=compiler("backward"),
                                     inference_compiler=compiler("inference"))


def dump_backend(directory, aot=True):
    """A torch.compile backend writing every graph it compiles (see DumpBackend)."""
    return DumpBackend(directory, aot)
