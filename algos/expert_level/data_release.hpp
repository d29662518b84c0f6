// DataRelease (Algorithms 1 and 2) of Sharma, Vinod, Thakurta, Agarwal, Balle, Dann, Raghuveer,
// "Preserving Expert-Level Privacy in Offline Reinforcement Learning" (TMLR): publish the
// trajectory prefixes that many experts would have produced.
//
// Steps (Alg. 2; pieces from privacy/sparse_vector.hpp):
//   eps' = eps1 / sqrt(32 T ln(2/delta1)), delta' = delta1 / (2 T L), c_min = e^eps'/(e^eps' - 1),
//   theta = c_min / p_min. Draw T trajectories uniformly without replacement (a uniform shuffle;
//   with N trajectories per expert this is "expert uniformly, then one of its trajectories").
//   For each: a FRESH noisy threshold theta_hat = theta + (4/eps') ln(1/delta') + Lap(2/eps'),
//   then PrefixQuery (Alg. 1) for i = 1..|tau|: count(tau_{1:i}) + Lap(4/eps') > theta_hat, fresh
//   noise per query. The stable prefix is tau_{1:k} with k = the number of queries answered
//   "above" before the first "below" (k = |tau| when all are above).
//   The T passes are independent given their own noise, so they run in lockstep: step j of every
//   still-stable trajectory is one batch of expert evaluations (the same output law as running
//   them one after another; no state past a trajectory's first "below" is evaluated).
//   L is the public episode cap (a data-independent bound on |tau|; spec item 6), and a longer
//   trajectory is a DataError.
// Source of the examined trajectories (`source`):
//   policies (default)  T rollouts drawn inside the mechanism: each picks an expert uniformly
//                       (independently, with replacement) and runs its floored policy once in the
//                       default env, the reset seed, the floor's coins and the expert choice all
//                       from the secret noise source (draw_expert_rollouts,
//                       expert_rollouts.hpp). This is the model of the proof (Thm. 5.3: A1
//                       samples an expert and a trajectory of its policy; Lemma 5.1 bounds the
//                       prefix probability through the policies), so the record is formal.
//   recorded            the paper's Alg. 2 as written: T of the fixed recorded demonstrations
//                       (a secret uniform shuffle). A released prefix then holds that recorded
//                       episode's exact states, which no other expert's data hold, so the bound
//                       does not hold under the data relation "one expert with its recorded
//                       trajectories": the record says formal: false and why.
// Outputs: D_stable = the stable prefixes (k >= 1) in examination order; stable_release() gives
// every prefix the user_id of its position in D_stable and no seed, and the dataset metadata
// only the release's own keys: nothing published names the expert, the recorded episode, its
// reset seed or the collection seed. D_unst (recorded source) = every trajectory minus its
// stable prefix (the tail tau_{k+1:|tau|}, or the whole trajectory when k = 0 or it was not
// examined), with its expert's user_id (private input of the DP-SGD steps, never stored); with
// the policies source D_unst is all of the recorded data. A cut prefix ends with a transition
// that is neither terminated nor truncated (Q-learning bootstraps from s_{k+1}); a tail keeps the
// original flags.
//
// Guarantee (policies source, OS-entropy noise): D_stable (and anything computed from it alone)
// is (eps1, delta1)-DP at the EXPERT level: neighbouring expert sets differ in one expert's
// policy (add/remove, |Pi Delta Pi'| = 1; Def. 3.3), the examined trajectories being rollouts
// drawn inside the mechanism with secret randomness. The count has sensitivity 1 under that
// relation (Eq. 12). One trajectory is (2 eps', delta1/(2T))-DP (Thm. 5.3); T of them compose by
// advanced composition with slack delta1/2 (Thm. 5.5). Two figures are reported: the paper's closed
// form (Dwork and Roth Cor. 3.21: eps1 by construction, stated only for eps < 1) and the exact
// Thm. 3.20 value for the same eps' (valid for every eps); the guarantee record uses the exact
// value, which must not exceed eps1 (ParamError otherwise). With calibration "exact", eps' is the
// largest value whose exact composition is eps1 (more stable data; a documented deviation).
// Assumptions the guarantee needs (checked where possible): every expert, including a
// hypothetical neighbour, has pi(a|s) >= p_min (the floor of the collection: p_min must equal
// it); the trajectories are genuine rollouts of the floored experts in the default env; every
// expert holds the same number of trajectories (recorded source; DataError otherwise: the uniform
// shuffle would not draw experts uniformly); the noise, the shuffle and the rollouts' randomness
// are secret (OS entropy; seeded noise is reproducible and not formal). D_unst is NOT private:
// it is the raw data minus the release, for the DP-SGD steps only.
//
// | param        | range            | meaning                                            |
// |--------------|------------------|----------------------------------------------------|
// | epsilon1     | (0, inf)         | expert-level epsilon of the release                |
// | delta1       | (0, 1)           | delta of the release                               |
// | trajectories | [1, episodes]    | T, trajectories examined (the unstable cutoff)     |
// | max_length   | >= every |tau|   | L, the public episode cap                          |
// | p_min        | (0, 1/|A|]       | the experts' action floor                          |
// | calibration  | paper | exact    | eps' from the paper's formula or the exact inverse |
// | source       | policies|recorded| fresh secret rollouts (formal) or the recorded data |
#pragma once

