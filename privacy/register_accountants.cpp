// The built-in accountants, one registration line each (see accountant.hpp).
#include "privacy/accountant.hpp"
#include "privacy/best_accountant.hpp"
#include "privacy/pld_accountant.hpp"
#include "privacy/rdp_accountant.hpp"

namespace dprl::privacy {

void register_builtin_accountants(AccountantRegistry& r) {
  r.add(accountant_entry<RdpAccountant>(
      "rdp", "Renyi DP of the composition, converted at the best of 156 orders",
      "Mironov 2017; Mironov, Talwar, Zhang 2019; Canonne, Kamath, Steinke 2020 "
      "(rdp_accountant.hpp)"));
  r.add(accountant_entry<PldAccountant>(
      "pld", "privacy loss distributions composed by FFT (connect-the-dots, interval 1e-4)",
      "Koskela et al. 2020; Doroshenko et al. 2022 (pld_accountant.hpp)"));
  r.add(accountant_entry<BestAccountant>(
      "best", "the smaller bound of rdp and pld (rdp where pld cannot evaluate)",
      "best_accountant.hpp"));
}

}  // namespace dprl::privacy
