import torch, sys, traceback
from torch._higher_order_ops.while_loop import while_loop
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.map import map as umap
from torch._higher_order_ops.associative_scan import associative_scan

def cond_mutate(x):
    def t(x):
        x.add_(1); return x.sin()
    return torch.cond(x.sum() > 0, t, lambda x: x.cos(), (x,))
def cond_alias(x):
    return torch.cond(x.sum() > 0, lambda x: x, lambda x: x.cos(), (x,))
def while_mutate(x):
    def body(i, x):
        x.add_(1); return i + 1, x.sin()
    return while_loop(lambda i, x: i < 3, body, (torch.tensor(0), x))
def while_alias(x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x), (torch.tensor(0), x))
def scan_mutate(x):
    def comb(c, y):
        c.add_(1); return c + y, (c+y).clone()
    return scan(comb, x[0].clone(), x)
def map_mutate(x):
    y = x[0].clone()
    def body(a, y):
        y.add_(a); return a.sin()
    return umap(body, x, y)
def assoc_alias(x):
    return associative_scan(lambda a, b: a, x, dim=0, combine_mode="generic")
def while_meta(x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.t()), (torch.tensor(0), x))

for name in sys.argv[1:]:
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
