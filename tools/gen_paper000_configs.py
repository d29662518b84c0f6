#!/usr/bin/env python3
"""Writes configs/paper000/: one pipeline config per table cell of paper 000 (Sharma et al.,
"Preserving Expert-Level Privacy in Offline Reinforcement Learning", TMLR; Tables 1-3), the
expert populations (full scale and the reduced scale run on a 2-core machine), and the sweeps
(3 seeds per cell; `reduced/` sweeps switch a cell to the reduced population and step budget).

Cell values are the paper's Table 3 (eta / b / p / s), its T per env (App. B.3), the budget
splits of App. B.3 and sec. 6.1 as read in the spec (pure DP-SGD at eps = 5 except Acrobot;
eps1 = eps for Acrobot and HIV-CQL at eps >= 7.5; 3/4 and 1/4 otherwise). Rerun after editing:
    python3 tools/gen_paper000_configs.py
Standard library only; the output is deterministic."""
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "configs", "paper000")
CITE = ('Sharma et al., "Preserving Expert-Level Privacy in Offline Reinforcement Learning", '
        'TMLR')

# env: id, |A|, T per eps, data cap L, evaluation horizon, Q-network widths, variants
ENVS = {
    "cartpole": dict(id="cartpole", T={10: 25, 7.5: 20}, L=200, horizon=1000, hidden="256,256",
                     grid=[("gravity", "linspace(8.75, 11.0, 10)"),
                           ("force_mag", "linspace(9.0, 11.25, 10)"),
                           ("masscart", "linspace(0.8, 1.25, 10)")], fixed={}),
    "acrobot": dict(id="acrobot", T={10: 25, 7.5: 20, 5: 20}, L=200, horizon=200,
                    hidden="256,256",
                    grid=[("link_length_1+link_length_2", "linspace(0.8, 1.2, 10)"),
                          ("link_mass_1", "linspace(0.9, 1.1, 10)"),
                          ("link_mass_2", "linspace(0.9, 1.1, 10)")], fixed={}),
    "lunar_lander": dict(id="lunar_lander", T={10: 100, 7.5: 62}, L=1000, horizon=1000,
                         hidden="256,256",
                         grid=[("gravity", "linspace(-9.0, -11.0, 10)"),
                               ("wind_power", "linspace(0.0, 5.0, 10)"),
                               ("turbulence_power", "linspace(0.0, 0.5, 10)")],
                         fixed={"enable_wind": "true"}),
    "hiv": dict(id="hiv", T={10: 50, 7.5: 50, 5: 50}, L=50, horizon=50, hidden="512",
                grid=[("drug1_penalty", "linspace(18750, 21250, 50)"),
                      ("drug2_penalty", "linspace(1850, 2150, 20)"),
                      ("efficacy_noise_std", "[0, 0.01]")], fixed={}),
}

# Table 3: (eta, b, p, s); s None: no DP-SGD
TABLE3 = {
    ("acrobot", "cql"): {5: (0.001, 128, 0.0, None), 7.5: (0.001, 128, 0.0, None),
                         10: (0.0005, 128, 0.0, None)},
    ("acrobot", "bcq"): {5: (0.01, 256, 0.0, None), 7.5: (0.01, 256, 0.0, None),
                         10: (0.01, 256, 0.0, None)},
    ("lunar_lander", "cql"): {5: (0.0005, 256, 1.0, 80), 7.5: (0.005, 64, 0.8, 20),
                              10: (0.0005, 64, 0.8, 40)},
    ("lunar_lander", "bcq"): {5: (0.005, 64, 1.0, 10), 7.5: (0.001, 128, 0.5, 50),
                              10: (0.005, 128, 0.5, 20)},
    ("cartpole", "cql"): {5: (0.005, 256, 1.0, 20), 7.5: (0.001, 128, 0.9, 50),
                          10: (0.0001, 128, 0.8, 80)},
    ("cartpole", "bcq"): {5: (0.005, 128, 1.0, 10), 7.5: (0.01, 128, 0.5, 20),
                          10: (0.001, 128, 0.5, 40)},
    ("hiv", "cql"): {5: (0.01, 256, 1.0, 10), 7.5: (0.0001, 64, 0.0, None),
                     10: (0.0001, 64, 0.0, None)},
    ("hiv", "bcq"): {5: (0.005, 128, 1.0, 20), 7.5: (0.005, 64, 0.9, 20),
                     10: (0.005, 64, 0.9, 20)},
}
LEARNER = {"cql": "discrete_cql", "bcq": "discrete_bcq"}

