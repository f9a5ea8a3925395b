// A one-screen, human-readable account of a spec: what the native runtime will do with each
// part. The checker tool prints it; the LAMMPS glue can log it at init.
#pragma once

#include <string>

#include "distspec/spec/mlip_spec.h"

namespace distspec {

// Lines of "name  value", ending with '\n'. Helpers that native_action() does not recognise
// are marked "not applicable natively".
std::string summarize_mlip_spec(const MLIPSpec& spec);

}  // namespace distspec
