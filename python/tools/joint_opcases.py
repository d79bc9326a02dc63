"""Small single-op graphs that exercise hopctl's derivative rules one by one.

Each case is (name, fn, inputs): fn is traced with make_fx (fake tensors, as
the corpus is) into an ATen graph; python/tests/test_joint.py writes its joint
graph with `hopctl joint` and compares it with torch.autograd.grad.
Inputs are built from a fixed seed; floating inputs require grad.
"""

import torch
import torch.nn.functional as F

aten = torch.ops.aten


def _r(*shape, lo=None, hi=None, grad=True, dtype=torch.float32):
    t = torch.randn(*shape, dtype=dtype)
    if lo is not None:
        t = t.abs() * (hi - lo) / 3 + lo if hi is not None else t.abs() + lo
        t = t.clamp(lo, hi) if hi is not None else t
    return t.requires_grad_(grad)


def _i(hi, *shape):
    return torch.randint(0, hi, shape)


def cases():
    torch.manual_seed(0)
    pos = lambda *s: _r(*s, lo=0.5)
    unit = lambda *s: (torch.rand(*s) * 1.6 - 0.8).requires_grad_(True)
    x, y = _r(3, 4), _r(3, 4)
    c = [
        # pointwise
        ("add_alpha", lambda a, b: torch.add(a, b, alpha=2), [_r(3, 4), _r(4)]),
        ("sub_bcast", lambda a, b: a - b, [_r(2, 3, 4), _r(3, 1)]),
        ("rsub", lambda a: 2 - a, [_r(3)]),
        ("mul_div", lambda a, b: a * b / (b * b + 1), [_r(3, 4), _r(1, 4)]),
        ("div_scalar", lambda a: a / 3 * 2.5, [_r(5)]),
        ("div_mode", lambda a, b: torch.div(a, b, rounding_mode="floor") + a, [_r(4), pos(4)]),
        ("unary_1", lambda a: a.exp() + a.expm1() + a.sin() + a.cos() + a.tan() + a.neg(), [unit(6)]),
        ("unary_2", lambda a: a.log() + a.log2() + a.log10() + a.log1p() + a.sqrt() + a.rsqrt() + a.reciprocal(), [pos(6)]),
        ("unary_3", lambda a: a.sinh() + a.cosh() + a.asin() + a.acos() + a.atan() + a.asinh() + a.atanh(), [unit(6)]),
        ("unary_4", lambda a: a.tanh() + a.sigmoid() + a.abs() + a.erf() + torch.exp2(a), [_r(6)]),
        ("acosh", lambda a: a.acosh(), [_r(5, lo=1.5)]),
        ("pow", lambda a, b: a ** 3 + a ** b + 2 ** b + a ** 0.5, [pos(4), _r(4)]),
        ("activations", lambda a: F.relu(a) + F.gelu(a, approximate="tanh") + F.silu(a) + F.mish(a)
         + F.hardsigmoid(a) + F.hardswish(a) + F.elu(a) + F.leaky_relu(a, 0.1) + F.hardtanh(a, -0.5, 0.5)
         + F.softplus(a, beta=2) + F.threshold(a, 0.1, -1.0), [_r(10)]),
        ("clamp", lambda a: a.clamp(-0.5, 0.5) + a.clamp_min(0.1) + a.clamp_max(0.2), [_r(8)]),
        ("clamp_tensor", lambda a, lo, hi: torch.clamp(a, lo, hi), [_r(8), _r(8) - 1, _r(8) + 1]),
        ("max_min_elem", lambda a, b: torch.maximum(a, b) + torch.minimum(a, b), [_r(6), _r(6)]),
        ("where", lambda a, b: torch.where(a > 0, a, b), [_r(3, 4), _r(4)]),
        ("masked_fill", lambda a, m: a.masked_fill(m, 0.5), [_r(3, 4), _i(2, 3, 4).bool()]),
        ("lerp", lambda a, b, w: torch.lerp(a, b, w) + torch.lerp(a, b, 0.3), [_r(4), _r(4), _r(4)]),
        ("addcmul_div", lambda a, b, c: torch.addcmul(a, b, c, value=2) + torch.addcdiv(a, b, c.exp(), value=0.5),
         [_r(4), _r(4), _r(4)]),
        ("atan2", lambda a, b: torch.atan2(a, b), [_r(5), _r(5)]),
        ("fmod_rem", lambda a, b: torch.fmod(a, b) + torch.remainder(a, b) + torch.fmod(a, 0.7), [_r(5), pos(5)]),
        ("to_copy", lambda a: a.double().sum().float() + a.to(torch.float64).mean(), [_r(4)]),
        ("clone_copy", lambda a, b: a.clone().copy_(b) * a, [_r(4), _r(4)]),
        # reductions
        ("sum_mean", lambda a: a.sum() + a.sum([0, 2]).sum() + a.mean() + a.mean(1, keepdim=True).sum(), [_r(2, 3, 4)]),
        ("amax_amin", lambda a: a.amax(1).sum() + a.amin((0, 1), keepdim=True).sum(), [_r(3, 4, 2)]),
        ("max_min_dim", lambda a: a.max(1).values.sum() + a.min(0, keepdim=True).values.sum(), [_r(3, 4)]),
        ("max_min_all", lambda a: a.max() + a.min(), [_r(3, 4)]),
        ("var_std", lambda a: a.var(1).sum() + a.std(0, unbiased=False).sum() + a.var(), [_r(3, 4)]),
        ("logsumexp", lambda a: torch.logsumexp(a, 1), [_r(3, 4)]),
        ("cumsum", lambda a: a.cumsum(1), [_r(3, 4)]),
        ("prod", lambda a: a.prod() + a.prod(1).sum(), [_r(3, 4)]),
        ("prod_zero", lambda a, m: (a * m).prod(0), [_r(3, 4), torch.tensor([[1.0, 0, 1, 1]] * 3)]),
        # linear algebra
        ("mm_addmm", lambda a, b, c: a @ b + torch.addmm(c, a, b, beta=0.5, alpha=2), [_r(3, 4), _r(4, 5), _r(5)]),
        ("bmm_baddbmm", lambda a, b, c: torch.bmm(a, b) + torch.baddbmm(c, a, b, alpha=3),
         [_r(2, 3, 4), _r(2, 4, 5), _r(2, 3, 5)]),
        ("mv_addmv_dot", lambda m, v, w: torch.mv(m, v).sum() + torch.addmv(w, m, v).sum() + torch.dot(v, v),
         [_r(3, 4), _r(4), _r(3)]),
        # views
        ("views", lambda a: a.view(6, 4).t().reshape(4, 3, 2).permute(2, 0, 1).transpose(0, 1).unsqueeze(0)
         .squeeze(0).expand(2, 4, 2, 3).sum(0), [_r(2, 3, 4)]),
        ("noncontig_view", lambda a: a.transpose(0, 1).reshape(-1) * 2, [_r(3, 4)]),
        ("select_slice", lambda a: a.select(1, 2) * a[:, 1:4:2].sum(1) + a.narrow(1, 0, 2).sum(1), [_r(3, 5)]),
        ("diagonal_unfold", lambda a: a.diagonal(1).sum() + a.unfold(1, 2, 1).sum(), [_r(4, 5)]),
        ("split_unbind", lambda a: a.split(2, 1)[1] * 2 + a.split([1, 3], 1)[1][:, :2] + a.unbind(1)[0].unsqueeze(1),
         [_r(3, 4)]),
        ("as_strided", lambda a: a.as_strided((2, 2), (3, 1), 1) * 3, [_r(3, 3)]),
        # the unsafe_ splits (LSTM/GRU cells): in-place ops on the pieces are
        # allowed, autograd does not track the pieces as views
        ("unsafe_split_inplace", _unsafe_pieces, [_r(2, 8), _r(2, 8)]),
        ("transpose_", _transpose_, [_r(3, 4), _r(4, 3)]),
        # indexing
        ("gather_scatter", lambda a, i, s: a.gather(1, i) + a.scatter(1, i, s) .sum(1, keepdim=True)
         + a.scatter(1, i, 0.5).sum(1, keepdim=True), [_r(3, 4), torch.tensor([[0], [2], [3]]), _r(3, 1)]),
        ("scatter_add", lambda a, i, s: a.scatter_add(1, i, s), [_r(3, 4), torch.tensor([[0, 1], [2, 2], [3, 0]]), _r(3, 2)]),
        ("index_select_add", lambda a, i, s: a.index_select(0, i).sum() + a.index_add(0, i, s, alpha=2),
         [_r(4, 3), torch.tensor([0, 2, 2]), _r(3, 3)]),
        ("index", lambda a, i: a[i] * 2, [_r(5, 3), torch.tensor([4, 0, 0])]),
        ("index_put", lambda a, i, v: a.index_put((i,), v) + a.index_put((i,), v, accumulate=True),
         [_r(5, 3), torch.tensor([4, 1]), _r(2, 3)]),
        ("cat_stack", lambda a, b: torch.cat([a, b, a], 1).sum(0) + torch.stack([a, b]).sum((0, 1)).repeat(3)[:6],
         [_r(3, 2), _r(3, 2)]),
        ("flip_roll_repeat", lambda a: a.flip(0) + a.roll(1, 1) + a.repeat(2, 1)[1:4] + a.tril() + a.triu(1),
         [_r(3, 3)]),
        ("repeat_lead", lambda a: a.repeat(2, 3, 1).sum(0), [_r(2, 3)]),
        ("sort_topk", lambda a: a.sort(1).values * 2 + a.topk(4, 1).values, [_r(3, 4)]),
        # nn
        ("conv", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [_r(2, 3, 7, 7), _r(4, 3, 3, 3), _r(4)]),
        ("conv_groups_nobias", lambda x, w: F.conv2d(x, w, groups=2, dilation=2), [_r(1, 4, 8, 8), _r(6, 2, 3, 3)]),
        ("conv_transpose", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2), [_r(1, 3, 4, 4), _r(3, 2, 3, 3), _r(2)]),
        ("conv1d", lambda x, w: F.conv1d(x, w, padding=1), [_r(2, 3, 9), _r(4, 3, 3)]),
        ("batch_norm_train", lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True),
         [_r(4, 3, 2, 2), _r(3), _r(3), torch.zeros(3), torch.ones(3)]),
        ("batch_norm_eval", lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=False),
         [_r(4, 3, 2, 2), _r(3), _r(3), torch.rand(3), torch.rand(3) + 0.5]),
        ("layer_group_norm", lambda x, w, b: F.layer_norm(x, (4,), w, b).sum() + F.group_norm(x.view(2, 6, 4), 3).sum(),
         [_r(2, 3, 2, 4), _r(4), _r(4)]),
        ("group_norm_affine", lambda x, w, b: F.group_norm(x, 2, w, b), [_r(2, 4, 3), _r(4), _r(4)]),
        ("softmax", lambda a: F.softmax(a, 1) * F.log_softmax(a, 0), [_r(3, 4)]),
        ("embedding", lambda w, i: F.embedding(i, w, padding_idx=1) * 2, [_r(6, 3), torch.tensor([[0, 1, 5], [5, 5, 2]])]),
        ("pools", lambda x: F.max_pool2d(x, 2).sum() + F.avg_pool2d(x, 3, stride=1, padding=1).sum()
         + F.adaptive_avg_pool2d(x, (2, 3)).sum() + F.adaptive_max_pool2d(x, 2).sum(), [_r(2, 3, 6, 6)]),
        ("pools_3d", lambda x: F.max_pool3d(x, 2).sum() + F.avg_pool3d(x, 2).sum() + F.adaptive_avg_pool3d(x, 1).sum(),
         [_r(1, 2, 4, 4, 4)]),
        ("pools_1d", lambda x: F.avg_pool1d(x, 2).sum() + F.adaptive_avg_pool1d(x, 3).sum(), [_r(2, 3, 6)]),
        ("upsample", lambda x: F.interpolate(x, scale_factor=2, mode="nearest").sum()
         + F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False).sum(), [_r(1, 2, 3, 4)]),
        ("pads", lambda x: F.pad(x, (1, 2, 0, 1)).sum() + F.pad(x, (1, 1, 1, 1), mode="reflect").sum()
         + F.pad(x, (2, 0, 1, 1), mode="replicate").sum(), [_r(1, 2, 4, 4)]),
        ("pads_1d_3d", lambda x, y: F.pad(x, (1, 2), mode="reflect").sum() + F.pad(x, (1, 1), mode="replicate").sum()
         + F.pad(y, (1, 1, 1, 1, 1, 1), mode="replicate").sum() + F.pad(y, (1, 1, 1, 1, 1, 1), mode="reflect").sum(),
         [_r(1, 2, 5), _r(1, 1, 3, 3, 3)]),
        ("losses", lambda a, t, p, q: F.nll_loss(F.log_softmax(a, 1), t) + F.mse_loss(p, q)
         + F.binary_cross_entropy(p.sigmoid(), q.sigmoid().detach()), [_r(4, 5), _i(5, 4), _r(6), _r(6)]),
        ("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False), [_r(1, 2, 4, 4), unit(1, 3, 3, 2)]),
        ("fold", lambda x: F.fold(x, (4, 4), 2), [_r(1, 8, 9)]),
        # functionalization
        ("inplace_chain", lambda a, b: a.clone().mul_(2).add_(b).sub_(0.1).relu_() * 3, [_r(4), _r(4)]),
        ("write_transpose", lambda a, b: _wt(a, b), [_r(3, 4), _r(4, 3)]),
        ("write_diag_unbind", lambda a, b: _wd(a, b), [_r(3, 3), _r(3)]),
        ("write_split", lambda a, b: _ws(a, b), [_r(4, 2), _r(2, 2)]),
        ("index_put_", lambda a, v, i: _ip(a, v, i), [_r(5, 2), _r(2, 2), torch.tensor([0, 3])]),
    ]
    return c


def _wt(a, b):
    c = a * 1.0
    c.t().add_(b)
    return c * a


def _wd(a, b):
    c = a + 0
    c.diagonal().mul_(b)
    c.select(0, 1).add_(b)
    return c.sum(0) * b


def _unsafe_pieces(a, b):
    g = a * 1
    i = g.unsafe_chunk(4, 1)
    h = (b * 1).unsafe_split(2, 1)
    return i[0].add_(h[0]).sigmoid_() * i[1].tanh_() + h[3] * (b * 1).unsafe_split_with_sizes([3, 5], 1)[0].sum()


def _transpose_(a, b):
    c = torch.stack([a * 2, b.t()])
    c.transpose_(0, 1)  # torch 1.13 records stack's value after this
    return c * 3


def _ws(a, b):
    c = a.clone()
    c.narrow(0, 2, 2).copy_(b * 3)
    return c


def _ip(a, v, i):
    c = a.clone()
    c[i] = v
    return c * a
