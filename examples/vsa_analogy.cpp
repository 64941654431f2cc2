// "What is the dollar of Mexico?" (Kanerva, 2010), written once for any VSA model and backend.
// Two records bind roles to fillers and bundle the pairs:
//   USA = country*usa + capital*washington + currency*dollar
//   MEX = country*mex + capital*mexico_city + currency*peso
// The mapping F = MEX * inverse(USA) carries each filler of USA to the filler of MEX in the same
// role, so F * dollar is close to peso: a cleanup against the item memory of fillers names it.
#include <fusor/fusor.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace vsa = fusor::vsa;

template <fusor::backend B, vsa::model M>
std::string dollar_of_mexico(const M& m) {
  // symbols: 3 roles, then 6 fillers, as rows of one codebook
  const std::vector<std::string> names{"usa", "washington", "dollar", "mex", "mexico_city", "peso"};
  const auto roles = vsa::random<B>(m, 3, /*seed=*/1);
  const vsa::item_memory<M, B> fillers = vsa::item_memory<M, B>::random(m, 6, /*seed=*/2);
  // both records at once: (2, 3, width) pairs bound in one call, bundled along the pairs
  auto usa_fillers = fillers.items()(fusor::range(0, 3), fusor::all);
  auto mex_fillers = fillers.items()(fusor::range(3, 6), fusor::all);
  // ties by a seeded coin: the mode of CGR and block codes sees three different values at most
  // positions, and "first wins" would keep only the country; one seed for both records makes
  // them keep the same role at each tied position, so the mapping still lines roles up
  vsa::bundle_options ties;
  ties.ties = vsa::tie_break::random;
  ties.seed = 3;
  const auto usa = vsa::bundle(m, vsa::bind(m, roles, usa_fillers), ties);
  const auto mex = vsa::bundle(m, vsa::bind(m, roles, mex_fillers), ties);
  const auto mapping = vsa::bind(m, mex, vsa::inverse(m, usa));
  const auto answer = vsa::bind(m, mapping, fillers[2]);  // the dollar of Mexico
  const auto best = fusor::to<fusor::cpu>(fillers.nearest(answer));
  return names[std::size_t(best.item())];
}

int main() {
  const fusor::index_t d = 10'000;
  bool ok = true;
  auto report = [&](const char* model, const std::string& answer) {
    std::printf("%-6s the dollar of Mexico is the %s\n", model, answer.c_str());
    ok = ok && answer == "peso";
  };
  report("MAP-B", dollar_of_mexico<fusor::cpu>(vsa::map_b(d)));
  report("MAP-I", dollar_of_mexico<fusor::cpu>(vsa::map_i(d)));
  report("MAP-C", dollar_of_mexico<fusor::cpu>(vsa::map_c(d)));
  report("BSC", dollar_of_mexico<fusor::cpu>(vsa::bsc(d)));
  report("FHRR", dollar_of_mexico<fusor::cpu>(vsa::fhrr(d)));
  report("HRR", dollar_of_mexico<fusor::cpu>(vsa::hrr(d)));
  report("MCR", dollar_of_mexico<fusor::cpu>(vsa::mcr(d)));
  report("CGR", dollar_of_mexico<fusor::cpu>(vsa::cgr(d)));
  report("BSBC", dollar_of_mexico<fusor::cpu>(vsa::bsbc(d)));
  std::printf("vsa_analogy: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
