// A model file that includes a LAMMPS header: CheckLayers.cmake rejects it.
#include "distspec/error.h"
#include "pair.h"
