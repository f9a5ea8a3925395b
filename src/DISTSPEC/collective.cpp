/* ----------------------------------------------------------------------
   DISTSPEC: collective error handling and rank-0 file reads.
------------------------------------------------------------------------- */

#include "collective.h"

#include "comm.h"
#include "error.h"
#include "lammps.h"
#include "utils.h"

#include "distspec/error.h"

#include <filesystem>
#include <fstream>
#include <mpi.h>
#include <sstream>
#include <vector>

using namespace LAMMPS_NS;

namespace {

// Broadcasts `text` from `root` to every rank of `world`.
void broadcast(std::string &text, int root, MPI_Comm world)
{
  long long n = static_cast<long long>(text.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, root, world);
  text.resize(static_cast<std::size_t>(n));
  // MPI counts are int: move large files in chunks.
  const long long chunk = 1 << 30;
  for (long long off = 0; off < n; off += chunk)
    MPI_Bcast(&text[off], static_cast<int>(std::min(chunk, n - off)), MPI_CHAR, root, world);
}

}    // namespace

void LAMMPS_NS::run_collectively(LAMMPS *lmp, const char *file, int line, const std::string &context,
                                 const std::function<void()> &step)
{
  std::string message;
  try {
    step();
  } catch (const distspec::Error &e) {
    message = e.what();
  } catch (const std::bad_alloc &) {
    message = "out of memory";
  } catch (const std::exception &e) {
    message = std::string("internal error: ") + e.what();
  }
  const int me = lmp->comm->me;
  int first_failed = message.empty() ? lmp->comm->nprocs : me;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, lmp->world);
  if (first_failed == lmp->comm->nprocs) return;
  broadcast(message, first_failed, lmp->world);
  if (first_failed != 0) message += " (reported by MPI rank " + std::to_string(first_failed) + ")";
  lmp->error->all(file, line, context + ": " + message);
}

std::string LAMMPS_NS::read_file_on_rank0(LAMMPS *lmp, const std::string &path)
{
  std::string bytes;
  int ok = 1;
  if (lmp->comm->me == 0) {
    // ifstream opens a folder without complaint on Linux and reads it as empty: only a regular
    // file will do.
    std::error_code ec;
    std::ifstream in;
    if (std::filesystem::is_regular_file(path, ec)) in.open(path, std::ios::binary);
    if (in.is_open()) {
      std::ostringstream s;
      s << in.rdbuf();
      bytes = s.str();
      ok = in.bad() ? 0 : 1;
    } else {
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, lmp->world);
  if (!ok)
    throw distspec::Error(distspec::error_id::io, "", "cannot open file (missing, unreadable or not a regular file)",
                          "check the path (relative paths start from the directory LAMMPS runs in; a file not "
                          "found there is looked for in the folder LAMMPS_POTENTIALS names)", path);
  broadcast(bytes, 0, lmp->world);
  return bytes;
}

std::string LAMMPS_NS::find_potential_file(const std::string &path)
{
  // As LAMMPS finds potential files: the path itself, else its file name in LAMMPS_POTENTIALS.
  const std::string where = utils::get_potential_file_path(path);
  return where.empty() ? path : where;
}
