// Must not compile: the core (lib/distspec) sees no model header. The layers test builds this
// with distspec_core's include root and expects the compiler to miss models/model.h.
#include "models/model.h"
