/* ----------------------------------------------------------------------
   DISTSPEC: fingerprints of the spec and model each rank runs, compared across ranks.
------------------------------------------------------------------------- */

#include "rank_agreement.h"

#include "comm.h"
#include "error.h"
#include "lammps.h"

#include "distspec/spec/spec_json.h"
#include "models/json_fields.h"
#include "models/model_file.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mpi.h>
#include <vector>

using namespace LAMMPS_NS;

Fingerprint &Fingerprint::add(std::string_view part)
{
  for (unsigned char c : part) {
    h_ ^= c;
    h_ *= 1099511628211ULL;
  }
  // A separator, so that ("ab", "c") and ("a", "bc") differ.
  h_ ^= 0xff;
  h_ *= 1099511628211ULL;
  return *this;
}

std::uint64_t LAMMPS_NS::model_fingerprint(const distspec::models::ModelFile &file)
{
  Fingerprint f;
  f.add(distspec::write_mlip_spec(file.spec)).add(file.architecture).add(file.units);
  f.add(distspec::models::Json(file.cutoff).dump());
  for (const auto &e : file.elements) f.add(e);
  f.add(file.parameters.dump()).add(file.precision);
  for (const auto &o : file.autograd_outputs) f.add(o);
  f.add(file.force_strategy == distspec::models::ForceStrategy::analytic ? "analytic" : "autograd");
  // The architecture has read the file already; reading it again costs one parse's I/O.
  if (!file.parameters_file.empty()) f.add(distspec::models::read_file_bytes(file.parameters_file, "/parameters_file"));
  return f.value();
}

namespace {

std::string hex(std::uint64_t v)
{
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, v);
  return text;
}

// `text` of rank `root`, on every rank.
std::string from_rank(std::string text, int root, MPI_Comm world)
{
  int n = static_cast<int>(text.size());
  MPI_Bcast(&n, 1, MPI_INT, root, world);
  text.resize(n);
  MPI_Bcast(&text[0], n, MPI_CHAR, root, world);
  return text;
}

}    // namespace

void LAMMPS_NS::require_same_on_every_rank(LAMMPS *lmp, std::uint64_t fingerprint, const std::string &spec_source)
{
  const int nprocs = lmp->comm->nprocs;
  // Compared for equality only: the bits travel as a long long, a type every MPI has, LAMMPS'
  // serial STUBS (which lack MPI_UINT64_T) included.
  static_assert(sizeof(long long) == sizeof(std::uint64_t), "a fingerprint is 8 bytes");
  long long mine = 0;
  std::memcpy(&mine, &fingerprint, sizeof mine);
  std::vector<long long> all(nprocs);
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, lmp->world);
  int differs = 0;
  while (differs < nprocs && all[differs] == all[0]) ++differs;
  if (differs == nprocs) return;
  const std::string source0 = from_rank(spec_source, 0, lmp->world);
  const std::string source_r = from_rank(spec_source, differs, lmp->world);
  lmp->error->all(FLERR,
                  "pair_style distspec: MPI ranks would run different specs or models: rank 0 read spec '{}' "
                  "(fingerprint {}), rank {} read spec '{}' (fingerprint {}). Every rank must see the same spec, "
                  "model and parameter files and the same pair_style / pair_coeff words: check that the paths "
                  "resolve to the same contents on every node and that no variable in those lines depends on the "
                  "rank (getenv, node-local paths)",
                  source0, hex(static_cast<std::uint64_t>(all[0])), differs, source_r,
                  hex(static_cast<std::uint64_t>(all[differs])));
}
