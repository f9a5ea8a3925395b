#include "lammps_session.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mpi.h>
#include <stdexcept>

#include "library.h"

namespace distspec::testing {

namespace {
// A build directory's paths, unless the environment names others (binaries packed for another
// machine: scripts/pack_gpu_run.sh).
std::string path_from_env(const char* variable, const char* built_in)
{
  const char* value = std::getenv(variable);
  return (value && *value) ? value : built_in;
}
}    // namespace

std::string plugin_path() { return path_from_env("DISTSPEC_PLUGIN", DISTSPEC_PLUGIN_FILE); }
std::string source_dir() { return path_from_env("DISTSPEC_SOURCE_DIR", DISTSPEC_SOURCE_DIR); }
std::string potential(const std::string& name) { return source_dir() + "/potentials/" + name; }

int world_rank()
{
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size()
{
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

LammpsSession::LammpsSession(const std::vector<std::string>& extra_args, MPI_Comm comm)
{
  std::vector<std::string> args = {"distspec-test", "-log", "none", "-nocite"};
  if (!std::getenv("DISTSPEC_TEST_VERBOSE")) args.insert(args.end(), {"-screen", "none"});
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  handle_ = lammps_open(static_cast<int>(argv.size()), argv.data(), comm, nullptr);
  if (!handle_) throw std::runtime_error("lammps_open failed");
}

LammpsSession::~LammpsSession() { lammps_close(handle_); }

std::string LammpsSession::run_expecting_error(const std::string& commands)
{
  lammps_commands_string(handle_, commands.c_str());
  if (!lammps_has_error(handle_)) return "";
  std::string buffer(4096, '\0');
  lammps_get_last_error_message(handle_, buffer.data(), static_cast<int>(buffer.size()));
  buffer.resize(buffer.find('\0'));
  return buffer.empty() ? std::string("(LAMMPS error without message)") : buffer;
}

void LammpsSession::run(const std::string& commands)
{
  std::string error = run_expecting_error(commands);
  if (!error.empty()) throw std::runtime_error("LAMMPS error: " + error);
}

double LammpsSession::thermo(const std::string& keyword) { return lammps_get_thermo(handle_, keyword.c_str()); }

double LammpsSession::natoms() { return lammps_get_natoms(handle_); }

std::vector<double> LammpsSession::gather(const std::string& name, int count)
{
  std::vector<double> out(static_cast<std::size_t>(natoms()) * count);
  std::string n = name;
  if (name.rfind("c_", 0) == 0 || name.rfind("f_", 0) == 0)
    lammps_gather(handle_, n.data(), 1, count, out.data());
  else
    lammps_gather_atoms(handle_, n.data(), 1, count, out.data());
  return out;
}

std::vector<double> LammpsSession::compute_vector(const std::string& id, int n)
{
  auto* v = static_cast<double*>(lammps_extract_compute(handle_, id.c_str(), 0 /*global*/, 1 /*vector*/));
  if (!v) throw std::runtime_error("no global vector compute '" + id + "'");
  return std::vector<double>(v, v + n);
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b, double floor)
{
  if (a.size() != b.size()) return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(std::abs(b[i]), floor));
  return worst;
}

}  // namespace distspec::testing
