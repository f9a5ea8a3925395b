// The keywords of pair_style distspec, parsed without LAMMPS: every keyword's values, the
// defaults, and each mistake as an error that names the keyword, what it got and what it takes.
#include <gtest/gtest.h>

#include "distspec/error.h"
#include "model_test_util.h"
#include "models/plan/style_settings.h"

namespace distspec::test {
namespace {

using models::StyleSettings;

TEST(StyleSettings, DefaultsAndEveryKeyword) {
  const StyleSettings none = StyleSettings::parse({});
  EXPECT_EQ(none.spec_file, "");
  EXPECT_EQ(none.halo, HaloStrategy::per_layer);
  EXPECT_EQ(none.device, Device::cpu);
  EXPECT_EQ(none.precision, "");
  EXPECT_FALSE(none.strict || none.gpu_share || none.timing);
  EXPECT_EQ(none.threads, 1);
  EXPECT_EQ(none.edges, "cutoff");
  EXPECT_FALSE(none.cuda_graph);

  const StyleSettings all = StyleSettings::parse({"spec", "my.json", "halo", "expanded", "device", "cuda", "precision",
                                                  "fp32", "strict", "yes", "gpu_share", "yes", "timing", "yes",
                                                  "threads", "8", "edges", "skin", "cuda_graph", "yes"});
  EXPECT_EQ(all.spec_file, "my.json");
  EXPECT_EQ(all.halo, HaloStrategy::expanded);
  EXPECT_EQ(all.device, Device::cuda);
  EXPECT_EQ(all.precision, "fp32");
  EXPECT_TRUE(all.strict && all.gpu_share && all.timing);
  EXPECT_EQ(all.threads, 8);
  EXPECT_EQ(all.edges, "skin");
  EXPECT_TRUE(all.cuda_graph);
  EXPECT_STREQ(StyleSettings::name(all.halo), "expanded");
  EXPECT_STREQ(StyleSettings::name(none.halo), "per_layer");
  // A later keyword wins, as LAMMPS' own styles read repeated keywords.
  EXPECT_EQ(StyleSettings::parse({"threads", "2", "threads", "3"}).threads, 3);
}

TEST(StyleSettings, MistakesNameTheKeyword) {
  struct Row {
    std::vector<std::string> words;
    const char* message;
    const char* hint;
  };
  for (const Row& row : {
           Row{{"halo"}, "keyword 'halo' needs a value", "write 'halo per_layer|expanded'"},
           Row{{"spec"}, "keyword 'spec' needs a value", "write 'spec FILE'"},
           Row{{"device", "gpu"}, "keyword 'device' got 'gpu'", "expected one of cpu|cuda"},
           Row{{"strict", "true"}, "keyword 'strict' got 'true'", "expected one of yes|no"},
           Row{{"threads", "0"}, "keyword 'threads' got '0'", "1 to 1024"},
           Row{{"threads", "2x"}, "keyword 'threads' got '2x'", "1 to 1024"},
           Row{{"threads", "99999999999"}, "keyword 'threads' got '99999999999'", "1 to 1024"},
           Row{{"edges", "all"}, "keyword 'edges' got 'all'", "expected one of cutoff|skin"},
           Row{{"cuda_graph", "yes"}, "keyword 'cuda_graph yes' needs 'edges skin'", "add 'edges skin'"},
           Row{{"cutoff", "5.0"}, "unknown keyword 'cutoff'", "expected spec, halo, device"},
       }) {
    SCOPED_TRACE(row.words.front());
    const Error e = error_of([&] { StyleSettings::parse(row.words); });
    EXPECT_EQ(e.id(), "input.keyword");
    EXPECT_EQ(e.message(), row.message);
    EXPECT_NE(e.hint().find(row.hint), std::string::npos) << e.hint();
  }
}

}  // namespace
}  // namespace distspec::test
