#include "periodic_images_reference.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "distspec/dispatch/dispatcher.h"
#include "expanded_graph.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"

namespace distspec::testing {
namespace {

std::vector<std::string> words(const std::string& line)
{
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct PairLines {
  std::string model, spec_override;
  std::vector<std::string> elements;  // per LAMMPS type
};

PairLines read_pair_lines(const std::string& pair)
{
  PairLines p;
  std::istringstream in(pair);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> w = words(line);
    if (w.empty()) continue;
    if (w[0] == "pair_style") {
      if (w.size() < 2 || w[1] != "distspec")
        throw std::runtime_error("periodic_images reference: expected 'pair_style distspec ...', got '" + line + "'");
      for (std::size_t k = 2; k + 1 < w.size(); k += 2) {
        if (w[k] == "spec") p.spec_override = w[k + 1];
        else if (w[k] != "halo" && w[k] != "threads")
          throw std::runtime_error("periodic_images reference: pair_style keyword '" + w[k] +
                                   "' is not one it reproduces (halo, threads, spec)");
      }
    } else if (w[0] == "pair_coeff") {
      if (w.size() < 5 || w[1] != "*" || w[2] != "*")
        throw std::runtime_error("periodic_images reference: expected 'pair_coeff * * MODEL ELEMENTS...', got '" + line + "'");
      p.model = w[3];
      p.elements.assign(w.begin() + 4, w.end());
    }
  }
  if (p.model.empty()) throw std::runtime_error("periodic_images reference: no pair_coeff line");
  return p;
}

}  // namespace

Observables evaluate_on_periodic_images(const std::string& pair, const Observables& system)
{
  const PairLines lines = read_pair_lines(pair);
  const models::ModelFile file = models::read_model_file(lines.model, lines.spec_override);
  // The torch kind's halo ops live in LibTorch's one registry, where the loaded plugin has put
  // them already; this process's copy of the models library must not define them again.
  if (file.architecture == "torch")
    throw std::runtime_error("periodic_images reference: evaluates the built-in architectures, not 'torch'");
  OpRegistry registry;
  models::register_architecture_ops(file.architecture, registry);
  const std::unique_ptr<models::Model> model = models::make_model(file);

  test::Crystal crystal;
  const auto& b = system.box;
  crystal.box = test::Box::triclinic(b[3] - b[0], b[4] - b[1], b[5] - b[2], b[6], b[7], b[8]);
  const std::size_t n = system.types.size();
  for (std::size_t i = 0; i < n; ++i) {
    crystal.positions.push_back({system.positions[3 * i] - b[0], system.positions[3 * i + 1] - b[1],
                                 system.positions[3 * i + 2] - b[2]});
    const auto type = static_cast<std::size_t>(system.types[i]);
    if (type < 1 || type > lines.elements.size())
      throw std::runtime_error("periodic_images reference: atom type " + std::to_string(type) + " has no element");
    const auto& names = file.elements;
    const auto at = std::find(names.begin(), names.end(), lines.elements[type - 1]);
    if (at == names.end())
      throw std::runtime_error("periodic_images reference: element '" + lines.elements[type - 1] + "' (NULL types "
                               "are not reproduced) is not in " + lines.model);
    crystal.species.push_back(static_cast<int>(at - names.begin()));
  }

  // Pairs up to cutoff + skin are listed; the kernels apply the cutoff themselves.
  const test::ExpandedGraph graph(crystal, file.cutoff, 1.0, std::max(1, model->info().message_passing_layers));
  Dispatcher dispatch(file.spec.core, Device::cpu, model->info().ops, 1, HaloStrategy::expanded, registry);
  IndexedHaloExchange halo = graph.rows().halo_exchange();
  dispatch.attach(halo);
  models::OutputRequest request;
  request.energy_rows = true;
  request.virial = true;
  models::ModelOutputs out;
  model->compute(graph.graph(), dispatch, request, out);
  if (dispatch.stats().forward + dispatch.stats().reverse != 0)
    throw std::runtime_error("periodic_images reference: the expanded evaluation exchanged halo rows");

  // Forces on images belong to their atoms.
  std::vector<double> forces = out.forces;
  halo.reverse(Rows<double>{forces.data(), graph.rows().n_rows(), 3});

  Observables o;
  o.pe = out.energy;
  o.forces.assign(forces.begin(), forces.begin() + 3 * n);
  o.energy_atom.assign(out.energy_rows.begin(), out.energy_rows.begin() + n);
  const double volume = crystal.box.volume();
  for (double v : out.virial) o.virial.push_back(v / volume * system.nktv2p);
  o.types = system.types;
  o.box = system.box;
  o.nktv2p = system.nktv2p;
  return o;
}

}  // namespace distspec::testing
