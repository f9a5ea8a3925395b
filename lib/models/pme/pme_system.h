// The host side of the PME model, shared by its CPU and CUDA variants: the cell it accepts and
// its transposed inverse, the mesh it can run, and this rank's share of the global k-space virial.
#pragma once

#include <array>

#include "models/model.h"
#include "models/pme/pme.h"

namespace distspec::models::pme {

// Throws model.system unless the graph has a cell periodic in x, y and z (triclinic allowed).
void check_cell(const AtomGraph& graph);

// Throws model.system when a derived mesh has fewer points along an axis than the order.
void check_mesh(const Params& params);

// (h^-1)^T of the cell whose rows are a, b, c: its rows are the reciprocal vectors a*, b*, c*.
std::array<double, 9> cell_inv_t(const std::array<double, 9>& cell);

// Adds this rank's part of the k-space virial (C x `virial`, the global sum every rank computed
// alike) to out.virial: with per-row virials asked for, the sum of this rank's owned rows of
// them (which the interpolation filled); else the global sum times this rank's share of the
// model's atoms (owned rows of its species over `natoms`), so that the ranks' parts add up to it.
void add_virial_share(const AtomGraph& graph, const OutputRequest& request, const std::array<double, 6>& virial,
                      double natoms, double coulomb_constant, ModelOutputs& out);

}  // namespace distspec::models::pme
