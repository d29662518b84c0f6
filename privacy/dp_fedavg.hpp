// Trajectory-level DP-FedAvg for model ensembles: clipping each client's ensemble update, the
// fixed-denominator average and the server noise (the release of one round).
//
// Sources: McMahan, Ramage, Talwar, Zhang 2018, "Learning Differentially Private Recurrent
// Language Models" (ICLR), Algorithm 1 (DP-FedAvg with the fixed denominator qW and noise
// N(0, (zS/qW)^2)); PriMORL ("Differentially Private Deep Model-Based Reinforcement Learning"),
// Algorithms 1-3 (clients are trajectories; ENSEMBLECLIP).
//
// One round: every client k of the Poisson sample U_t (each of the K units included
// independently with probability q) submits an update Delta_k of the whole ensemble
// (N members x stride floats). Clipping projects Delta_k onto the clip set:
//   flat       member i scaled by min(1, C_i / |Delta_{k,i}|_2),       C_i  = C / sqrt(N)
//   per_layer  block (i, l) scaled by min(1, C_il / |Delta_{k,i,l}|_2), C_il = C / sqrt(N L)
// (L = blocks per member; every trainable tensor must lie in one block), so |Delta_k|_2 <= C.
// The scale is (C_x / |Delta|) (1 - 1e-6), so float rounding cannot push a norm above C_x.
// The release is  sum_{k in U_t} Delta_k / (q K) + N(0, (z C' / (q K))^2 I)  on every parameter
// of every block (padding untouched); the denominator is the fixed expected sample size qK,
// never |U_t|, so adding or removing one unit changes the exact sum by at most C. The sum and the
// division are in double (the clipped float updates are exact in double); with at most K + 1
// clients the computed averages of two neighbours differ by at most C' / (q K), C' = C (1 + beta),
// beta = 2 (K + 1) gamma_(K + 2) (u = 2^-53; 2.2e-12 at K = 10^2, 2.2e-8 at K = 10^4), and the
// noise covers C' (sensitivity()).
//
// With a secure NoiseSource (os-entropy) the average is snapped to a power-of-two grid and gets
// exact discrete Gaussian noise on that grid, the scale inflated to cover the snapping
// (privacy/secure_release.hpp), so the released values are grid points and the floating-point
// attack of Mironov (2012) does not apply; with a seeded source (experiments) plain N(0, sd^2).
// Guarantee: one round is the Poisson-subsampled Gaussian mechanism with sampling rate q and
// noise multiplier z for L2 sensitivity C'/(qK) of the computed average; T rounds compose as
// self_composed(poisson_sampled(q, gaussian(z)), T) (privacy/dp_event.hpp), which the caller
// charges to its ledger before each release. Neighbouring relation: add/remove one unit (here one
// trajectory, the unit the caller samples). Requires: the sampling is truly Poisson and secret
// (drawn from the same NoiseSource as the noise), every client's update depends only on its own
// unit and on public state (the previous release), and the noise is secret.
// Validity (ParamError naming parameter and rule): clip_norm C > 0 finite; noise_multiplier
// z >= 0 finite (z = 0: no noise, no finite epsilon); sampling_rate q in (0, 1]; units K in
// [1, kMaxUnits]; q K >= 1; members N >= 1; blocks non-empty and inside the stride. A client update whose norm is
// NaN or infinite gets the clip factor 0 (the zero update, within C: sensitivity unchanged, the
// round goes on); only the unclipped no_clip variant (no guarantee) treats it as a DataError.
//
// | field            | meaning                                                    |
// |------------------|------------------------------------------------------------|
// | clip_norm        | C, bound on each client's whole-ensemble update (L2)       |
// | noise_multiplier | z; server noise std z C' / (q K), C' = C (1 + beta)         |
// | sampling_rate    | q, Poisson inclusion probability of each unit              |
// | units            | K, number of units the sample is drawn from                |
// | clipping         | flat or per_layer                                          |
// | clip             | false: no projection (the no-clip variant: no guarantee)   |
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dprl::privacy {

class NoiseSource;
class ReleaseTap;

struct EnsembleLayout {
  struct Block {
    std::size_t offset;  // relative to the member's start
    std::size_t size;
  };
  int members = 1;
  std::size_t stride = 0;     // floats per member
  std::vector<Block> blocks;  // the trainable tensors of one member
};

enum class EnsembleClipping { kFlat, kPerLayer };
// "flat" or "per_layer"; else ParamError naming what.
EnsembleClipping parse_ensemble_clipping(const std::string& name, const std::string& what);

struct DpFedAvgConfig {
  double clip_norm = 1.0;
  double noise_multiplier = 0.0;
  double sampling_rate = 0.01;
  std::int64_t units = 100;
  EnsembleClipping clipping = EnsembleClipping::kFlat;
  bool clip = true;
};

// The most units check_dp_fedavg accepts: the rounding allowance beta then stays below 1%.
constexpr std::int64_t kMaxUnits = 6000000;

// Validates layout and config (ParamError naming the parameter).
void check_dp_fedavg(const EnsembleLayout& layout, const DpFedAvgConfig& cfg);

// The threshold of one clipped group: C / sqrt(N) (flat) or C / sqrt(N L) (per layer).
double ensemble_clip_threshold(const EnsembleLayout& layout, const DpFedAvgConfig& cfg);

struct ClipResult {
  double norm = 0;          // L2 norm of delta before projection (over the blocks; 0 if dropped)
  bool clipped = false;     // some member (flat) or block (per layer) was scaled
  bool non_finite = false;  // delta held a NaN or infinite value (or its norm overflowed)
};
// Projects delta (members x stride floats) onto the clip set in place (nothing when cfg.clip is
// false: the norm is still measured). An update with a non-finite norm is set to zero (clip
// factor 0, non_finite = true) when clipping, and is a DataError without clipping.
ClipResult ensemble_clip(std::span<float> delta, const EnsembleLayout& layout,
                         const DpFedAvgConfig& cfg);

// Accumulates the clients of one round, then releases the noisy average.
class DpFedAvgRound {
 public:
  DpFedAvgRound(EnsembleLayout layout, DpFedAvgConfig cfg);
  const DpFedAvgConfig& config() const { return cfg_; }
  // Standard deviation of the server noise on each parameter: z C' / (q K).
  double noise_std() const;
  // beta above: the relative rounding allowance of the computed average (both neighbours).
  double accumulation_error() const;
  // C' / (q K): the L2 sensitivity of the computed average.
  double sensitivity() const;
  double denominator() const { return cfg_.sampling_rate * static_cast<double>(cfg_.units); }

  void begin();
  // Adds one client's (already clipped) update; clients are added in a fixed order.
  void add(std::span<const float> delta);
  int clients() const { return clients_; }
  // The number of noised parameters: every block of every member.
  std::size_t noised_values() const;
  // The standard deviation actually drawn: noise_std(), or with a secure source the scale
  // inflated to cover the snapping of noised_values() coordinates (secure_release.hpp).
  double released_noise_std(bool secure) const;
  // theta += sum / (q K) + noise (noise skipped when z = 0; noise must be non-null when z > 0).
  // A secure source gets the snapped release of secure_release.hpp on the average (all blocks of
  // all members as one vector of L2 sensitivity C' / (q K)); another source adds N(0, sd^2).
  void release(std::span<float> theta, NoiseSource* noise);
  // A white-box auditor around each noised release (privacy/release_tap.hpp; null: none): it
  // sees the average of every block of every member, in order, as one vector, with channel 0,
  // round = the releases so far, sd = noise_std() and sensitivity C' / (q K).
  void set_tap(ReleaseTap* tap) { tap_ = tap; }

 private:
  EnsembleLayout layout_;
  DpFedAvgConfig cfg_;
  std::vector<double> sum_;
  std::vector<double> scratch_;
  int clients_ = 0;
  ReleaseTap* tap_ = nullptr;
  std::int64_t releases_ = 0;
};

// The Poisson sample of one round: ascending indices in [0, units), each included independently
// with probability q, drawn by geometric gaps from the noise source's uniforms (about qK + 1
// draws instead of K).
std::vector<std::int64_t> poisson_sample(std::int64_t units, double q, NoiseSource& source);

}  // namespace dprl::privacy
