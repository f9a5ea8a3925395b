// The core including a LAMMPS header.
#include "lammps.h"
