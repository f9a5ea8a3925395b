// Must compile: the control of core_includes_model.cpp, with the same target settings.
#include "distspec/error.h"
#include "models/model.h"
