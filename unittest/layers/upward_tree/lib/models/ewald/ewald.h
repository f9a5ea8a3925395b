#pragma once
// Two kinds that include each other.
#include "models/pme/pme.h"
