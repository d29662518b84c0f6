"""dprl from Python: the engine's environments, accountants, data sets and runs.

    import dprl
    env = dprl.make("CartPole-v1")                  # Gymnasium's API
    envs = dprl.make_vec("CartPole-v1", 64)          # stepped in C++, next-step auto-reset
    dprl.privacy.epsilon(noise_multiplier=1.0, sampling_rate=0.01, steps=1000, delta=1e-5)
    data = dprl.data.load("data/cartpole")           # Minari folder or D4RL file
    summary = dprl.run("configs/quickstart.yaml", seed=1)

See docs/python.md. Errors are dprl.Error subclasses carrying the CLI's one-line message:
ValueError for bad input, and also OSError for files (DataError, ModelLoadError).
"""
import sys as _sys

from . import _core
from ._core import (ConfigError, DataError, Env, Error, InvalidAction, ModelLoadError,
                    BudgetExceeded, ParamError, UnknownName, VecEnv, __version__, env_ids,
                    make, make_vec, run, sweep)
from ._core import privacy, data
from . import spaces

# `import dprl.privacy` and `from dprl.data import load` work like for any subpackage
_sys.modules[__name__ + ".privacy"] = privacy
_sys.modules[__name__ + ".data"] = data

__all__ = ["make", "make_vec", "env_ids", "run", "sweep", "privacy", "data", "spaces", "Env",
           "VecEnv", "Error", "ConfigError", "ParamError", "UnknownName", "DataError",
           "InvalidAction", "BudgetExceeded", "ModelLoadError"]
