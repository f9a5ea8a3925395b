#include "watchdog.h"

#include <cstdio>
#include <cstdlib>

#include "lammps_session.h"

namespace distspec::testing {

Watchdog::Watchdog(std::string what, std::chrono::seconds limit)
{
  thread_ = std::thread([this, what = std::move(what), limit] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done_.wait_for(lock, limit, [this] { return finished_; })) return;
    std::fprintf(stderr, "\nHANG: MPI rank %d: '%s' still running after %lld s; ending the test run\n", world_rank(),
                 what.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    // Exit status 124, as timeout(1) uses: mpirun then stops the other ranks.
    std::_Exit(124);
  });
}

Watchdog::~Watchdog()
{
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  done_.notify_all();
  thread_.join();
}

}  // namespace distspec::testing
