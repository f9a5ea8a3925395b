"""DISTSPEC's MACE kernels (doc/mace_kernels.md): torch ops in the namespace `distspec_mace`,
implemented in C++ and CUDA by libdistspec_mace_ops.so (lib/models/torch/mace_*_op.cpp over
lib/models/mace/), and the modules that call them in place of mace-torch's.

- library.py: finds and loads the library into this process, so that the ops can be traced
  (their fake implementations are registered here, beside the op that needs them) and run by
  the export check;
- symmetric_contraction.py: MACE's symmetric contraction as one sparse op per element;
- convolution.py: an interaction's convolution with its radial MLP tabulated as splines,
  messages summed into their receivers without a per-edge tensor;
- element_linear.py: skip_tp (the features' tensor product with the element's one-hot) as one
  matrix product per element's group of nodes;
- model.py: the fast MACE forward that calls them (module_ops.py: mace's modules behind the same
  calls, where the library is not there).
"""
