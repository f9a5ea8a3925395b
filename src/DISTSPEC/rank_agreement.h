/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: every rank must run the same spec and model.
   Rank 0 reads the model file and broadcasts it, but a spec given by path (pair_style `spec FILE`,
   or "spec": "x.json" in the model file) and a parameters file are read by every rank, and the
   words of pair_style / pair_coeff may differ by rank (a `getenv` variable, a node-local path).
   Ranks that disagree would call different numbers of halo exchanges and hang, or compute a
   mixture of two models. A 64-bit fingerprint of what each rank will run is compared at init.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_RANK_AGREEMENT_H
#define LMP_DISTSPEC_RANK_AGREEMENT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace distspec::models {
struct ModelFile;
}

namespace LAMMPS_NS {

class LAMMPS;

// FNV-1a, 64 bit: a fingerprint to compare across ranks, not a cryptographic hash.
class Fingerprint {
 public:
  Fingerprint &add(std::string_view part);
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = 14695981039346656037ULL;
};

// What a model file makes this rank run: the effective spec (canonical bytes), the architecture,
// units, cutoff, elements, parameters, runtime options and the bytes of the parameters file.
std::uint64_t model_fingerprint(const distspec::models::ModelFile &file);

// Compares `fingerprint` over all ranks; when they differ, every rank stops with a message that
// names a rank that differs from rank 0 and the spec each of the two read (`spec_source`).
void require_same_on_every_rank(LAMMPS *lmp, std::uint64_t fingerprint, const std::string &spec_source);

}    // namespace LAMMPS_NS

#endif
