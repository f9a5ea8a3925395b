#include "reference_comparison.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "lammps_session.h"

namespace distspec::testing {

Observables evaluate(const std::string& setup, const std::string& pair, const std::vector<std::string>& args)
{
  LammpsSession lmp(args);
  lmp.run("plugin load " + plugin_path() + "\n" + setup + "\n" + pair + R"(
compute pea all pe/atom
compute sa all stress/atom NULL virial
compute vir all pressure NULL virial
thermo_style custom step pe press
run 0 post no
)");
  Observables o;
  o.pe = lmp.thermo("pe");
  o.forces = lmp.gather("f", 3);
  o.virial = lmp.compute_vector("vir", 6);
  o.energy_atom = lmp.gather("c_pea", 1);
  o.virial_atom = lmp.gather("c_sa", 6);
  return o;
}

namespace {

double scale_of(const std::vector<double>& v)
{
  double s = 0.0;
  for (double x : v) s = std::max(s, std::abs(x));
  return s > 0.0 ? s : 1.0;
}

double deviation(const std::vector<double>& got, const std::vector<double>& ref)
{
  if (got.size() != ref.size()) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::abs(got[i] - ref[i]));
  }
  return worst / scale_of(ref);
}

}  // namespace

double Deviation::worst() const { return std::max({pe, forces, virial, energy_atom, virial_atom}); }

Deviation compare(const Observables& got, const Observables& ref)
{
  Deviation d{};
  d.pe = std::isfinite(got.pe) ? std::abs(got.pe - ref.pe) / std::max(std::abs(ref.pe), 1e-300) : INFINITY;
  d.forces = deviation(got.forces, ref.forces);
  d.virial = deviation(got.virial, ref.virial);
  d.energy_atom = deviation(got.energy_atom, ref.energy_atom);
  d.virial_atom = deviation(got.virial_atom, ref.virial_atom);
  return d;
}

std::string describe(const Deviation& d)
{
  std::ostringstream s;
  s << "pe " << d.pe << ", forces " << d.forces << ", virial " << d.virial << ", per-atom energy " << d.energy_atom
    << ", per-atom virial " << d.virial_atom;
  return s.str();
}

std::vector<std::string> processor_grids()
{
  switch (world_size()) {
    case 1: return {"1 1 1"};
    case 2: return {"2 1 1", "1 1 2"};
    case 4: return {"4 1 1", "2 2 1", "1 2 2"};
    default: return {"* * *"};
  }
}

}  // namespace distspec::testing