# reduced scale run here (docs/paper000.md): the step budget every private cell is calibrated
# to, the non-private / stable-only step count, and the target-network interval
REDUCED = dict(calibrate_steps=10000, stable_steps=10000, nonprivate_steps=20000,
               target_update_interval=1000)
FULL = dict(stable_steps=100000, nonprivate_steps=1000000, target_update_interval=8000)


def eps_name(e):
    return str(e).replace(".", "_") if e != int(e) else str(int(e))


def write(path, text):
    path = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


# the reduced populations of LunarLander and HIV train on fewer settings (their experts cost 10-50x
# a CartPole expert): m = 300 experts, as many as the largest batch (256) needs
SMALL_GRID = {
    "lunar_lander": [("gravity", "linspace(-9.0, -11.0, 5)"), ("wind_power", "linspace(0.0, 5.0, 5)"),
                     ("turbulence_power", "linspace(0.0, 0.5, 4)")],
    "hiv": [("drug1_penalty", "linspace(18750, 21250, 20)"),
            ("drug2_penalty", "linspace(1850, 2150, 5)"), ("efficacy_noise_std", "[0, 0.01]")],
}
# PPO on LunarLander and HIV needs observation and reward normalisation: with CleanRL's defaults
# alone it diverges on LunarLander (-1600 after 2e5 steps against -76 normalised) and settles on
# HIV on a greedy policy worse than uniform (9.9e5 against 1.2e6; normalised: 1.4e9)
NORMALISED = ("lunar_lander", "hiv")
# Runs per setting of the reduced populations (top 3 kept). The paper keeps the top 3 of a
# learning-rate x batch-size grid per setting; with 3 runs and k = 3 every run is kept, and on
# Acrobot 13% of the 1e5-step runs never swing up on their own variant (-500): their
# demonstrations (13% of the episodes, most of them resting at the bottom with no torque) teach
# BC and CQL on the pooled data to rest there (-200, the random return). Keeping the best 3 of 5
# drops most of them.
RUNS_PER_SETTING = {"acrobot": 5}


# The first decisive step for LunarLander and HIV (docs/paper000.md): the reduced experts and PPO
# budget, but the paper's settings grid, so m = 3000 experts as in the paper
M3000 = ("lunar_lander", "hiv")


