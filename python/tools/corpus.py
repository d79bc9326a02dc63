"""The real-model corpus: small models traced with make_fx into ATen graphs.

Every entry is deterministic (torch.manual_seed). Its graph is a make_fx trace
(tracing_mode="fake", so every node carries meta["val"]) of a function whose
placeholders are the model's parameters (``p_<path>``) and buffers
(``b_<path>``), lifted via torch.nn.utils.stateless.functional_call, followed
by the real inputs. The graphs therefore hold no weights, only small constants,
and the inputs can be rebuilt from the seed at any time (``make_inputs``).

While tracing, each ATen node gets
* meta["stack_trace"]: the Python frames from the traced function down to the
  op (torch tracing internals removed), outermost first, repository files
  with repository-relative paths, so traces are identical on every run;
* meta["nn_module_stack"]: {key: (path, module class)} as torch.export records it.

    import corpus
    for name in corpus.NAMES:
        gm, inputs = corpus.trace(name)      # inputs: fresh flat list
        gm(*corpus.make_inputs(name))
"""

import contextlib
import math
import os
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

try:
    from torch.func import functional_call as _functional_call  # torch >= 2.0
except Exception:  # torch 1.13
    from torch.nn.utils.stateless import functional_call as _functional_call

SEED = 0
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Spec:
    """What a builder returns: an optional model, named inputs, and the call."""

    def __init__(self, model, inputs, fn=None, param_grad=True):
        self.model = model  # nn.Module or None
        self.inputs = inputs  # list of (name, value)
        self.fn = fn  # fn(model, *inputs) or fn(*inputs) when model is None
        self.param_grad = param_grad


# ---------------------------------------------------------------------------
# Models.


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.act(self.norm(self.fc1(x))))


class SelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.q_proj = nn.Linear(dim, dim)
        self.k_proj = nn.Linear(dim, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.out_proj = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, t, d = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(mask, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(out)


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(self.gap(x), 1))


class TokenModel(nn.Module):
    def __init__(self, vocab=50, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, vocab)

    def forward(self, tokens, targets):
        logp = F.log_softmax(self.proj(self.embed(tokens)), dim=-1)
        picked = torch.gather(logp, -1, targets.unsqueeze(-1)).squeeze(-1)
        return picked, -picked.mean()


class RNN(nn.Module):
    """nn.LSTM / nn.GRU (batch_first=True) returning the output and the
    final state. torch 1.13's CPU path (aten/src/ATen/native/RNN.cpp) runs
    the cells as unsafe_chunk / unsafe_split of the gate pre-activations
    followed by in-place sigmoid_ / tanh_ / add_ on the pieces."""

    def __init__(self, cls):
        super().__init__()
        self.rnn = cls(8, 16, batch_first=True)

    def forward(self, x):
        r = self.rnn
        # functional_call swaps the parameters, but the module runs its
        # cached _flat_weights list: rebuild it from the current ones.
        r._flat_weights = [getattr(r, n) for n in r._flat_weights_names]
        out, state = r(x)
        return (out,) + (tuple(state) if isinstance(state, tuple) else (state,))


def inplace_views_fn(x, y, buf):
    """In-place ops on views of intermediates; mutates buf through a view;
    returns a view of an input (y) and two views of one tensor (c)."""
    a = x * 2
    a[:, :3].add_(y[:3])          # in-place on a slice of an intermediate
    a.t().mul_(0.5)               # in-place through a transpose view
    b = a.view(2, 12)
    b[0].relu_()                  # in-place on a select view
    buf[1:3].add_(a[1:3])         # input mutated in place through a view
    c = a.sum(0) + y
    return b, y.unsqueeze(0), c.view(2, 3), c[1:]


def shared_storage_fn(base, window, other):
    """base and window share storage (window = base[1:3]); window is mutated."""
    window.mul_(2)
    return base + other, window.sum()


def view_write_cat_fn(x, y, b):
    """Writes through views of an intermediate (a transpose, a slice), then a
    concatenation and a view output: the backward's gradient pieces of the
    slice and the cat are zero-filled (issue #34's first pattern)."""
    c = x * 2
    c.transpose(0, 1).mul_(3)
    c[1:, :2].add_(b)
    return torch.cat([c, y]).sum(0), c.view(-1)


def stack_split_fn(x, y, z):
    """stack then split and permute, beside amax(keepdim=True) and var
    (issue #34's second pattern): split's backward fills the pieces that get
    no gradient with zeros, amax's compares with its output."""
    s = torch.stack([x, y, z * 2])
    p, q = s.split([1, 2], 0)
    m = (q * x).amax(1, keepdim=True)
    v = (p.permute(0, 2, 1) * z.t()).var(1)
    return p.permute(1, 0, 2).sum(1) + m.squeeze(1)[:1], v


# ---------------------------------------------------------------------------
# Builders: each seeds torch itself, so inputs can be rebuilt at any time.


def _mlp():
    torch.manual_seed(SEED)
    model = MLP()
    return Spec(model, [("x", torch.randn(4, 16, requires_grad=True))])


def _attention():
    torch.manual_seed(SEED)
    model = SelfAttention()
    x = torch.randn(2, 8, 32, requires_grad=True)
    mask = torch.ones(8, 8, dtype=torch.bool).triu(1)  # causal: True = masked out
    return Spec(model, [("x", x), ("mask", mask)])


def _convbn():
    torch.manual_seed(SEED)
    model = ConvBN().train()  # batch norm updates its running stats: input mutation
    return Spec(model, [("x", torch.randn(2, 3, 16, 16))])


def _resnet18():
    import torchvision
    torch.manual_seed(SEED)
    model = torchvision.models.resnet18().eval()
    return Spec(model, [("x", torch.randn(1, 3, 64, 64))])


def _inplace_views():
    torch.manual_seed(SEED)
    x = torch.randn(4, 6, requires_grad=True)
    y = torch.randn(6, requires_grad=True)
    buf = torch.zeros(4, 6)
    return Spec(None, [("x", x), ("y", y), ("buf", buf)], fn=inplace_views_fn)


def _embedding():
    torch.manual_seed(SEED)
    model = TokenModel()
    tokens = torch.randint(0, 50, (2, 5))
    targets = torch.randint(0, 50, (2, 5))
    return Spec(model, [("tokens", tokens), ("targets", targets)])


def _shared_storage():
    torch.manual_seed(SEED)
    base = torch.randn(4, 4)
    other = torch.randn(4)
    return Spec(None, [("base", base), ("window", base[1:3]), ("other", other)],
                fn=shared_storage_fn)


def _view_write_cat():
    torch.manual_seed(SEED)
    return Spec(None, [("x", torch.randn(4, 3, requires_grad=True)),
                       ("y", torch.randn(2, 3, requires_grad=True)),
                       ("b", torch.randn(3, 2, requires_grad=True))], fn=view_write_cat_fn)


def _stack_split():
    torch.manual_seed(SEED)
    return Spec(None, [("x", torch.randn(4, 5, requires_grad=True)),
                       ("y", torch.randn(4, 5, requires_grad=True)),
                       ("z", torch.randn(4, 5, requires_grad=True))], fn=stack_split_fn)


def _lstm():
    torch.manual_seed(SEED)
    model = RNN(nn.LSTM)
    return Spec(model, [("x", torch.randn(2, 5, 8, requires_grad=True))])


def _gru():
    torch.manual_seed(SEED)
    model = RNN(nn.GRU)
    return Spec(model, [("x", torch.randn(2, 5, 8, requires_grad=True))])


BUILDERS = {
    "lstm": _lstm,
    "gru": _gru,
    "mlp": _mlp,
    "attention": _attention,
    "convbn": _convbn,
    "resnet18": _resnet18,
    "inplace_views": _inplace_views,
    "embedding": _embedding,
    "shared_storage": _shared_storage,
    "view_write_cat": _view_write_cat,
    "stack_split": _stack_split,
}


def _missing_module(mod):
    try:
        __import__(mod)
    except ImportError:
        return "needs %s, which this torch %s installation lacks" % (mod, torch.__version__)
    return None


# Entries this torch installation cannot build, with the reason: resnet18
# without torchvision (the chroots of scripts/chroot.sh install Debian's
# python3-torchvision, built against the suite's own torch: 0.21 for 2.6,
# 0.27 for 2.14; a chroot built before it has none). Tests report them as
# skipped (test_roundtrip.CorpusEntries).
UNAVAILABLE = {n: r for n, r in {"resnet18": _missing_module("torchvision")}.items() if r}
ALL_NAMES = sorted(BUILDERS)
NAMES = [n for n in ALL_NAMES if n not in UNAVAILABLE]

# ---------------------------------------------------------------------------
# Committed exports, one directory per torch series the project pins
# (`make testdata` writes them): the graphs Go tests read and the oracles run.
# sid moves on: a torch series with no directory here gets fresh exports.

COMMITTED = {"1.13": "models", "2.14": "models-torch2.14"}


def torch_series(version=None):
    """"1.13", "2.6", "2.14": major.minor of a torch version string."""
    v = (version or torch.__version__).split("+")[0]
    return ".".join(v.split(".")[:2])


def committed_dir():
    """testdata/<dir> holding this torch's committed corpus, or None."""
    d = COMMITTED.get(torch_series())
    return os.path.join(REPO_ROOT, "testdata", d) if d else None


_fresh_dir = None


def model_path(name):
    """A file of entry `name` exported from this torch: the committed one, or
    (for a torch with no committed corpus) a fresh export made once per process."""
    global _fresh_dir
    d = committed_dir()
    if d is not None:
        return os.path.join(d, name + ".pb")
    if _fresh_dir is None:
        import atexit
        import shutil
        import tempfile
        _fresh_dir = tempfile.mkdtemp(prefix="hopctl_corpus_")
        atexit.register(shutil.rmtree, _fresh_dir, True)
    path = os.path.join(_fresh_dir, name + ".pb")
    if not os.path.exists(path):
        import hopctl_torch
        gm, inputs = trace(name)
        hopctl_torch.export(gm, path, example_inputs=inputs)
    return path


# ---------------------------------------------------------------------------
# Lifting and tracing.


def _lifted(spec):
    """(names, flat inputs, function of the flat inputs)."""
    names, flat = [], []
    model = spec.model
    n_state = 0
    if model is not None:
        for path, p in model.named_parameters():
            names.append("p_" + path.replace(".", "_"))
            flat.append(p.detach().clone().requires_grad_(spec.param_grad and p.requires_grad))
        for path, b in model.named_buffers():
            names.append("b_" + path.replace(".", "_"))
            flat.append(b.detach().clone())
        n_state = len(flat)
        state_names = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    for name, value in spec.inputs:
        names.append(name)
        flat.append(value)

    if model is None:
        def functional(*args):
            return spec.fn(*args)
    else:
        def functional(*args):
            state = dict(zip(state_names, args[:n_state]))
            return _functional_call(model, state, tuple(args[n_state:]))
    return names, flat, functional


def make_inputs(name):
    """Fresh, deterministic flat inputs of entry `name` (parameters, buffers, inputs)."""
    return _lifted(BUILDERS[name]())[1]


def input_names(name):
    return _lifted(BUILDERS[name]())[0]


def trace(name):
    """(GraphModule, flat inputs) of corpus entry `name`. The inputs are not mutated."""
    spec = BUILDERS[name]()
    names, flat, functional = _lifted(spec)
    # oneDNN off: torch 2.x's CPU LSTM otherwise traces to one
    # aten.mkldnn_rnn_layer per layer instead of the ATen cell ops torch 1.13
    # traces (and AOTAutograd 2.x's training graphs have). hopctl has no rule
    # for it: its backward needs a workspace the kernel writes only under grad
    # mode (test_joint.py test_lstm_onednn_workspace_needs_grad_mode). No
    # other entry changes.
    with _recording(spec.model), torch.backends.mkldnn.flags(enabled=False):
        gm = make_fx(functional, tracing_mode="fake")(*flat)
    gm = _rename_placeholders(gm, names)
    return gm, flat


# -- metadata recording ----------------------------------------------------

# Frames from these files are tracing/dispatch plumbing, not the model's code.
_PLUMBING = (
    "torch/fx/", "torch/_ops.py", "torch/_tensor.py", "torch/utils/_python_dispatch.py",
    "torch/utils/_pytree.py", "torch/_subclasses/", "torch/_prims_common/", "torch/_prims/",
    "torch/_refs/", "torch/_decomp/", "torch/overrides.py", "torch/_meta_registrations.py",
    "torch/nn/modules/module.py", "torch/nn/utils/stateless.py", "torch/_functorch/",
    "torch/func/", "torch/utils/_contextlib.py", "torch/_jit_internal.py",
)


def _display_path(filename):
    absf = os.path.abspath(filename)
    if absf.startswith(REPO_ROOT + os.sep):
        return os.path.relpath(absf, REPO_ROOT)
    return filename


def _user_stack():
    frames = traceback.extract_stack()
    # Start below the lifting wrapper (corpus.functional); drop make_fx and callers.
    start = 0
    for i, fr in enumerate(frames):
        if fr.name == "functional" and os.path.abspath(fr.filename) == os.path.abspath(__file__):
            start = i + 1
    kept = []
    here = os.path.abspath(__file__)
    for fr in frames[start:]:
        f = fr.filename.replace(os.sep, "/")
        if fr.name in ("create_node", "_user_stack") and os.path.abspath(fr.filename) == here:
            continue
        if any(p in f for p in _PLUMBING) or "/contextlib.py" in f or "/functools.py" in f:
            continue
        kept.append(traceback.FrameSummary(_display_path(fr.filename), fr.lineno, fr.name,
                                           line=fr.line))
    return "".join(traceback.format_list(kept))


@contextlib.contextmanager
def _recording(model):
    """Record stack traces and nn_module_stack on nodes created by make_fx."""
    import torch.fx.experimental.proxy_tensor as pt

    paths = {}
    if model is not None:
        # Classes are read now: functional_call may swap in a replacer subclass.
        paths = {id(m): (path, type(m)) for path, m in model.named_modules()}
    stack = []  # [(key, (path, cls))]

    def pre_hook(mod, args):
        hit = paths.get(id(mod))
        if hit is not None:
            path, cls = hit
            key = "L__self__" + ("_" + path.replace(".", "_") if path else "")
            stack.append((key, (path, cls)))

    def post_hook(mod, args, out):
        if paths.get(id(mod)) is not None and stack:
            stack.pop()

    tracer_cls = getattr(pt, "PythonKeyTracer", None)
    orig = tracer_cls.create_node if tracer_cls is not None else None
    had_own = tracer_cls is not None and "create_node" in tracer_cls.__dict__

    def create_node(self, kind, *args, **kwargs):
        node = orig(self, kind, *args, **kwargs)
        if kind not in ("placeholder", "output"):
            trace_text = _user_stack()
            if trace_text:
                node.meta["stack_trace"] = trace_text
            if stack:
                node.meta["nn_module_stack"] = dict(stack)
        return node

    mm = torch.nn.modules.module
    h1 = mm.register_module_forward_pre_hook(pre_hook)
    h2 = mm.register_module_forward_hook(post_hook)
    if tracer_cls is not None:
        tracer_cls.create_node = create_node
    try:
        yield
    finally:
        h1.remove()
        h2.remove()
        if tracer_cls is not None:
            if had_own:
                tracer_cls.create_node = orig
            else:
                del tracer_cls.create_node


def _rename_placeholders(gm, names):
    """Copy gm's graph with placeholders named after parameters/buffers/inputs."""
    old = gm.graph
    placeholders = [n for n in old.nodes if n.op == "placeholder"]
    assert len(placeholders) == len(names), (len(placeholders), len(names))
    taken = {n.name for n in old.nodes if n.op != "placeholder"}
    graph = torch.fx.Graph()
    env = {}
    it = iter(names)
    for node in old.nodes:
        if node.op == "placeholder":
            want = next(it)
            if want in taken:
                want = want + "_in"
            new = graph.placeholder(want)
            new.meta = dict(node.meta)
        else:
            new = graph.node_copy(node, lambda n: env[n])
            new.meta = dict(node.meta)
        env[node] = new
    graph.lint()
    return torch.fx.GraphModule(gm, graph)
