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
// The same, and the activations of one batch through those layers (batch x the sum of the
// widths, float32, with their pre-activations, errors and one more copy) must fit in this
// machine's memory: ParamError "<batch_what> = B x <what> '...': needs X GB ..." otherwise. A
// product of individually valid sizes is refused before anything is allocated.
std::vector<int> parse_hidden_sizes(const std::string& text, const char* what, double batch,
                                    const char* batch_what);
// The widths of an MLP: in, hidden..., out.
std::vector<int> layer_sizes(int in, const std::vector<int>& hidden, int out);
// Kaiming-uniform initialisation of nets[i] from derive_seed(seed, Domain::kInit, i).
void init_networks(std::uint64_t seed, std::initializer_list<nn::Mlp*> nets);

}  // namespace dprl::algos
