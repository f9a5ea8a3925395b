#include "reference_comparison.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "lammps_session.h"
#include "library.h"

namespace distspec::testing {

namespace {

// Atom IDs from create_atoms depend on the processor grid; positions do not. Per-atom arrays are
// put in the order of their atoms' coordinates so runs on different grids compare atom by atom.
void canonical_order(const std::vector<double>& x, Observables& o)
{
  const std::size_t n = x.size() / 3;
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  auto key = [&](std::size_t i) {
    return std::array<long long, 3>{std::llround(x[3 * i] * 1e6), std::llround(x[3 * i + 1] * 1e6),
                                    std::llround(x[3 * i + 2] * 1e6)};
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  auto permute = [&](std::vector<double>& v) {
    const std::size_t width = n ? v.size() / n : 0;
    std::vector<double> out(v.size());
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t c = 0; c < width; ++c) out[k * width + c] = v[order[k] * width + c];
    v.swap(out);
  };
  o.positions = x;
  for (auto* v : {&o.forces, &o.energy_atom, &o.virial_atom, &o.positions, &o.types, &o.ids}) permute(*v);
}

// Positions wrapped into the periodic box. LAMMPS wraps atoms only when it rebuilds its lists, so
// an MD step's positions may lie outside the box where a rerun of them, wrapped at its setup,
// lies inside: the same configuration either way. Triclinic boxes wrap in lattice coordinates.
std::vector<double> wrapped_into_box(std::vector<double> x, const std::array<double, 9>& box, const int* periodic)
{
  const double lo[3] = {box[0], box[1], box[2]};
  const double lx = box[3] - box[0], ly = box[4] - box[1], lz = box[5] - box[2];
  const double xy = box[6], xz = box[7], yz = box[8];
  for (std::size_t i = 0; i + 2 < x.size(); i += 3) {
    const double d[3] = {x[i] - lo[0], x[i + 1] - lo[1], x[i + 2] - lo[2]};
    // s = h^-1 d with h = [[lx, xy, xz], [0, ly, yz], [0, 0, lz]]
    double s[3];
    s[2] = d[2] / lz;
    s[1] = (d[1] - yz * s[2]) / ly;
    s[0] = (d[0] - xy * s[1] - xz * s[2]) / lx;
    for (int k = 0; k < 3; ++k)
      if (periodic[k]) s[k] -= std::floor(s[k]);
    x[i] = lo[0] + lx * s[0] + xy * s[1] + xz * s[2];
    x[i + 1] = lo[1] + ly * s[1] + yz * s[2];
    x[i + 2] = lo[2] + lz * s[2];
  }
  return x;
}

Observables evaluate_with(const std::string& setup, const std::string& pair, const std::vector<std::string>& args,
                          const std::string& observed, MPI_Comm comm)
{
  LammpsSession lmp(args, comm);
  lmp.run("plugin load " + plugin_path() + "\n" + setup + "\n" + pair + R"(
compute pea all pe/atom
compute sa all stress/atom NULL virial
compute vir all pressure NULL virial
compute distspec_type all property/atom type
compute distspec_id all property/atom id
thermo_style custom step pe press
)" + (observed.empty() ? std::string("run 0 post no\n") : observed + "\n"));
  Observables o;
  o.pe = lmp.thermo("pe");
  o.forces = lmp.gather("f", 3);
  o.virial = lmp.compute_vector("vir", 6);
  o.energy_atom = lmp.gather("c_pea", 1);
  o.virial_atom = lmp.gather("c_sa", 6);
  o.types = lmp.gather("c_distspec_type", 1);
  o.ids = lmp.gather("c_distspec_id", 1);
  const char* box[] = {"xlo", "ylo", "zlo", "xhi", "yhi", "zhi", "xy", "xz", "yz"};
  for (int k = 0; k < 9; ++k) o.box[k] = lmp.thermo(box[k]);
  o.nktv2p = *static_cast<double*>(lammps_extract_global(lmp.handle(), "nktv2p"));
  const int* periodic = static_cast<const int*>(lammps_extract_global(lmp.handle(), "periodicity"));
  canonical_order(wrapped_into_box(lmp.gather("x", 3), o.box, periodic), o);
  return o;
}

void broadcast(std::vector<double>& v)
{
  long n = static_cast<long>(v.size());
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  v.resize(n);
  MPI_Bcast(v.data(), static_cast<int>(n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

}  // namespace

Observables evaluate(const std::string& setup, const std::string& pair, const std::vector<std::string>& args,
                     const std::string& observed)
{
  return evaluate_with(setup, pair, args, observed, MPI_COMM_WORLD);
}

Observables evaluate_on_one_rank(const std::string& setup, const std::string& pair, const std::vector<std::string>& args,
                                 const std::string& observed)
{
  Observables o;
  if (world_rank() == 0) o = evaluate_with(setup, pair, args, observed, MPI_COMM_SELF);
  MPI_Bcast(&o.pe, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(o.box.data(), 9, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&o.nktv2p, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (auto* v : {&o.forces, &o.virial, &o.energy_atom, &o.virial_atom, &o.positions, &o.types, &o.ids}) broadcast(*v);
  return o;
}

double nve_drift_per_atom(const std::string& setup, const std::string& pair, int steps, double dt)
{
  LammpsSession lmp;
  lmp.run("plugin load " + plugin_path() + "\n" + setup + "\n" + pair + "\n" +
          "velocity all create 300.0 87287 loop geom\nfix nve all nve\ntimestep " + std::to_string(dt) +
          "\nthermo_style custom step etotal\nrun 0 post no");
  const double e0 = lmp.thermo("etotal");
  lmp.run("run " + std::to_string(steps) + " post no");
  return (lmp.thermo("etotal") - e0) / lmp.natoms();
}

namespace {

double scale_of(const std::vector<double>& v)
{
  double s = 0.0;
  for (double x : v) s = std::max(s, std::abs(x));
  return s > 0.0 ? s : 1.0;
}

double deviation(const std::vector<double>& got, const std::vector<double>& ref, bool absolute = false)
{
  if (ref.empty()) return NAN;  // the reference did not compute it: nothing compared
  if (got.size() != ref.size()) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i]) || !std::isfinite(ref[i])) return INFINITY;  // a NaN drops out of std::max
    worst = std::max(worst, std::abs(got[i] - ref[i]));
  }
  return absolute ? worst : worst / scale_of(ref);
}

}  // namespace

double Deviation::worst() const
{
  double w = 0.0;
  for (double d : {pe, forces, virial, energy_atom, virial_atom, positions})
    if (!std::isnan(d)) w = std::max(w, d);
  return w;
}

namespace {

// An observable's first non-finite value, named with its atom (per-atom arrays, by the run's atom
// IDs) or component, and how many there are.
void find_nonfinite(const char* name, const std::vector<double>& v, const std::vector<double>& ids, const char* whose,
                    std::vector<std::string>& out)
{
  const auto bad = [](double x) { return !std::isfinite(x); };
  const auto first = std::find_if(v.begin(), v.end(), bad);
  if (first == v.end()) return;
  const auto i = static_cast<std::size_t>(first - v.begin());
  const std::size_t width = ids.empty() ? 0 : v.size() / ids.size();
  std::ostringstream s;
  s << name;
  if (width > 0 && v.size() == width * ids.size()) s << " of atom ID " << std::llround(ids[i / width]) << " (component " << i % width << ")";
  else if (v.size() > 1) s << " component " << i;
  s << " is " << *first << " in the " << whose << " (" << std::count_if(v.begin(), v.end(), bad) << " non-finite value(s))";
  out.push_back(s.str());
}

bool all_zero(const std::vector<double>& v)
{
  return !v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0; });
}

}  // namespace

