#include "algos/core/networks.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "engine/error.hpp"
#include "engine/limits.hpp"
#include "engine/rng.hpp"

namespace dprl::algos {

std::vector<int> parse_hidden_sizes(const std::string& text, const char* what) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    char* end = nullptr;
    const long v = std::strtol(tok.c_str(), &end, 10);
    if (tok.empty() || *end != '\0' || v < 1 || v > 100000)
      throw ParamError(fmt::format("{}: '{}' is not a comma-separated list of widths", what, text));
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) throw ParamError(fmt::format("{}: needs at least one hidden width", what));
  double weights = 0;
  for (std::size_t i = 1; i < out.size(); ++i) weights += static_cast<double>(out[i - 1]) * out[i];
  if (weights > kMaxHiddenWeights)
    throw ParamError(fmt::format("{}: '{}' is {:g} weights between hidden layers; at most {:g}",
                                 what, text, weights, kMaxHiddenWeights));
  return out;
}

std::vector<int> parse_hidden_sizes(const std::string& text, const char* what, double batch,
                                    const char* batch_what) {
  std::vector<int> hidden = parse_hidden_sizes(text, what);
  double width = 0;
  for (int h : hidden) width += h;
  constexpr double kCopies = 4;  // activation, pre-activation, error, a scratch copy
  check_memory(fmt::format("{} = {:g} x {} '{}'", batch_what, batch, what, text),
               batch * width * kCopies * sizeof(float));
  return hidden;
}

std::vector<int> layer_sizes(int in, const std::vector<int>& hidden, int out) {
  std::vector<int> sizes{in};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(out);
  return sizes;
}

void init_networks(std::uint64_t seed, std::initializer_list<nn::Mlp*> nets) {
  std::uint64_t i = 0;
  for (nn::Mlp* net : nets) {
    Rng r(derive_seed(seed, Domain::kInit, i++));
    nn::init_kaiming_uniform(net->shape(), net->data(), r);
  }
}

}  // namespace dprl::algos