def population(env, full, m3000=False):
    e = ENVS[env]
    hidden = "512" if env == "hiv" else ("512,256,64" if full else "64,64")
    steps = (2000000 if env == "hiv" else 1000000) if full else (
        200000 if env == "lunar_lander" else 100000)
    small = not full and not m3000 and env in SMALL_GRID
    grid_list = SMALL_GRID[env] if small else e["grid"]
    settings = 1
    for _, v in grid_list:
        settings *= int(v.rstrip(")").split(",")[-1]) if v.startswith("linspace") else \
            len(v.strip("[]").split(","))
    select = (f"{{rule: hiv, extra: {settings // 2}}}" if env == "hiv" else "{rule: top_k, k: 3}")
    grid = "".join(f"      {k}: {v}\n" for k, v in grid_list)
    fixed = ", ".join(f"{k}: {v}" for k, v in e["fixed"].items())
    tag = "full" if full else ("reduced experts, the paper's m = 3000" if m3000 else "reduced")
    norm = ", norm_obs: true, norm_reward: true" if env in NORMALISED else ""
    note = ("the paper's scale: (512, 256, 64) actor and critic (HIV: one layer of 512), "
            "1e6 PPO env steps (HIV 2e6)" if full else
            f"reduced: {'(64, 64)' if env != 'hiv' else '(512)'} actor and critic, "
            f"{steps:.0e} PPO env steps per run".replace("e+0", "e")
            + (f", {settings} settings instead of the paper's "
               f"{2000 if env == 'hiv' else 1000}" if small else ""))
    if env in NORMALISED:
        note += ";\n# observation and reward normalisation (PPO diverges or degenerates without)"
    name = env + "_full" if full else (env + "_m3000" if m3000 else env)
    runs = 3 if full else RUNS_PER_SETTING.get(env, 3)
    return (f"# {env} expert population of paper 000 ({CITE}, sec. 6, App. B.1), {tag}:\n"
            f"# {note}; CleanRL ppo.py defaults otherwise (no lr/batch grid: {runs} seeds per "
            f"variant{', the best 3 kept' if runs > 3 else ''}).\n# Written by tools/gen_paper000_configs.py.\n"
            f"population:\n  name: {name}\n  seed: 1\n  out: runs/paper000/{name}/population\n"
            f"  env: {{id: {e['id']}}}\n  variants:\n"
            + (f"    params: {{{fixed}}}\n" if fixed else "")
            + f"    grid:\n{grid}  runs_per_setting: {runs}\n  ppo:\n    algo: ppo_layers\n"
            f"    params: {{hidden_sizes: \"{hidden}\"{norm}}}\n"
            f"    train: {{steps: {steps}, eval_every: 0, eval_episodes: 10}}\n"
            f"  select: {select}\n  action_floor: 0.02\n"
            f"  demos: {{episodes: 20, max_steps: {e['L']}}}\n")


# HIV's rewards reach 1e7 per step: unscaled, discrete CQL's targets swamp its conservative term
# and it does not learn in the reduced step budget (non-private CQL ended at 2.6e6-3.0e6, below
# the experts' 6e8, while BCQ matched them); scaled by 1e-7 (a public constant) it reaches 1.36e9.
# The paper plots HIV returns in units of 1e6 and does not say how it trained.
REWARD_SCALE = {"hiv": 1e-7}


def learner(env, algo, eta, b, tui):
    hidden = ENVS[env]["hidden"]
    extra = ", share_encoder: false" if algo == "bcq" else ""
    if env in REWARD_SCALE:
        extra += f", reward_scale: {REWARD_SCALE[env]:g}"
    return (f"learner:\n  id: {LEARNER[algo]}\n  params: {{learning_rate: {eta}, batch_size: {b}, "
            f"hidden_sizes: \"{hidden}\", target_update_interval: {tui}{extra}}}\n")


def cell(env, algo, eps, mode):
    e = ENVS[env]
    eta, b, p, s = TABLE3[(env, algo)][eps]
    name = f"{env}_{algo}_eps{eps_name(eps)}" + ("_dpsgd" if mode == "dp_sgd" else "")
    head = (f"# paper 000 ({CITE}): {env}, {LEARNER[algo]}, eps = {eps}, "
            + ("the expert-level DP-SGD baseline (Alg. 4 on all data, eps2 = eps)"
               if mode == "dp_sgd" else
               f"selective DP-SGD (Table 3: eta {eta}, b {b}, p {p}, s {s})")
            + ".\n# Written by tools/gen_paper000_configs.py. Full scale; "
            "sweeps/reduced/ runs it at the reduced scale.\n")
    txt = head + (f"pipeline: expert_level\nname: {name}\nseed: 1\nout: runs/paper000/{name}\n"
                  f"population: {env}_population_full.yaml\nmode: {mode}\n")
    if mode == "dp_sgd":
        sb = s if s is not None else 20
        txt += f"privacy: {{epsilon: {eps}, delta: auto}}\n"
        txt += f"selective: {{noise_multiplier: {sb}, accounting: sound}}\n"
    else:
        if p == 0.0:
            priv = f"{{epsilon: {eps}, delta: auto, epsilon1_fraction: 1}}"
        elif p == 1.0:
            priv = f"{{epsilon: {eps}, delta: auto, epsilon1_fraction: 0}}"
        else:
            priv = f"{{epsilon: {eps}, delta: auto}}"
        txt += f"privacy: {priv}\n"
        if p < 1.0:
            txt += f"release: {{trajectories: {e['T'][eps]}, max_length: {e['L']}}}\n"
        sel = f"p: {p}, accounting: sound" + (f", noise_multiplier: {s}" if s else "")
        txt += f"selective: {{{sel}}}\n"
    txt += learner(env, algo, eta, b, FULL["target_update_interval"])
    txt += (f"train: {{stable_steps: {FULL['stable_steps']}, eval_every: 10000, "
            f"eval_episodes: 10, eval_max_steps: {e['horizon']}}}\n")
    return name, txt


