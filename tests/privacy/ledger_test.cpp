#include "privacy/ledger.hpp"

#include <doctest/doctest.h>

#include <filesystem>

#include "engine/error.hpp"
#include "engine/io.hpp"
#include "privacy/rdp_accountant.hpp"

using namespace dprl::privacy;
namespace fs = std::filesystem;

TEST_SUITE("unit") {
  TEST_CASE("a charge that would cross the budget is refused and spends nothing") {
    Ledger l(1.5, 1e-5, "rdp");
    const auto step = DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0));
    l.charge(step, 100, "first");
    const double spent = l.spent_epsilon();
    CHECK(spent > 0.0);
    CHECK(spent <= 1.5);
    CHECK(spent == doctest::Approx(rdp_dpsgd_epsilon(1.0, 0.01, 100, 1e-5)));
    CHECK_THROWS_WITH_AS(l.charge(step, 100000, "too much"),
                         doctest::Contains("privacy budget exceeded"), dprl::BudgetExceeded);
    CHECK(l.spent_epsilon() == spent);
    CHECK(l.entries().size() == 1);
    CHECK_FALSE(l.can_afford(step, 100000));
    CHECK_THROWS_AS(l.charge(DpEvent::poisson_sampled(0.1, DpEvent::laplace(1.0))),
                    dprl::ParamError);
    CHECK(l.entries().size() == 1);
  }

  TEST_CASE("ledger validation names the parameter") {
    CHECK_THROWS_WITH_AS(Ledger(0.0, 1e-5), "ledger budget epsilon = 0 must be finite and > 0",
                         dprl::ParamError);
    CHECK_THROWS_WITH_AS(Ledger(1.0, 0.0), "ledger delta = 0 must be in (0, 1)", dprl::ParamError);
    CHECK_THROWS_WITH_AS(Ledger(1.0, 1e-5, "moments"), doctest::Contains("accountant = 'moments'"),
                         dprl::ParamError);
  }

  TEST_CASE("a persisted ledger reloads so a restarted run cannot spend twice") {
    const fs::path dir = fs::temp_directory_path() / "dprl_ledger_test";
    fs::remove_all(dir);
    const auto step = DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0));
    double spent;
    {
      Ledger l = Ledger::open(dir, 1.8, 1e-5, "rdp");
      l.set_noise_source("seeded(root=1, a=0, b=0)");
      l.charge(step, 400, "epoch 1");
      spent = l.spent_epsilon();
    }
    Ledger again = Ledger::open(dir, 1.8, 1e-5, "rdp");
    CHECK(again.spent_epsilon() == doctest::Approx(spent).epsilon(1e-12));
    CHECK(again.entries().size() == 1);
    CHECK(again.entries()[0].label == "epoch 1");
    // eps(400 steps) = 1.55 fits a fresh ledger, eps(800 steps) = 1.93 does not
    CHECK_THROWS_AS(again.charge(step, 400), dprl::BudgetExceeded);
    const std::string text = dprl::read_file(dir / Ledger::kFileName);
    CHECK(text.find("\"noise_source\": \"seeded(root=1, a=0, b=0)\"") != std::string::npos);
    CHECK(text.find("\"guarantee\"") != std::string::npos);
    CHECK_THROWS_AS(Ledger::open(dir, 2.0, 1e-5, "rdp"), dprl::DataError);
    fs::remove_all(dir);
  }

  TEST_CASE("best accountant reports the smaller epsilon and says so") {
    Ledger l(5.0, 1e-5, "best");
    l.charge(DpEvent::poisson_sampled(0.01, DpEvent::gaussian(1.0)), 10);
    CHECK(l.accountant_name() == "best");
    CHECK(l.spent_epsilon() < rdp_dpsgd_epsilon(1.0, 0.01, 10, 1e-5));
  }

  TEST_CASE("DpEvent JSON round trip") {
    const auto e = DpEvent::composed({dpsgd_event(1.1, 0.01, 100), DpEvent::laplace(2.0)});
    CHECK(DpEvent::from_json(e.to_json()) == e);
    CHECK_THROWS_AS(DpEvent::from_json("{\"kind\": \"exponential\"}"), dprl::DataError);
  }
}
