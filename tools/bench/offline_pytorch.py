#!/usr/bin/env python3
"""The PyTorch side of `dprl bench offline`: one discrete CQL gradient step, timed.

The same step as dprl's discrete_cql (and d3rlpy 2.8.1's DiscreteCQL with n_critics 1): an MLP
obs-256-256-actions (ReLU, PyTorch default init) and its target copy; the double-DQN target
(online argmax at s', target network value), the Huber TD loss (beta 1) averaged over the batch,
plus alpha * mean(logsumexp_a Q(s, .) - Q(s, a)); backward; Adam (lr 6.25e-5); the target network
hard-copied every 8000 steps. Inputs are a fixed random batch (observations N(0, 1), uniform
actions, rewards N(0, 1), 10% terminals).

Run on one core, as the dprl side:
    OMP_NUM_THREADS=1 /usr/bin/python3 tools/bench/offline_pytorch.py --obs 8 --actions 4 \
        --batch 256 --json
Prints {"step_us": median, ...}: the median over `repeats` blocks of `iters` steps each, in thread
CPU time (as `dprl bench offline`; wall time is printed too).

With --dprl PATH the script also runs `PATH bench offline` (one timed block per call, same shapes)
between its own blocks, so both sides see the same machine state, and prints both medians and the
ratios the issue's targets are stated in (dprl step / PyTorch step, dprl DP step / dprl step).
"""

import argparse
import json
import os
import statistics
import subprocess
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402


def make_q(obs, actions, hidden):
    layers, width = [], obs
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, actions))
    return nn.Sequential(*layers)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--obs", type=int, default=8)
    ap.add_argument("--actions", type=int, default=4)
    ap.add_argument("--hidden", type=str, default="256,256")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dprl", type=str, default="", help="dprl executable to time alongside")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    hidden = [int(h) for h in args.hidden.split(",")]
    q = make_q(args.obs, args.actions, hidden)
    target = make_q(args.obs, args.actions, hidden)
    target.load_state_dict(q.state_dict())
    opt = torch.optim.Adam(q.parameters(), lr=6.25e-5)
    gamma, alpha, interval = 0.99, 1.0, 8000
    b = args.batch
    obs = torch.randn(b, args.obs)
    next_obs = torch.randn(b, args.obs)
    act = torch.randint(0, args.actions, (b,))
    rew = torch.randn(b, 1)
    term = (torch.rand(b, 1) < 0.1).float()
    step = [0]

    def cql_step():
        with torch.no_grad():
            a_next = q(next_obs).argmax(dim=1)
            q_next = target(next_obs).gather(1, a_next.view(-1, 1))
            y = rew + gamma * q_next * (1.0 - term)
        values = q(obs)
        q_data = values.gather(1, act.view(-1, 1))
        td = F.smooth_l1_loss(q_data, y, beta=1.0)
        conservative = (torch.logsumexp(values, dim=1, keepdim=True) - q_data).mean()
        loss = td + alpha * conservative
        opt.zero_grad()
        loss.backward()
        opt.step()
        step[0] += 1
        if step[0] % interval == 0:
            target.load_state_dict(q.state_dict())
        return loss

    for _ in range(args.iters // 4 + 10):
        cql_step()
    times, walls, dprl_runs = [], [], []
    for _ in range(args.repeats):
        c0, t0 = time.thread_time(), time.perf_counter()
        for _ in range(args.iters):
            cql_step()
        times.append((time.thread_time() - c0) / args.iters * 1e6)
        walls.append((time.perf_counter() - t0) / args.iters * 1e6)
        if args.dprl:
            cmd = [args.dprl, "bench", "offline", "--algo", "discrete_cql", "--obs",
                   str(args.obs), "--actions", str(args.actions), "--hidden", args.hidden,
                   "--batch", str(b), "--iters", str(args.iters), "--repeats", "1", "--json"]
            dprl_runs.append(json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                                       text=True).stdout))
    times.sort()
    walls.sort()
    out = {
        "framework": f"pytorch {torch.__version__}",
        "threads": torch.get_num_threads(),
        "obs": args.obs,
        "actions": args.actions,
        "hidden": hidden,
        "batch": b,
        "step_us": times[len(times) // 2],
        "step_wall_us": walls[len(walls) // 2],
        "clock": "thread CPU time (step_us); perf_counter (step_wall_us)",
        "repeats": args.repeats,
        "iters": args.iters,
    }
    if dprl_runs:
        med = lambda k: statistics.median(r[k] for r in dprl_runs)  # noqa: E731
        out["dprl_step_us"] = med("step_us")
        out["dprl_dp_step_us"] = med("dp_step_us")
        out["dprl_step_wall_us"] = med("step_wall_us")
        out["dprl_over_pytorch"] = out["dprl_step_us"] / out["step_us"]
        out["dprl_dp_over_step"] = out["dprl_dp_step_us"] / out["dprl_step_us"]
    if args.json:
        print(json.dumps(out))
    else:
        print(f"PyTorch CQL step, batch {b}: {out['step_us']:.1f} us (median of {args.repeats})")


if __name__ == "__main__":
    main()
