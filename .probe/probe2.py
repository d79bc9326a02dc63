import torch, sys
NAMES = sys.argv[1:]
sys.argv = sys.argv[:1]
exec(open(".probe/probe.py").read())
def while_mutate_add(x):
    y = x.clone()
    def body(i, x):
        y.add_(1); return i + 1, x.sin()
    return while_loop(lambda i, x: i < 3, body, (torch.tensor(0), x))
def scan_mutate_add(x):
    y = x[0].clone()
    def comb(c, z):
        y.add_(1); return c + z, (c+z).clone()
    return scan(comb, x[0].clone(), x)
def map_mutate_xs(x):
    def body(a):
        a.add_(1); return a.sin()
    return umap(body, x.clone())
def cond_mutate_view(x):
    def t(x):
        x.view(-1).mul_(2); return x.cos()
    return torch.cond(x.sum() > 0, t, lambda x: x.sin(), (x,))
def while_meta2(x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.t().contiguous()), (torch.tensor(0), x))
def while_meta3(x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.double()), (torch.tensor(0), x))
import sys as _s
for name in NAMES:
    fn = globals()[name]
    for grad in (True, False):
        torch._dynamo.reset()
        x = torch.randn(4, 3)
        ctx = torch.enable_grad() if grad else torch.no_grad()
        for be in ("eager", "aot_eager"):
            try:
                with ctx:
                    torch.compile(fn, backend=be, fullgraph=True)(x.clone())
                r = "ok"
            except Exception as e:
                r = type(e).__name__ + ": " + " | ".join(str(e).strip().splitlines()[:3])
            print(name, "grad" if grad else "nograd", be, r[:400])