def nonprivate(env, algo):
    e = ENVS[env]
    eta, b, _, _ = TABLE3[(env, algo)][10]
    name = f"{env}_{algo}_nonprivate"
    txt = (f"# paper 000 ({CITE}): {env}, {LEARNER[algo]} without privacy on all the "
           f"demonstrations\n# (the normaliser of every score). The paper gives no step count or "
           f"hyper-parameters;\n# these are the eps = 10 cell's. Written by "
           f"tools/gen_paper000_configs.py.\n"
           f"pipeline: expert_level\nname: {name}\nseed: 1\nout: runs/paper000/{name}\n"
           f"population: {env}_population_full.yaml\nmode: non_private\n")
    txt += learner(env, algo, eta, b, FULL["target_update_interval"])
    txt += (f"train: {{stable_steps: {FULL['nonprivate_steps']}, eval_every: 10000, "
            f"eval_episodes: 10, eval_max_steps: {e['horizon']}}}\n")
    return name, txt


def reduced_sweep(env, name, cell_name, private, extra_set=None, grid=None, file=None,
                  tier="reduced"):
    """sweeps/<tier>/<file or name>.yaml, writing runs/paper000/<tier>/<env>/<name>/; tier m3000
    trains on the m = 3000 population of reduced experts."""
    steps = REDUCED["nonprivate_steps"] if "nonprivate" in cell_name else REDUCED["stable_steps"]
    pop = "the m = 3000 population of reduced experts" if tier == "m3000" else \
        "the reduced population"
    what = (f"{pop}, the noise multiplier calibrated to spend the DP-SGD "
            f"budget in\n# {REDUCED['calibrate_steps']} noisy steps, seeded noise "
            "(reproducible, not formal)" if private else pop)
    scale = "at m = 3000" if tier == "m3000" else "at the reduced scale"
    population_file = f"{env}_population_m3000.yaml" if tier == "m3000" else \
        f"{env}_population.yaml"
    lines = [f"# {cell_name} {scale} (docs/paper000.md): {what}, 3 seeds.\n"
             "# Written by tools/gen_paper000_configs.py.",
             f"base: ../../{cell_name}.yaml", f"out: runs/paper000/{tier}/{env}/{name}",
             "seeds: [1, 2, 3]", "set:", f"  population: {population_file}",
             f"  train.stable_steps: {steps}",
             f"  learner.params.target_update_interval: {REDUCED['target_update_interval']}"]
    if private:
        lines.append(f"  selective.calibrate_steps: {REDUCED['calibrate_steps']}")
        lines.append("  privacy.noise: seeded")
    for k, v in (extra_set or {}).items():
        lines.append(f"  {k}: {v}")
    if grid:
        lines.append("grid:")
        for k, v in grid.items():
            lines.append(f"  {k}: {v}")
    write(f"sweeps/{tier}/{file or name}.yaml", "\n".join(lines) + "\n")


