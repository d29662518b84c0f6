"""Observation and action spaces with Gymnasium's interface: Discrete, Box, MultiDiscrete.

Each has shape, dtype, sample(), contains() and seed(); Box has low and high, Discrete n.
Observations of a Box space are float32 (as the engine computes them), Discrete ones int64.
sample() draws from the space's own numpy Generator (seed() it for reproducible samples);
Box.sample() follows Gymnasium: uniform on bounded components, an exponential beyond a single
bound, a standard normal where both bounds are infinite.
"""
import numpy as np


class Space:
    def __init__(self, shape, dtype, seed=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.np_random = np.random.default_rng(seed)

    def seed(self, seed=None):
        self.np_random = np.random.default_rng(seed)
        return [seed]

    def __contains__(self, x):
        return self.contains(x)


class Discrete(Space):
    """The integers {0, ..., n - 1}."""

    def __init__(self, n, seed=None):
        super().__init__((), np.int64, seed)
        self.n = np.int64(n)
        self.start = np.int64(0)

    def sample(self):
        return np.int64(self.np_random.integers(self.n))

    def contains(self, x):
        if isinstance(x, (bool, np.bool_)):
            return False
        if isinstance(x, (int, np.integer)):
            v = int(x)
        elif isinstance(x, np.ndarray) and x.shape == () and np.issubdtype(x.dtype, np.integer):
            v = int(x)
        else:
            return False
        return 0 <= v < self.n

    def __repr__(self):
        return f"Discrete({self.n})"

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n


class Box(Space):
    """Real vectors between low and high (either may be infinite)."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        if shape is not None:
            low = np.broadcast_to(low, shape)
            high = np.broadcast_to(high, shape)
        super().__init__(low.shape, dtype, seed)
        self.low = low.astype(self.dtype)
        self.high = high.astype(self.dtype)

    def is_bounded(self, manner="both"):
        below = bool(np.all(np.isfinite(self.low)))
        above = bool(np.all(np.isfinite(self.high)))
        return {"both": below and above, "below": below, "above": above}[manner]

    def sample(self):
        low = self.low.astype(np.float64)
        high = self.high.astype(np.float64)
        out = np.empty(self.shape, dtype=np.float64)
        lo_ok, hi_ok = np.isfinite(low), np.isfinite(high)
        both, none = lo_ok & hi_ok, ~lo_ok & ~hi_ok
        only_lo, only_hi = lo_ok & ~hi_ok, ~lo_ok & hi_ok
        rng = self.np_random
        out[none] = rng.normal(size=none[none].shape)
        out[only_lo] = low[only_lo] + rng.exponential(size=only_lo[only_lo].shape)
        out[only_hi] = high[only_hi] - rng.exponential(size=only_hi[only_hi].shape)
        out[both] = rng.uniform(low[both], high[both], size=both[both].shape)
        return np.clip(out, low, high).astype(self.dtype)

    def contains(self, x):
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        if x.shape != self.shape or not np.can_cast(x.dtype, self.dtype):
            return False
        return bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self):
        lo, hi = self.low.min(initial=np.inf), self.high.max(initial=-np.inf)
        return f"Box({lo}, {hi}, {self.shape}, {self.dtype})"

    def __eq__(self, other):
        return (isinstance(other, Box) and self.shape == other.shape and
                np.array_equal(self.low, other.low) and np.array_equal(self.high, other.high))


class MultiDiscrete(Space):
    """A vector of Discrete values, component i in {0, ..., nvec[i] - 1}."""

    def __init__(self, nvec, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        super().__init__(self.nvec.shape, np.int64, seed)

    def sample(self):
        return self.np_random.integers(self.nvec).astype(np.int64)

    def contains(self, x):
        x = np.asarray(x)
        if x.shape != self.shape or not np.issubdtype(x.dtype, np.integer):
            return False
        return bool(np.all(x >= 0) and np.all(x < self.nvec))

    def __repr__(self):
        return f"MultiDiscrete({self.nvec})"


def batch_space(space, n):
    """The space of n stacked values of space (Gymnasium's batch_space for Box and Discrete)."""
    if isinstance(space, Discrete):
        return MultiDiscrete(np.full((n,), space.n, dtype=np.int64))
    return Box(np.broadcast_to(space.low, (n,) + space.shape),
               np.broadcast_to(space.high, (n,) + space.shape), dtype=space.dtype)
