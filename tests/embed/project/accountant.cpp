// The privacy guarantee of DP-SGD from its parameters: 1000 steps of the Poisson-subsampled
// Gaussian mechanism (sampling rate 0.01, noise multiplier 1), by PLD and by RDP.
#include <cmath>
#include <cstdio>
#include <dprl/privacy/pld_accountant.hpp>
#include <dprl/privacy/rdp_accountant.hpp>

int main() {
  using dprl::privacy::DpEvent;
  const DpEvent step = DpEvent::poisson_sampled(/*sampling_probability=*/0.01,
                                                DpEvent::gaussian(/*noise_multiplier=*/1.0));
  dprl::privacy::PldAccountant pld;
  pld.compose(step, 1000);
  dprl::privacy::RdpAccountant rdp;
  rdp.compose(step, 1000);
  const double eps_pld = pld.epsilon(1e-5), eps_rdp = rdp.epsilon(1e-5);
  std::printf("accountant: epsilon at delta 1e-5: PLD %.6f, RDP %.6f\n", eps_pld, eps_rdp);
  // dp_accounting 0.6.0 gives 1.8282436 (PLD) and 2.1013665 (RDP) for the same event
  return std::abs(eps_pld - 1.8282436) < 1e-4 && std::abs(eps_rdp - 2.1013665) < 1e-4 ? 0 : 1;
}
