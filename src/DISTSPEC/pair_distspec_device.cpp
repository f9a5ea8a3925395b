/* ----------------------------------------------------------------------
   DISTSPEC: pair_style distspec, where the model runs: the device keyword, the GPU of each
   rank, and the halo exchange for where the model's rows live.
------------------------------------------------------------------------- */

#include "pair_distspec.h"

#include "lammps_halo_exchange.h"

#include "comm.h"
#include "error.h"
#include "utils.h"

#include <string>

#ifdef DISTSPEC_WITH_CUDA
#include "lammps_device_halo_exchange.h"
#include "models/cuda_runtime.h"

#include <cuda_runtime_api.h>
#endif

using namespace LAMMPS_NS;

void PairDistspec::check_device() const
{
  if (settings_.device != distspec::Device::cuda) return;
#ifdef DISTSPEC_WITH_CUDA
  select_gpu();
#else
  error->all(FLERR, "pair_style distspec: device cuda needs a DISTSPEC plugin built with CUDA "
                    "(DISTSPEC_ENABLE_CUDA); this one was built for CPUs");
#endif
}

distspec::Device PairDistspec::model_device() const
{
  return settings_.device;
}

// A CUDA model's feature rows stay on the GPU: its exchange packs the rows LAMMPS sends there.
std::unique_ptr<LammpsHaloExchangeBase> PairDistspec::make_halo_exchange()
{
#ifdef DISTSPEC_WITH_CUDA
  if (model_device() == distspec::Device::cuda) return std::make_unique<LammpsDeviceHaloExchange>(lmp, this);
#endif
  return std::make_unique<LammpsHaloExchange>(lmp, this);
}

// One GPU per rank by node-local rank: GPU (local rank % GPUs on the node). More ranks on a node
// than GPUs is an error unless `gpu_share yes`. Every rank decides the same way.
void PairDistspec::select_gpu() const
{
#ifdef DISTSPEC_WITH_CUDA
  int local_rank = 0, local_size = 1;
#ifndef MPI_STUBS
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, comm->me, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
#endif
  std::string why;
  int n_devices = 0;
  if (distspec::models::cuda::device_available(&why) && cudaGetDeviceCount(&n_devices) != cudaSuccess) {
    why = "cudaGetDeviceCount failed";
    n_devices = 0;
  }
  // {no GPU here, more ranks than GPUs here, most ranks on a node, fewest GPUs on a node}
  int local[4] = {n_devices == 0, local_size > n_devices, local_size, -n_devices};
  int any[4];
  MPI_Allreduce(local, any, 4, MPI_INT, MPI_MAX, world);
  if (any[0])
    error->all(FLERR, "pair_style distspec: device cuda, but {} found no usable CUDA device{}; use 'device cpu', or "
               "run where a GPU is visible (CUDA_VISIBLE_DEVICES)",
               n_devices == 0 ? "this rank" : "a rank", why.empty() ? "" : " (" + why + ")");
  if (any[1] && !settings_.gpu_share)
    error->all(FLERR, "pair_style distspec: device cuda: up to {} MPI ranks share a node with {} GPU(s); run at most "
               "one rank per GPU, or add 'gpu_share yes' to let ranks share the node's GPUs round-robin",
               any[2], -any[3]);
  const int device = local_rank % n_devices;
  const cudaError_t status = cudaSetDevice(device);
  if (status != cudaSuccess)
    error->one(FLERR, "pair_style distspec: device cuda: cudaSetDevice({}) failed: {}", device,
               cudaGetErrorString(status));
  if (comm->me == 0)
    utils::logmesg(lmp, "DISTSPEC: device cuda: rank 0 on GPU {} of {} ({}); {} rank(s) on its node{}\n", device,
                   n_devices, distspec::models::cuda::device_description(), local_size,
                   any[1] ? ", GPUs shared (gpu_share yes)" : "");
#endif
}
