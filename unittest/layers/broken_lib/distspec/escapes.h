// A core header that climbs out of its folder into the models layer: CheckLayers.cmake rejects it.
#pragma once
#include "../models/eam/eam.h"
