// The privacy guarantee of DP-SGD from its parameters: 1000 steps of the Poisson-subsampled
// Gaussian mechanism (sampling rate 0.01, noise multiplier 1), by PLD and by RDP: epsilon at
// delta 1e-5, and back, delta at that epsilon.
#include <cmath>
#include <cstdio>
#include <dprl/privacy/accountant.hpp>
#include <dprl/privacy/dp_event.hpp>

int main() {
  namespace pv = dprl::privacy;
  const pv::DpEvent run =
      pv::dpsgd_event({.noise_multiplier = 1.0, .sampling_rate = 0.01, .steps = 1000});
  auto pld = pv::make_accountant("pld");
  pld->compose(run);
  auto rdp = pv::make_accountant("rdp");
  rdp->compose(run);
  const double eps_pld = pld->epsilon(1e-5), eps_rdp = rdp->epsilon(1e-5);
  const double delta_pld = pld->delta(eps_pld);
  std::printf("accountant: epsilon at delta 1e-5: PLD %.6f, RDP %.6f; PLD delta at %.6f: %.6g\n",
              eps_pld, eps_rdp, eps_pld, delta_pld);
  // dp_accounting 0.6.0 gives 1.8282436 (PLD) and 2.1013665 (RDP) for the same event
  const bool published =
      std::abs(eps_pld - 1.8282436) < 1e-4 && std::abs(eps_rdp - 2.1013665) < 1e-4;
  return published && std::abs(delta_pld / 1e-5 - 1.0) < 1e-6 ? 0 : 1;
}
