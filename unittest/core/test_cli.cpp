// distspec-spec, run as a user runs it: exit codes, what it prints, byte-exact format.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string kTool = DISTSPEC_SPEC_TOOL;
const std::string kSpecs = DISTSPEC_SHARED_SPECS_DIR;
const std::string kPotentials = DISTSPEC_POTENTIALS_DIR;

struct ToolRun {
  int status;
  std::string output;  // stdout, then stderr when asked for
};

ToolRun run(const std::string& args, bool with_stderr = true) {
  const std::string command = "'" + kTool + "' " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  ToolRun r{-1, {}};
  FILE* pipe = popen(command.c_str(), "r");  // closed by pclose below
  if (!pipe) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Cli, CheckAcceptsAGoldenSpecAndSummarisesIt) {
  const ToolRun r = run("check '" + kSpecs + "/mace_cueq_halo.json'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("mace_cueq_halo.json: valid MLIPSpec v2"), std::string::npos);
  EXPECT_NE(
      r.output.find("policy         halo (scatter_mode halo_correction, gather_mode halo_read)"),
      std::string::npos);
  EXPECT_NE(r.output.find("cuequivariance::fused_tensor_product  pass-through"), std::string::npos);
  EXPECT_NE(r.output.find("-> refresh neighbours (per-layer halo refresh)"), std::string::npos);
  EXPECT_NE(r.output.find("stress           per_graph  all_reduce"), std::string::npos);
}

TEST(Cli, CheckReportsABadFileAndExitsOne) {
  const std::string bad =
      write_temp("bad_policy.json", R"({"version": 2, "core": {"policy": {"kind": "halo2"}}})");
  const ToolRun r = run("check '" + kSpecs + "/lj_halo.json' '" + bad + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("lj_halo.json: valid MLIPSpec v2"),
            std::string::npos);  // the good one still checked
  EXPECT_NE(r.output.find(
                bad + ": /core/policy/kind: unknown policy 'halo2'; expected one of local, shard, "
                      "graph_parallel, halo, refresh_halo"),
            std::string::npos)
      << r.output;
}

TEST(Cli, CheckReportsAMissingFile) {
  const ToolRun r = run("check /nonexistent/spec.json");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.output, "/nonexistent/spec.json: cannot open: No such file or directory\n");
}

TEST(Cli, StrictRejectsHelpersWithoutNativeMeaning) {
  const std::string spec =
      write_temp("unknown_helper.json", R"({"version": 2, "core": {"policy": {"kind": "halo"},
      "third_party_helpers": [{"kind": "python", "module_path": "pkg", "attr_name": "mystery"}]}})");
  const ToolRun lenient = run("check '" + spec + "'");
  EXPECT_EQ(lenient.status, 0);
  EXPECT_NE(lenient.output.find("-> not applicable natively"), std::string::npos);
  const ToolRun strict = run("check --strict '" + spec + "'");
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.output.find(
                spec + ": /core/third_party_helpers/0: helper 'pkg.mystery' has no native meaning"),
            std::string::npos)
      << strict.output;
}

TEST(Cli, FormatPrintsTheCanonicalBytes) {
  for (const char* name : {"uma_refresh_halo.json", "aimnet2_halo.json", "ewald_halo.json"}) {
    const ToolRun r = run("format '" + kSpecs + "/" + name + "'", false);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.output, read_file(kSpecs + "/" + name)) << name;
  }
  const std::string messy =
      write_temp("messy.json", R"({"core": {"policy": {"kind": "halo"}}, "version": 2,
      "output_kinds": {"forces": "per_node"}})");
  const ToolRun r = run("format '" + messy + "'", false);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find(
                "\"output_kinds\": [\n    [\n      \"forces\",\n      \"per_node\"\n    ]\n  ]\n}"),
            std::string::npos)
      << r.output;
}

// The spec a built-in architecture runs under when its model file names none is the shipped
// file, byte for byte; the torch kind has none (the exporter writes each model's).
TEST(Cli, DefaultPrintsTheShippedSpecOfAnArchitecture) {
  for (const char* architecture : {"lj", "eam", "mpnn", "ewald"}) {
    const ToolRun r = run(std::string("default ") + architecture, false);
    EXPECT_EQ(r.status, 0) << architecture;
    EXPECT_EQ(r.output, read_file(kPotentials + "/specs/" + architecture + "_halo.json")) << architecture;
  }
  const ToolRun torch = run("default torch");
  EXPECT_EQ(torch.status, 1);
  EXPECT_NE(torch.output.find("architecture 'torch' has no default spec"), std::string::npos) << torch.output;
  EXPECT_EQ(run("default eams").status, 1);
}

// A LAMMPS potential file: `model` prints the model file it stands for, which, saved beside the
// potential file, checks as a model of the file's elements and cutoff; `check` takes the
// potential file itself as that model.
TEST(Cli, ModelPrintsTheModelFileOfAPotentialFile) {
  const std::string dir = ::testing::TempDir();
  write_temp("NiAlH_jea.eam.fs", read_file(kPotentials + "/NiAlH_jea.eam.fs"));
  const ToolRun r = run("model '" + kPotentials + "/NiAlH_jea.eam.fs'", false);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("\"file_format\": \"fs\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"parameters_file\": \"NiAlH_jea.eam.fs\""), std::string::npos) << r.output;
  const std::string model = write_temp("nialh.json", r.output);
  const ToolRun checked = run("check '" + model + "'");
  EXPECT_EQ(checked.status, 0) << checked.output;
  EXPECT_NE(checked.output.find("valid DISTSPEC model (eam, elements Ni Al H, cutoff 5.65 metal"), std::string::npos)
      << checked.output;
  EXPECT_NE(checked.output.find("spec: eam_halo.json (built in)"), std::string::npos) << checked.output;
  const ToolRun direct = run("check '" + kPotentials + "/Cu_u3.eam'");
  EXPECT_EQ(direct.status, 0) << direct.output;
  EXPECT_NE(direct.output.find("valid DISTSPEC model (eam, elements Cu"), std::string::npos) << direct.output;
  const ToolRun not_one = run("model '" + kSpecs + "/ewald_halo.json'");
  EXPECT_EQ(not_one.status, 1);
  EXPECT_NE(not_one.output.find("not a LAMMPS potential file"), std::string::npos) << not_one.output;
}

TEST(Cli, BadUsageExitsTwo) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("check").status, 2);
  EXPECT_EQ(run("format a b").status, 2);
  EXPECT_EQ(run("frobnicate x").status, 2);
  EXPECT_EQ(run("check --bogus x").status, 2);
  EXPECT_EQ(run("default").status, 2);
  EXPECT_EQ(run("model a b").status, 2);
  const ToolRun help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.output.rfind("usage: distspec-spec check", 0), 0u);
}

}  // namespace
