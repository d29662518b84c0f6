// Gaussian releases whose noise is drawn ahead, on a worker thread, while the caller computes the
// next value to release.
//
// The noise of a release does not depend on the data: add_gaussian_release(x, sd, grid, noise)
// adds to snap(x) (grid > 0; x itself when grid = 0) the vector it would add to zeros, and draws
// exactly the same random words whatever x is. So the noise of release r + 1 can be drawn while
// the gradient of release r + 1 is computed: with threads = 1 a worker draws it right after
// release r takes its own; with threads = 0 each release is add_gaussian_release itself, on the
// values, in one pass (no vector of zeros). The
// source is read in the same order either way, so the released values, bit for bit, and the
// stream do not depend on the thread count (tested), and neither does the guarantee: every
// release is add_gaussian_release at the same sd and grid (secure_release.hpp states it; a
// secure release is within the table sampler's statistical distance as there).
//
// The source must be read by nobody else while this object lives (the worker reads it between
// releases). Noise drawn ahead and never released is discarded: it was independent of everything
// released, so discarding it changes nothing that is published.
//
// Checkpoints: sync_state writes the source's position as of the first release not yet made (not
// the worker's position after drawing ahead), so a resumed seeded run draws what the
// uninterrupted one would, with either thread count; the bytes are those of
// NoiseSource::sync_state. A load replaces the source's position and discards the noise drawn
// ahead.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/thread_pool.hpp"
#include "privacy/noise_source.hpp"

namespace dprl {
class StateIo;
}

namespace dprl::privacy {

// Noise threads to use when a run asks for `auto` (-1): 1 when the process may use more CPUs (its
// affinity mask; `taskset -c 0` leaves one) than it runs experiments at once (concurrent_runs():
// a sweep with --jobs equal to the CPUs gets no helpers).
int default_noise_threads();

// The helper of a DP-SGD run for `threads` resolved noise threads: one HelperThread for 1, none
// for 0 (ParamError otherwise).
std::unique_ptr<HelperThread> make_noise_helper(int threads);

class PrefetchedGaussianRelease {
 public:
  // Releases of n values at standard deviation sd on the grid (both from gaussian_release_plan;
  // grid > 0 exactly when noise is secure), drawing from noise; threads is 0 or 1 (ParamError
  // otherwise, and for n = 0, sd <= 0 or a grid that does not match the source).
  PrefetchedGaussianRelease(NoiseSource& noise, std::size_t n, double sd, double grid, int threads);
  // The same drawing ahead on the caller's helper (none: at each release), which may run other
  // jobs between two releases (the learners' split double product); it must outlive this object.
  PrefetchedGaussianRelease(NoiseSource& noise, std::size_t n, double sd, double grid,
                            HelperThread* helper);
  ~PrefetchedGaussianRelease();
  PrefetchedGaussianRelease(const PrefetchedGaussianRelease&) = delete;
  PrefetchedGaussianRelease& operator=(const PrefetchedGaussianRelease&) = delete;

  // values += noise, as add_gaussian_release(values, sd, grid, noise) would (values.size() == n;
  // with grid > 0 the values are checked finite, ParamError, and snapped first). An error the
  // worker met drawing (a scripted source running out) is thrown here.
  void operator()(std::span<double> values);
  // The source's position before any noise drawn ahead (see above), saved or loaded.
  void sync_state(StateIo& io);

  std::size_t size() const { return n_; }
  int threads() const { return helper_ ? 1 : 0; }

 private:
  void release_checked(std::span<double> values);  // the release on values checked finite
  void draw_into(std::vector<double>& buf);        // zeros, then the release's noise
  void start_ahead();                              // snapshot the position, post the next draw
  void wait_ahead();                               // until the helper's jobs are done

  NoiseSource& noise_;
  std::size_t n_;
  double sd_, grid_;
  std::unique_ptr<HelperThread> own_;  // the helper made for `threads = 1`
  HelperThread* helper_ = nullptr;
  std::vector<double> ready_, ahead_;  // this release's noise; the next one's (the helper's)
  std::string position_;               // sync_state bytes of the source before ahead_'s draw
  std::exception_ptr error_;           // of the last draw ahead (set on the helper)
};

}  // namespace dprl::privacy
