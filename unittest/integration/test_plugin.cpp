// The plugin loads into the LAMMPS it was built against, registers its styles, and LAMMPS
// runs MD with it loaded.
#include <gtest/gtest.h>

#include "lammps_session.h"
#include "library.h"

using distspec::testing::LammpsSession;

TEST(Plugin, LoadsAndListsItsStyles)
{
  LammpsSession lmp;
  lmp.run("plugin load " + distspec::testing::plugin_path());
  void* h = lmp.handle();
  EXPECT_TRUE(lammps_has_style(h, "pair", "distspec"));
  bool listed = false;
  const int n = lammps_plugin_count();
  for (int i = 0; i < n; ++i) {
    char style[64], name[64];
    lammps_plugin_name(i, style, name, sizeof(name));
    listed = listed || (std::string(style) == "pair" && std::string(name) == "distspec");
  }
  EXPECT_TRUE(listed);
}

TEST(Plugin, ShortMdWithANativeStyle)
{
  LammpsSession lmp;
  lmp.run("plugin load " + distspec::testing::plugin_path() + R"(
units lj
lattice fcc 0.8442
region box block 0 6 0 6 0 6
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
fix 1 all nve
run 50
)");
  EXPECT_EQ(lmp.natoms(), 864.0);
  // Known physics of this deck (LAMMPS bench/in.lj): the liquid settles near T = 0.7.
  EXPECT_GT(lmp.thermo("temp"), 0.5);
  EXPECT_LT(lmp.thermo("temp"), 1.0);
  EXPECT_LT(lmp.thermo("pe"), -4.0);
}
