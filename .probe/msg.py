import torch
def cond_mutate(x):
    def t(x):
        x.add_(1); return x.sin()
    return torch.cond(x.sum() > 0, t, lambda x: x.cos(), (x,))
try:
    torch.compile(cond_mutate, backend="eager", fullgraph=True)(torch.randn(3))
except Exception as e:
    print(repr(str(e)[:1500]))
    c = e.__cause__ or e.__context__
    print(type(c), repr(str(c)[:600]))