# The expert-level DP-SGD baseline at Table 3's noise multiplier s, trained until its budget is
# spent, on the m = 3000 populations: the cells whose budget lasts few enough steps for a cell of
# 3 seeds to cost under about 2 CPU-hours (steps from the pld accountant at q = b / 3000 and
# delta = 1/(10 m); about 0.6 ms a step measured on the m = 3000 cells): LunarLander BCQ eps = 10
# (s = 20, b = 128: 9.6e5 steps), CQL eps = 7.5 (s = 20, b = 64: 2.4e6), HIV CQL and BCQ eps = 7.5
# (s = 20, b = 64: 2.4e6). LunarLander CQL eps = 10 (s = 40: 1.5e7 steps), BCQ eps = 7.5 (s = 50:
# 3.8e6) and HIV eps = 10 (3.9e6) would cost 3 to 8 CPU-hours a cell and are not run.
UNTIL_BUDGET = (("lunar_lander", "bcq", 10), ("lunar_lander", "cql", 7.5), ("hiv", "cql", 7.5),
                ("hiv", "bcq", 7.5))


def until_budget_sweep(env, dname):
    """sweeps/m3000_budget/<dname>.yaml: the DP-SGD cell at Table 3's s until the budget is
    spent, on the m = 3000 population, seeded noise, 3 seeds."""
    lines = [f"# {dname} at m = 3000 (docs/paper000.md): Table 3's noise multiplier, trained until "
             "the budget is spent,\n# on the m = 3000 population of reduced experts, seeded noise "
             "(reproducible, not formal), 3 seeds.\n# Written by tools/gen_paper000_configs.py.",
             f"base: ../../{dname}.yaml", f"out: runs/paper000/m3000_budget/{env}/{dname}",
             "seeds: [1, 2, 3]", "set:", f"  population: {env}_population_m3000.yaml",
             "  privacy.noise: seeded"]
    write(f"sweeps/m3000_budget/{dname}.yaml", "\n".join(lines) + "\n")


# Figure 4 at Table 3's noise multiplier: Acrobot CQL eps = 10 on uniformly random subsets of m of
# the 3000 reduced experts, the paper's method (p = 0: D_stable only, the full cell's 1e5 steps) and
# the DP-SGD baseline trained until its budget is spent at s = 20 (pld at q = 128 / m, delta =
# 1/(10 m): about 1.2e5, 4.5e5 and 9.6e5 noisy steps at m = 1000, 2000, 3000), 5 seeds each.
FIG4_SEEDS = "[1, 2, 3, 4, 5]"


def fig4_budget_sweeps():
    """sweeps/fig4_budget/acrobot_fig4_m{,_dpsgd}.yaml."""
    for name, cell_name, what in (
            ("fig4_m", "acrobot_cql_eps10", "the paper's method (p = 0, training on D_stable "
                                            "only for the cell's 1e5 steps)"),
            ("fig4_m_dpsgd", "acrobot_cql_eps10_dpsgd",
             "expert-level DP-SGD at Table 3's noise multiplier,\n# trained until the budget is "
             "spent, seeded noise (reproducible, not formal)")):
        lines = [f"# Figure 4 at Table 3's scale (docs/paper000.md): {cell_name} on uniformly "
                 f"random subsets of m of the\n# 3000 reduced experts, {what}, 5 seeds.\n"
                 "# Written by tools/gen_paper000_configs.py.",
                 f"base: ../../{cell_name}.yaml", f"out: runs/paper000/fig4_budget/acrobot/{name}",
                 f"seeds: {FIG4_SEEDS}", "set:", "  population: acrobot_population.yaml"]
        if name.endswith("_dpsgd"):
            lines.append("  privacy.noise: seeded")
        lines += ["grid:", "  experts: [1000, 2000, 3000]"]
        write(f"sweeps/fig4_budget/acrobot_{name}.yaml", "\n".join(lines) + "\n")


