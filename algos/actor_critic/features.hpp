// Feature maps for linear function approximation: state features x_s and state-action features
// psi(s, a), as sparse (index, value) lists so one-hot maps cost O(1) per step.
//
// one_hot (tabular envs): x_s = e_s in R^S, psi(s, a) = e_{s * A + a} in R^{S A}. The actor-critic
// of paper 001 uses these on MDP-100 and Taxi. Other maps implement FeatureMap; make_feature_map
// builds them by name.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/space.hpp"

namespace dprl::algos {

struct SparseFeatures {
  std::vector<std::pair<int, double>> entries;  // (index, value), indices distinct
  double dot(std::span<const double> w) const {
    double s = 0;
    for (const auto& [i, v] : entries) s += v * w[i];
    return s;
  }
};

class FeatureMap {
 public:
  virtual ~FeatureMap() = default;
  virtual std::string name() const = 0;
  virtual int state_dim() const = 0;
  virtual int state_action_dim() const = 0;
  virtual void state(std::span<const float> obs, SparseFeatures& out) const = 0;
  virtual void state_action(std::span<const float> obs, int action, SparseFeatures& out) const = 0;
};

class OneHotFeatures final : public FeatureMap {
 public:
  OneHotFeatures(int num_states, int num_actions) : s_(num_states), a_(num_actions) {}
  std::string name() const override { return "one_hot"; }
  int state_dim() const override { return s_; }
  int state_action_dim() const override { return s_ * a_; }
  void state(std::span<const float> obs, SparseFeatures& out) const override;
  void state_action(std::span<const float> obs, int action, SparseFeatures& out) const override;

 private:
  int s_, a_;
};

// Builds a feature map by name for the given spaces; throws ParamError when the map does not fit
// (one_hot needs a Discrete observation space).
std::unique_ptr<FeatureMap> make_feature_map(const std::string& name, const Space& observation,
                                             const Space& action);

}  // namespace dprl::algos
