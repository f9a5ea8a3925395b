// Runs every row of the bad-input catalogue (bad_input_catalogue.cpp) on every rank: each rank
// must stop with the row's message, and a rank left waiting in a collective fails the row
// through its watchdog instead of hanging the suite.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mpi.h>
#include <unistd.h>

#include "bad_input_catalogue.h"
#include "lammps_session.h"
#include "watchdog.h"

namespace dt = distspec::testing;

namespace {

constexpr std::chrono::seconds kRowLimit{120};

std::string replace_all(std::string text, const std::string& from, const std::string& to)
{
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The folder of this run's rows: unique per run (rank 0's pid) so concurrent runs never share it.
std::string run_folder()
{
  long run = static_cast<long>(getpid());
  MPI_Bcast(&run, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return "/tmp/distspec_catalogue_" + std::to_string(run);
}

// This rank's folder for a row.
std::string row_folder(const std::string& row)
{
  return run_folder() + "/" + row + "/rank" + std::to_string(dt::world_rank());
}

// After every rank has finished with the row.
void remove_row_folders()
{
  MPI_Barrier(MPI_COMM_WORLD);
  const std::string folder = run_folder();
  if (dt::world_rank() == 0) std::filesystem::remove_all(folder);
}

// Runs a row on every rank; returns this rank's LAMMPS error message ("" when it ran).
std::string run_row(const dt::BadInput& row)
{
  const std::string dir = row_folder(row.name);
  std::filesystem::create_directories(dir);
  auto fill = [&](const std::string& text) {
    return replace_all(replace_all(replace_all(text, "@DIR@", dir), "@POT@", dt::source_dir() + "/potentials"), "@RANK@",
                       std::to_string(dt::world_rank()));
  };
  for (const auto& [name, text] : row.files) std::ofstream(dir + "/" + name, std::ios::binary) << fill(text);
  // A word of the input that differs by rank, read with `variable NAME getenv`.
  setenv("DISTSPEC_CATALOGUE_WORD", dt::world_rank() == 0 ? "per_layer" : "expanded", 1);
  MPI_Barrier(MPI_COMM_WORLD);

  dt::Watchdog watchdog("bad-input row " + row.name, kRowLimit);
  dt::LammpsSession lmp;
  const std::string message = lmp.run_expecting_error("plugin load " + dt::plugin_path() + "\n" + fill(row.commands));
  // A message may quote any rank's folder (the lowest failing rank reports): name them alike,
  // and the potentials folder as the rows write it.
  std::string text = message;
  const std::string stem = dir.substr(0, dir.rfind("/rank") + 5);
  for (int r = dt::world_size() - 1; r >= 0; --r) text = replace_all(text, stem + std::to_string(r), "@DIR@");
  return replace_all(text, dt::source_dir() + "/potentials", "@POT@");
}

class BadInputCatalogue : public ::testing::TestWithParam<dt::BadInput> {};

TEST_P(BadInputCatalogue, EveryRankStopsWithTheMessage)
{
  const dt::BadInput& row = GetParam();
  if (dt::world_size() < row.min_ranks) GTEST_SKIP() << "needs " << row.min_ranks << " MPI ranks";
  const std::string message = run_row(row);
  const int here = !message.empty() && message.find(row.expected) != std::string::npos;
  int everywhere = here;
  MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_TRUE(here) << "rank " << dt::world_rank() << " expected a message containing\n  " << row.expected
                    << "\ngot\n  " << (message.empty() ? "(no error: the input ran)" : message);
  EXPECT_TRUE(everywhere) << "not every rank stopped with the message";
  remove_row_folders();
}

INSTANTIATE_TEST_SUITE_P(Rows, BadInputCatalogue, ::testing::ValuesIn(dt::bad_input_catalogue()),
                         [](const auto& info) { return info.param.name; });

class BaseInputs : public ::testing::TestWithParam<dt::BadInput> {};

TEST_P(BaseInputs, Run)
{
  EXPECT_EQ(run_row(GetParam()), "");
  remove_row_folders();
}

INSTANTIATE_TEST_SUITE_P(Bases, BaseInputs, ::testing::ValuesIn(dt::valid_base_inputs()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
