// One LAMMPS instance driven through its C library interface, on MPI_COMM_WORLD.
#pragma once

#include <array>
#include <mpi.h>
#include <string>
#include <vector>

namespace distspec::testing {

// Paths the build passes in: the plugin and the source tree (potentials, examples).
std::string plugin_path();
std::string source_dir();
std::string potential(const std::string& name);  // a file in the repository's potentials/
int world_rank();
int world_size();

class LammpsSession {
 public:
  explicit LammpsSession(const std::vector<std::string>& extra_args = {}, MPI_Comm comm = MPI_COMM_WORLD);
  ~LammpsSession();
  LammpsSession(const LammpsSession&) = delete;
  LammpsSession& operator=(const LammpsSession&) = delete;

  // Runs newline-separated commands; throws std::runtime_error with LAMMPS' message on error.
  void run(const std::string& commands);
  // Runs commands and returns LAMMPS' error message, or "" when they succeed.
  std::string run_expecting_error(const std::string& commands);

  double thermo(const std::string& keyword);
  double natoms();
  // Per-atom data ordered by atom ID (name as in lammps_gather: "f", "x", "c_ID", ...).
  std::vector<double> gather(const std::string& name, int count);
  // A global vector compute's first n values.
  std::vector<double> compute_vector(const std::string& id, int n);

  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

// Largest |a - b| / max(|b|, floor) over elements, for comparisons to a reference.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b, double floor);

}  // namespace distspec::testing