def main():
    fig4_budget_sweeps()
    for env, algo, eps in UNTIL_BUDGET:
        until_budget_sweep(env, f"{env}_{algo}_eps{str(eps).replace('.', '_')}_dpsgd")
    for env in ENVS:
        write(f"{env}_population_full.yaml", population(env, True))
        write(f"{env}_population.yaml", population(env, False))
        if env in M3000:
            write(f"{env}_population_m3000.yaml", population(env, False, m3000=True))
        for algo in ("cql", "bcq"):
            for eps in (5, 7.5, 10):
                if eps not in TABLE3[(env, algo)]:
                    continue
                name, txt = cell(env, algo, eps, "selective")
                write(f"{name}.yaml", txt)
                reduced_sweep(env, name, name, TABLE3[(env, algo)][eps][2] > 0)
                if env in M3000:
                    reduced_sweep(env, name, name, TABLE3[(env, algo)][eps][2] > 0,
                                  tier="m3000")
                write(f"sweeps/{name}.yaml",
                      f"# {name}: 3 seeds at full scale.\nbase: ../{name}.yaml\n"
                      f"out: runs/paper000/{env}/{name}\nseeds: [1, 2, 3]\n")
                if eps > 5 or env == "acrobot":
                    dname, dtxt = cell(env, algo, eps, "dp_sgd")
                    write(f"{dname}.yaml", dtxt)
                    reduced_sweep(env, dname, dname, True)
                    if env in M3000:
                        reduced_sweep(env, dname, dname, True, tier="m3000")
                    write(f"sweeps/{dname}.yaml",
                          f"# {dname}: 3 seeds at full scale.\nbase: ../{dname}.yaml\n"
                          f"out: runs/paper000/{env}/{dname}\nseeds: [1, 2, 3]\n")
            name, txt = nonprivate(env, algo)
            write(f"{name}.yaml", txt)
            reduced_sweep(env, name, name, False)
            if env in M3000:
                reduced_sweep(env, name, name, False, tier="m3000")
            write(f"sweeps/{name}.yaml",
                  f"# {name}: 3 seeds at full scale.\nbase: ../{name}.yaml\n"
                  f"out: runs/paper000/{env}/{name}\nseeds: [1, 2, 3]\n")
    # Table 2: the p ablation at eps = 10 (the eps split kept, spec item 12) and the eps
    # allocation at low eps (BCQ; p = 0.5 with eps1 = 0 wastes nothing: coins with an empty
    # stable set are skipped and only noisy steps are accounted)
    for env, algo, ps in (("cartpole", "cql", "[0.0, 0.8, 1.0]"),
                          ("cartpole", "bcq", "[0.0, 0.5, 1.0]"),
                          ("lunar_lander", "cql", "[0.0, 0.8, 1.0]"),
                          ("lunar_lander", "bcq", "[0.0, 0.5, 1.0]")):
        reduced_sweep(env, f"table2_{algo}_p", f"{env}_{algo}_eps10", True,
                      grid={"selective.p": ps}, file=f"{env}_table2_{algo}_p")
    for env in ("cartpole", "acrobot"):
        reduced_sweep(env, "table2_bcq_allocation", f"{env}_bcq_eps7_5", True,
                      extra_set={"selective.p": 0.5},
                      grid={"privacy.epsilon": "[2.5, 5.0]",
                            "privacy.epsilon1_fraction": "[0.75, 0.0]"},
                      file=f"{env}_table2_bcq_allocation")
    # the paper's accounting (every iteration at q = p b/m) against the sound default, on the
    # CartPole eps = 10 cells: more noisy steps for the same reported eps
    for algo in ("cql", "bcq"):
        reduced_sweep("cartpole", f"{algo}_eps10_paper_accounting", f"cartpole_{algo}_eps10", True,
                      extra_set={"selective.accounting": "paper"},
                      file=f"cartpole_{algo}_eps10_paper_accounting")
    # Figure 4: Acrobot, CQL, eps = 10 on uniformly random subsets of m experts (delta = 1/m,
    # T = 25), the paper's method (p = 0: D_stable only) and the DP-SGD baseline
    for name, cell_name, private in (("fig4_m", "acrobot_cql_eps10", False),
                                     ("fig4_m_dpsgd", "acrobot_cql_eps10_dpsgd", True)):
        reduced_sweep("acrobot", name, cell_name, private, grid={"experts": "[1000, 2000, 3000]"},
                      file=f"acrobot_{name}")


if __name__ == "__main__":
    main()
