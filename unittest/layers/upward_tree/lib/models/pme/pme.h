#pragma once
#include "models/ewald/ewald.h"
