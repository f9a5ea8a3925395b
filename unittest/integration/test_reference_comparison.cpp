// The comparison of a run with its reference (reference_comparison.h) cannot pass by comparing
// nothing: a NaN in either is reported with its observable and atom, an observable exactly zero
// in both is flagged, and an observable left out is not described as compared.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "reference_comparison.h"

namespace dt = distspec::testing;

namespace {

// Two atoms (IDs 7 and 9) with nonzero forces, energies and virials.
dt::Observables two_atoms()
{
  dt::Observables o;
  o.pe = -3.5;
  o.forces = {0.1, -0.2, 0.3, -0.1, 0.2, -0.3};
  o.virial = {1, 2, 3, 0.1, 0.2, 0.3};
  o.energy_atom = {-1.5, -2.0};
  o.virial_atom = {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1};
  o.positions = {0, 0, 0, 1, 1, 1};
  o.ids = {7, 9};
  return o;
}

TEST(Compare, NanInTheReferenceNamesTheObservableAndTheAtom)
{
  const dt::Observables got = two_atoms();
  dt::Observables ref = two_atoms();
  ref.forces[4] = NAN;  // atom ID 9, y
  const dt::Deviation d = dt::compare(got, ref);
  ASSERT_EQ(d.nonfinite.size(), 1u);
  EXPECT_NE(d.nonfinite[0].find("forces of atom ID 9 (component 1) is nan in the reference"), std::string::npos) << d.nonfinite[0];
  EXPECT_TRUE(std::isinf(d.forces)) << "a NaN must not drop out of the largest difference";
}

TEST(Compare, NanInTheRunAndInAGlobalObservable)
{
  dt::Observables got = two_atoms();
  const dt::Observables ref = two_atoms();
  got.virial_atom[11] = INFINITY;  // atom ID 9, yz
  got.virial[2] = NAN;
  const dt::Deviation d = dt::compare(got, ref);
  ASSERT_EQ(d.nonfinite.size(), 2u);
  EXPECT_NE(d.nonfinite[0].find("virial component 2 is nan in the run"), std::string::npos) << d.nonfinite[0];
  EXPECT_NE(d.nonfinite[1].find("virial_atom of atom ID 9 (component 5) is inf in the run"), std::string::npos) << d.nonfinite[1];
}

TEST(Compare, ZeroInBothIsFlaggedZeroInOneIsNot)
{
  dt::Observables got = two_atoms(), ref = two_atoms();
  got.virial_atom.assign(12, 0.0);
  ref.virial_atom.assign(12, 0.0);
  ref.energy_atom.assign(2, 0.0);  // the run's are not zero: a real (failing) comparison
  const dt::Deviation d = dt::compare(got, ref);
  ASSERT_EQ(d.both_zero.size(), 1u);
  EXPECT_EQ(d.both_zero[0], "virial_atom");
  EXPECT_TRUE(d.nonfinite.empty());
  EXPECT_GT(d.energy_atom, 0.0);
}

TEST(Compare, DescribeLeavesOutWhatWasNotCompared)
{
  dt::Deviation d = dt::compare(two_atoms(), two_atoms());
  EXPECT_NE(dt::describe(d).find("positions 0"), std::string::npos);
  d.positions = NAN;  // after `run 0` positions are the input against itself
  EXPECT_EQ(dt::describe(d).find("positions"), std::string::npos) << dt::describe(d);
}

}  // namespace
