/* -*- c++ -*- ----------------------------------------------------------
   DISTSPEC: the swaps of LAMMPS' brick communication a rank makes with itself.

   Along an axis the processor grid does not divide, CommBrick's swaps send a rank's boundary
   atoms to itself: periodic images. Its pair callbacks still pack those rows into the send
   buffer and unpack them from it. A halo exchange whose rows live elsewhere (GPU memory) can
   copy them in place instead. Each callback decides from its own arguments and CommBrick's
   swap tables, never from what an earlier callback left behind: a forward pack recognises the
   swap by its send list (sendlist[iswap]) and packs nothing, and the forward unpack, by the
   ghosts it fills (firstrecv[iswap], recvnum[iswap]), copies the swap's listed rows into them;
   a reverse pack recognises it by those ghosts and packs nothing, and the reverse unpack, by
   its send list, adds the ghosts onto the listed rows. Pack and unpack of one swap come in
   that order in every version (CommBrick::forward_comm / reverse_comm of a Pair, 29 Sep 2021
   to 4 Jul 2026: pack, then, for a swap with itself, unpack of the send buffer); whatever runs
   between them, the rows are copied when the unpack runs, as a buffer's unpack writes them.

   CommBrick keeps the tables protected; a member pointer taken through a derived type is the
   standard way to read them without changing LAMMPS. comm_style tiled is not CommBrick: no
   self swap is recognised, and every swap goes through the buffers.
------------------------------------------------------------------------- */

#ifndef LMP_DISTSPEC_COMM_BRICK_SWAPS_H
#define LMP_DISTSPEC_COMM_BRICK_SWAPS_H

#include "comm_brick.h"

namespace LAMMPS_NS {

struct SelfSwap {
  const int *list = nullptr;    // the rows it sends (owned atoms, or ghosts of an earlier swap)
  int n = 0;                    // how many
  int first = 0;                // the first ghost row it fills
};

class CommBrickSwaps {
 public:
  CommBrickSwaps() = default;    // recognises none
  explicit CommBrickSwaps(Comm *comm) : brick_(dynamic_cast<CommBrick *>(comm)), me_(comm->me) {}

  // The self swap whose send list is `list` (a forward pack, a reverse unpack), if any.
  bool sends(const int *list, SelfSwap &swap) const
  {
    if (!brick_ || !list) return false;
    const Tables t = Access::read(*brick_);
    for (int s = 0; s < t.nswap; ++s)
      if (t.sendlist[s] == list) return self(t, s, swap);
    return false;
  }

  // The self swap that fills ghosts [first, first + n) (a forward unpack, a reverse pack), if
  // n > 0 and they are one's: swaps fill disjoint ranges of ghosts.
  bool fills(int first, int n, SelfSwap &swap) const
  {
    if (!brick_ || n <= 0) return false;
    const Tables t = Access::read(*brick_);
    for (int s = 0; s < t.nswap; ++s)
      if (t.firstrecv[s] == first && t.recvnum[s] == n) return self(t, s, swap);
    return false;
  }

 private:
  struct Tables {
    int nswap;
    const int *sendnum, *recvnum, *sendproc, *firstrecv;
    int *const *sendlist;
  };
  // Never instantiated: its static member names CommBrick's protected tables.
  struct Access : CommBrick {
    static Tables read(const CommBrick &c)
    {
      return {c.*&Access::nswap,    c.*&Access::sendnum,   c.*&Access::recvnum,
              c.*&Access::sendproc, c.*&Access::firstrecv, c.*&Access::sendlist};
    }
  };

  bool self(const Tables &t, int s, SelfSwap &swap) const
  {
    if (t.sendproc[s] != me_ || t.sendnum[s] != t.recvnum[s]) return false;
    swap = SelfSwap{t.sendlist[s], t.sendnum[s], t.firstrecv[s]};
    return true;
  }

  CommBrick *brick_ = nullptr;
  int me_ = -1;
};

}    // namespace LAMMPS_NS

#endif
