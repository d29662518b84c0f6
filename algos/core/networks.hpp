// Network sizes and initialisation shared by every learner that trains MLPs (DQN, SAC,
// DDPG, the offline learners, PriMORL, the expert-level PPO layers, the population CLI):
// hidden widths parsed from a parameter, the layer widths of an MLP, and the seeded
// Kaiming-uniform initialisation of a learner's networks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/nn/nn_mlp.hpp"

namespace dprl::algos {

// "64,64" -> {64, 64}; ParamError naming what on bad text.
std::vector<int> parse_hidden_sizes(const std::string& text, const char* what);
// The widths of an MLP: in, hidden..., out.
std::vector<int> layer_sizes(int in, const std::vector<int>& hidden, int out);
// Kaiming-uniform initialisation of nets[i] from derive_seed(seed, Domain::kInit, i).
void init_networks(std::uint64_t seed, std::initializer_list<nn::Mlp*> nets);

}  // namespace dprl::algos
