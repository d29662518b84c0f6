#include "privacy/prefetched_release.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/error.hpp"
#include "engine/state_io.hpp"
#include "privacy/secure_release.hpp"
#include "privacy/snapped_values.hpp"

namespace dprl::privacy {

int default_noise_threads() { return hardware_threads() > concurrent_runs() ? 1 : 0; }

PrefetchedGaussianRelease::PrefetchedGaussianRelease(NoiseSource& noise, std::size_t n, double sd,
                                                     double grid, HelperThread* helper)
    : noise_(noise), n_(n), sd_(sd), grid_(grid), helper_(helper) {
  if (n == 0) throw ParamError("prefetched Gaussian release: no values to release");
  if (!(sd > 0.0) || !std::isfinite(sd))
    throw ParamError(fmt::format(
        "prefetched Gaussian release: the standard deviation {} must be > 0 and finite", sd));
  if (!(grid >= 0.0) || !std::isfinite(grid) || noise.secure() != (grid > 0.0))
    throw ParamError(fmt::format(
        "prefetched Gaussian release: grid {} does not fit a {} source (a secure source needs "
        "the plan's grid > 0, another grid 0)",
        grid, noise.secure() ? "secure" : "non-secure"));
  if (helper_) {
    ready_.resize(n);
    ahead_.resize(n);
    start_ahead();
  }
}

std::unique_ptr<HelperThread> make_noise_helper(int threads) {
  if (threads != 0 && threads != 1)
    throw ParamError(fmt::format("noise threads = {} must be 0 or 1", threads));
  return threads == 1 ? std::make_unique<HelperThread>() : nullptr;
}

PrefetchedGaussianRelease::PrefetchedGaussianRelease(NoiseSource& noise, std::size_t n, double sd,
                                                     double grid, int threads)
    : PrefetchedGaussianRelease(noise, n, sd, grid, static_cast<HelperThread*>(nullptr)) {
  own_ = make_noise_helper(threads);
  helper_ = own_.get();
  if (helper_) {
    ready_.resize(n);
    ahead_.resize(n);
    start_ahead();
  }
}

PrefetchedGaussianRelease::~PrefetchedGaussianRelease() {
  // the draw ahead refers to this object: let it finish (it catches its own errors)
  if (!helper_) return;
  try {
    helper_->wait();
  } catch (...) {
  }
}

void PrefetchedGaussianRelease::release_checked(std::span<double> values) {
  // add_gaussian_release past its finiteness check, which the caller has made
  if (grid_ > 0.0)
    secure_release_on_grid(values, SecureNoise::kGaussian, sd_, grid_, noise_);
  else
    noise_.add_gaussian(values, sd_);
}

void PrefetchedGaussianRelease::draw_into(std::vector<double>& buf) {
  // the noise add_gaussian_release adds to any vector: what it adds to zeros (snap(0) = 0), which
  // need no finiteness check
  std::fill(buf.begin(), buf.end(), 0.0);
  release_checked(buf);
}

void PrefetchedGaussianRelease::start_ahead() {
  // the helper has no draw of ours running: the source's position now is the one before
  // ahead_'s noise
  StateIo save;
  noise_.sync_state(save);
  position_ = save.take();
  helper_->post([this] {
    try {
      draw_into(ahead_);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

void PrefetchedGaussianRelease::wait_ahead() { helper_->wait(); }

void PrefetchedGaussianRelease::operator()(std::span<double> values) {
  if (values.size() != n_)
    throw ParamError(
        fmt::format("prefetched Gaussian release: {} values given, {} planned", values.size(), n_));
  if (grid_ > 0.0) check_finite_release(values);
  if (helper_) {
    wait_ahead();
    if (error_) {
      const std::exception_ptr err = error_;
      error_ = nullptr;
      start_ahead();  // the source is where the failed draw left it; the next call tries again
      std::rethrow_exception(err);
    }
    ready_.swap(ahead_);
    start_ahead();
  } else {
    // nothing drawn ahead: the release itself, in one pass (the same bits as adding the release
    // of zeros, since snap(0) + y = y for the grid multiple y, and the same draws)
    return release_checked(values);
  }
  double* v = values.data();
  const double* e = ready_.data();
  if (grid_ > 0.0) {
    // snapped as the table sampler's release snaps, then the noise (a multiple of g)
    snap_and_add(values.first(n_), e, grid_);
  } else {
    for (std::size_t i = 0; i < n_; ++i) v[i] += e[i];
  }
}

void PrefetchedGaussianRelease::sync_state(StateIo& io) {
  if (!helper_) return noise_.sync_state(io);
  if (!io.loading()) {
    io.raw(position_.data(), position_.size());
    return;
  }
  // the noise drawn ahead came from the old position: discard it and draw from the loaded one
  wait_ahead();
  error_ = nullptr;
  noise_.sync_state(io);
  start_ahead();
}

}  // namespace dprl::privacy
