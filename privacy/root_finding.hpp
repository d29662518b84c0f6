// Root finding for the calibrations of privacy/: the boundary of a monotone test, by bisection,
// optionally sped up by Illinois false-position steps.
//
// Used by analytic_gaussian_sigma and gaussian_epsilon (gaussian_mechanism.hpp),
// advanced_composition_inverse (composition.hpp), calibrate_noise_multiplier and
// steps_within_budget (calibration.hpp), Ledger::affordable_count (ledger.hpp), beta_quantile
// (audit.hpp), epsilon_lower_one_run (one_run_audit.hpp), paper_matched's tau
// (dirichlet_teacher.hpp) and the private LSVI-UCB calibration (algos/lsvi/lsvi_ucb_private.hpp).
// Not here: zcdp_to_epsilon_cks (composition.hpp) minimises a unimodal function by golden-section
// search, which is not a boundary search.
//
// find_boundary(f, lo, hi, options): f is non-increasing across a sign change on [lo, hi]:
// f(lo) > 0 >= f(hi) (checked; ParamError otherwise). A NaN value of f counts as > 0 ("not
// there yet"), so a failed evaluation can never end the search on the wrong side. Each step
// evaluates f at the bracket's midpoint, or, with options.illinois, at the false-position point
// of the two ends (the end that stayed twice has its value halved: the Illinois rule), keeping a
// bisection step whenever two steps fail to halve the bracket; either way f(lo) > 0 >= f(hi)
// stays true. It stops when hi - lo <= max(abs_tol, rel_tol |hi|) or after max_steps steps and
// returns the final bracket: hi is then the smallest point known to satisfy f <= 0, lo the
// largest known to fail it. With options.integers, midpoints are rounded down to integers (lo
// and hi must be integers) and the search stops at hi - lo <= 1.
// For a monotone yes/no test pass f = [](x) { return test(x) ? -1.0 : 1.0; } without Illinois
// (plain bisection).
// bracket_geometric(test, start, min, max): for a test that is false below a boundary and true
// above it, doubles from start until the test holds (up to max) or halves until it fails (down to
// min), and returns [x / 2, x] with test false at the low end and true at the high end; {0, x}
// when the test still holds at the last point >= min (x is that point); nullopt when it fails at
// every point up to max.
#pragma once

#include <functional>
#include <optional>

namespace dprl::privacy {

struct Bracket {
  double lo, hi;
};

struct RootOptions {
  double rel_tol = 1e-12;
  double abs_tol = 0.0;
  bool illinois = false;  // false-position steps on f's values (f must be a residual, not +-1)
  bool integers = false;  // search over integers (counts)
  int max_steps = 2000;
};

Bracket find_boundary(const std::function<double(double)>& f, double lo, double hi,
                      const RootOptions& options = {});

std::optional<Bracket> bracket_geometric(const std::function<bool(double)>& test, double start,
                                         double min, double max);

}  // namespace dprl::privacy
