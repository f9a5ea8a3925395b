// An optional interface of a model whose settings depend on the system it runs on: the Ewald
// model with "accuracy" takes its splitting parameter from the atom count, the charges and the
// box at the start of each run, as LAMMPS' kspace_style ewald does in init(). A host that knows
// where runs start says so, and logs what the model derived; a host that does not gets the
// values derived at the first compute() and kept.
#pragma once

#include <string>

namespace distspec::models {

class SystemDerived {
 public:
  virtual ~SystemDerived() = default;
  // A run starts (LAMMPS: Pair::setup(), called where init() ran): derive afresh from the
  // system at the next compute().
  virtual void begin_run() = 0;
  // What the last compute() derived, as log lines ending in a newline, once: "" when it derived
  // nothing new. The same text on every rank; a host prints it on one.
  virtual std::string take_report() = 0;
};

}  // namespace distspec::models