#include <cstdint>
#include <string>
#include <span>
#include <vector>

#include "algos/expert_level/expert_queries.hpp"
#include "engine/data/dataset.hpp"
#include "engine/params.hpp"
#include "engine/run_dir.hpp"
#include "privacy/noise_source.hpp"
#include "privacy/sparse_vector.hpp"

namespace dprl::algos {

struct DataReleaseParams {
  double epsilon1 = 1.0;
  double delta1 = 1e-5;
  std::int64_t trajectories = 25;
  std::int64_t max_length = 200;
  double p_min = 0.02;
  std::string calibration = "paper";
  std::string source = "policies";

  template <class V>
  void visit(V& v) {
    v("epsilon1", epsilon1, Range::positive(), "expert-level epsilon of the release");
    v("delta1", delta1, Range::open(0, 1), "delta of the release");
    v("trajectories", trajectories, Range::closed(1, 1e12), "T, trajectories examined");
    v("max_length", max_length, Range::closed(1, 1e9), "L, the public episode cap");
    v("p_min", p_min, Range::left_open(0, 0.5), "the experts' action floor");
    v("calibration", calibration, Choices{{"paper", "exact"}},
      "eps' by the paper's closed form or the exact advanced-composition inverse");
    v("source", source, Choices{{"policies", "recorded"}},
      "examined trajectories: fresh rollouts of the experts' policies with secret randomness "
      "(formal) or the fixed recorded demonstrations (not formal)");
  }
};

// The release's constants (Alg. 2 lines 2-4) and the two epsilon figures.
struct ReleaseConstants {
  privacy::SvtPieces svt;
  double epsilon_closed_form = 0;  // eps of Cor. 3.21 for this eps': 2 eps' sqrt(8 T ln(2/delta1))
  double epsilon_exact = 0;  // Thm. 3.20 over T passes of (2 eps', delta1/(2T)), slack delta1/2
  double expected_threshold = 0;  // E[theta_hat] = theta + shift
};
ReleaseConstants release_constants(const DataReleaseParams& p);

// k*: the prefix length at which m (1 - (|A|-1) p_min)^k = E[theta_hat], the longest prefix
// that can be stable even when every expert agrees (negative: not even one step).
double max_stable_length(const ReleaseConstants& c, std::int64_t m, int num_actions, double p_min);

struct DataReleaseResult {
  ReleaseConstants constants;
  std::vector<std::size_t> examined;        // episode indices, in the order examined
  std::vector<std::int64_t> stable_length;  // per episode: its stable prefix length (0: none)
  std::int64_t stable_prefixes = 0;         // examined trajectories with k >= 1
  std::int64_t stable_transitions = 0;      // sum of k
  std::int64_t queries = 0;                 // prefix queries answered
};

// Runs Alg. 2 over data (user_id = expert index into `experts`, 0..m-1) with noise and the shuffle
// from `noise`. Validation first: ParamError / DataError naming the parameter or the episode.
DataReleaseResult data_release(const Dataset& data, ExpertPanel& experts,
                               const DataReleaseParams& p, privacy::NoiseSource& noise);

// The policies source: examines every episode of `rollouts` (T of them, drawn by
// draw_expert_rollouts from the secret source) in order; user_id = the expert that produced it.
DataReleaseResult data_release_rollouts(const Dataset& rollouts, ExpertPanel& experts,
                                        const DataReleaseParams& p, privacy::NoiseSource& noise);

// A non-private diagnostic, never part of a release (it reads the trajectories and the experts
// without noise): the exact count (Eq. 12) of every prefix of the given episodes up to max_length
// steps, as the release computes it. counts[c][j] is the count of episode episodes[c]'s prefix of
// j + 1 steps (the inner vector stops at the episode's length). ParamError as PrefixCounter.
std::vector<std::vector<double>> exact_prefix_counts(const Dataset& data,
                                                     std::span<const std::size_t> episodes,
                                                     ExpertPanel& experts, double p_min,
                                                     int max_length);

// Uniform integer in [0, n) from the noise source's 64-bit draws (unbiased).
std::uint64_t uniform_below(privacy::NoiseSource& noise, std::uint64_t n);

// The published D_stable: the stable prefixes of the examined episodes of `data`, in examination
// order, each with user_id = its position in D_stable and no seed; metadata holds only
// privacy_unit and release_part (see above).
Dataset stable_release(const Dataset& data, const std::vector<std::size_t>& examined,
                       const std::vector<std::int64_t>& stable_length);

// D_stable and D_unst from the stable prefix lengths (see above); both keep each episode's
// user_id and seed (private: only stable_release() is published).
struct ReleasedData {
  Dataset stable;
  Dataset unstable;
};
ReleasedData split_release(const Dataset& data, const std::vector<std::int64_t>& stable_length);

// The guarantee record of the release (summary.json "privacy" of the release stage).
PrivacyReport release_report(const DataReleaseParams& p, const DataReleaseResult& r,
                             const std::string& noise_source, bool seeded);

}  // namespace dprl::algos