Deviation compare(const Observables& got, const Observables& ref, bool absolute_per_atom)
{
  Deviation d{};
  const std::vector<double> pe_got{got.pe}, pe_ref{ref.pe};
  const std::pair<const char*, std::pair<const std::vector<double>*, const std::vector<double>*>> observables[] = {
      {"pe", {&pe_got, &pe_ref}}, {"forces", {&got.forces, &ref.forces}}, {"virial", {&got.virial, &ref.virial}},
      {"energy_atom", {&got.energy_atom, &ref.energy_atom}}, {"virial_atom", {&got.virial_atom, &ref.virial_atom}},
      {"positions", {&got.positions, &ref.positions}}};
  const std::vector<double> global;  // pe and virial: named by component, not by atom
  for (const auto& [name, pair] : observables) {
    const bool per_atom = pair.first != &pe_got && pair.first != &got.virial;
    find_nonfinite(name, *pair.first, per_atom ? got.ids : global, "run", d.nonfinite);
    find_nonfinite(name, *pair.second, per_atom ? got.ids : global, "reference", d.nonfinite);
    if (std::string(name) != "positions" && all_zero(*pair.first) && all_zero(*pair.second)) d.both_zero.push_back(name);
  }
  d.pe = std::isfinite(got.pe) ? std::abs(got.pe - ref.pe) / std::max(std::abs(ref.pe), 1e-300) : INFINITY;
  d.forces = deviation(got.forces, ref.forces, absolute_per_atom);
  d.virial = deviation(got.virial, ref.virial);
  d.energy_atom = deviation(got.energy_atom, ref.energy_atom, absolute_per_atom);
  d.virial_atom = deviation(got.virial_atom, ref.virial_atom);
  d.positions = deviation(got.positions, ref.positions);
  return d;
}

std::string describe(const Deviation& d)
{
  std::ostringstream s;
  const std::pair<const char*, double> rows[] = {{"pe", d.pe}, {"forces", d.forces}, {"virial", d.virial},
                                                 {"per-atom energy", d.energy_atom}, {"per-atom virial", d.virial_atom},
                                                 {"positions", d.positions}};
  for (const auto& [name, value] : rows)
    if (!std::isnan(value)) s << (s.tellp() > 0 ? ", " : "") << name << " " << value;
  return s.str();
}

double virial_sum_rule(const Observables& o)
{
  if (o.virial_atom.empty() || o.virial.size() != 6) return NAN;
  const auto& b = o.box;
  const double volume = (b[3] - b[0]) * (b[4] - b[1]) * (b[5] - b[2]);
  std::array<double, 6> sum{};
  for (std::size_t i = 0; i < o.virial_atom.size(); ++i) sum[i % 6] += o.virial_atom[i];
  double worst = 0.0, scale = 0.0;
  for (int k = 0; k < 6; ++k) {
    const double whole = -volume * o.virial[k];
    worst = std::max(worst, std::abs(sum[k] - whole));
    scale = std::max(scale, std::abs(whole));
  }
  return worst / (scale > 0.0 ? scale : 1.0);
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
