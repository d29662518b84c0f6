#!/usr/bin/python3
"""PyTorch timing of the same work as `dprl bench primorl` (one thread).

One DP-FedAvg round: 30 trajectories of 200 transitions, each trained locally from the current
ensemble (3 members 4-64-64-8, swish, soft-bounded log-variance with learnable bounds, Gaussian
NLL + bound regulariser + weight decay) by SGD with batch 16 and lr 1e-3, projected onto the
per-layer clip set after every step; the clipped updates are summed, divided by qK and noised.
One rollout step: all members on 50,000 states, the max-pairwise-distance penalty, a random
member per state and a Gaussian sample. Members run as batched matrix products (torch.bmm), the
usual way to write ensembles in PyTorch. Medians of 5 repetitions after one warm-up, in process
CPU time (the machine is shared, so wall time would count waits).

Usage: /usr/bin/python3 tools/bench/primorl_torch_bench.py [--json]
"""
import json
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
N, IN, H, OUT = 3, 4, 64, 4
CLIENTS, LEN, B, LR, C, Z = 30, 200, 16, 1e-3, 1.0, 0.52
WD = [2.5e-5, 5e-5, 1e-4]


def make_params():
    sizes = [IN, H, H, 2 * OUT]
    ps = []
    for i in range(3):
        bound = 1.0 / sizes[i] ** 0.5
        ps.append((torch.rand(N, sizes[i], sizes[i + 1]) * 2 - 1) * bound)
        ps.append((torch.rand(N, 1, sizes[i + 1]) * 2 - 1) * bound)
    ps.append(torch.full((N, 1, OUT), 0.5))  # max logvar
    ps.append(torch.full((N, 1, OUT), -10.0))  # min logvar
    return [p.requires_grad_() for p in ps]


def forward(ps, x):  # x: (N, B, IN)
    h = x
    for i in range(3):
        h = torch.baddbmm(ps[2 * i + 1], h, ps[2 * i])
        if i < 2:
            h = h * torch.sigmoid(h)
    mean, raw = h[..., :OUT], h[..., OUT:]
    mx, mn = ps[6], ps[7]
    lv = mx - torch.nn.functional.softplus(mx - raw)
    lv = mn + torch.nn.functional.softplus(lv - mn)
    return mean, lv


def loss_fn(ps, x, y):
    mean, lv = forward(ps, x.expand(N, -1, -1))
    nll = (((mean - y) ** 2) * torch.exp(-lv) + lv).mean(dim=(1, 2)).sum()
    reg = 0.01 * (ps[6].sum() - ps[7].sum())
    decay = sum(0.5 * WD[i] * (ps[2 * i] ** 2).sum() for i in range(3))
    return nll + reg + decay


def round_once(ps, xs, ys):
    start = [p.detach().clone() for p in ps]
    bound = C / (N * len(ps)) ** 0.5
    total = [torch.zeros_like(p) for p in start]
    for k in range(CLIENTS):
        theta = [p.clone().requires_grad_() for p in start]
        perm = torch.randperm(LEN)
        for b0 in range(0, LEN, B):
            idx = perm[b0:b0 + B]
            loss = loss_fn(theta, xs[k, idx], ys[k, idx])
            grads = torch.autograd.grad(loss, theta)
            with torch.no_grad():
                for t, g, s in zip(theta, grads, start):
                    t -= LR * g
                    d = t - s  # per member and tensor: scale to the block bound
                    norms = d.flatten(1).norm(dim=1).clamp_min(1e-12)
                    scale = (bound / norms).clamp(max=1.0).view(-1, 1, 1)
                    t.copy_(s + d * scale)
        with torch.no_grad():
            for acc, t, s in zip(total, theta, start):
                acc += t - s
    with torch.no_grad():
        for p, acc in zip(ps, total):
            p.copy_(p + acc / CLIENTS + torch.randn_like(p) * Z * C / CLIENTS)


def rollout_once(ps, s, a):
    with torch.no_grad():
        mean, lv = forward(ps, torch.cat([s, a], dim=1).expand(N, -1, -1))
        d = mean[:, None, :, :OUT - 1] - mean[None, :, :, :OUT - 1]
        u = d.norm(dim=-1).amax(dim=(0, 1))
        m = torch.randint(0, N, (s.shape[0],))
        ar = torch.arange(s.shape[0])
        out = mean[m, ar] + torch.exp(0.5 * lv[m, ar]) * torch.randn(s.shape[0], OUT)
        return s + out[:, :OUT - 1], out[:, OUT - 1] - 2.0 * u


def median_ms(fn, reps=5):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        ts.append((time.process_time() - t0) * 1e3)
    return sorted(ts)[len(ts) // 2]


def main():
    ps = make_params()
    xs, ys = torch.rand(CLIENTS, LEN, IN) * 2 - 1, torch.randn(CLIENTS, LEN, OUT) * 0.1
    round_ms = median_ms(lambda: round_once(ps, xs, ys))
    s, a = torch.rand(50000, 3) * 2 - 1, torch.rand(50000, 1) * 2 - 1
    rollout_ms = median_ms(lambda: rollout_once(ps, s, a))
    res = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "round_ms": round_ms, "rollout_step_ms": rollout_ms}
    if "--json" in sys.argv:
        print(json.dumps(res))
    else:
        print(f"PyTorch {res['torch']} (1 thread): DP-FedAvg round {round_ms:.2f} ms; "
              f"rollout step of 50000 states {rollout_ms:.2f} ms")


if __name__ == "__main__":
    main()
