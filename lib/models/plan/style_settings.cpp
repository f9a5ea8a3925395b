#include "models/plan/style_settings.h"

#include <stdexcept>

#include "distspec/error.h"

namespace distspec::models {
namespace {

[[noreturn]] void bad(const std::string &message, const std::string &hint)
{
  throw distspec::Error("input.keyword", "", message, hint);
}

// The value after keyword `words[i]`, which must be one of `allowed` (when given).
const std::string &value_of(const std::vector<std::string> &words, std::size_t i,
                            const std::vector<std::string> &allowed)
{
  const std::string &key = words[i];
  std::string expected;
  for (const auto &a : allowed) expected += (expected.empty() ? "" : "|") + a;
  if (i + 1 >= words.size())
    bad("keyword '" + key + "' needs a value", "write '" + key + " " + (expected.empty() ? "FILE" : expected) + "'");
  const std::string &value = words[i + 1];
  if (!allowed.empty()) {
    bool ok = false;
    for (const auto &a : allowed) ok = ok || value == a;
    if (!ok) bad("keyword '" + key + "' got '" + value + "'", "expected one of " + expected);
  }
  return value;
}

bool yes_no(const std::vector<std::string> &words, std::size_t i)
{
  return value_of(words, i, {"yes", "no"}) == "yes";
}

}  // namespace

StyleSettings StyleSettings::parse(const std::vector<std::string> &words)
{
  StyleSettings s;
  for (std::size_t i = 0; i < words.size(); i += 2) {
    const std::string &key = words[i];
    if (key == "spec") {
      s.spec_file = value_of(words, i, {});
    } else if (key == "halo") {
      s.halo = value_of(words, i, {"per_layer", "expanded"}) == "expanded" ? distspec::HaloStrategy::expanded
                                                                               : distspec::HaloStrategy::per_layer;
    } else if (key == "device") {
      s.device = value_of(words, i, {"cpu", "cuda"}) == "cuda" ? distspec::Device::cuda : distspec::Device::cpu;
    } else if (key == "strict") {
      s.strict = yes_no(words, i);
    } else if (key == "precision") {
      s.precision = value_of(words, i, {"fp64", "fp32"});
    } else if (key == "gpu_share") {
      s.gpu_share = yes_no(words, i);
    } else if (key == "timing") {
      s.timing = yes_no(words, i);
    } else if (key == "cuda_graph") {
      s.cuda_graph = yes_no(words, i);
    } else if (key == "edges") {
      s.edges = value_of(words, i, {"cutoff", "skin"});
    } else if (key == "threads") {
      const std::string &value = value_of(words, i, {});
      std::size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(value, &used);
      } catch (const std::exception &) {
        used = 0;
      }
      if (used != value.size() || n < 1 || n > 1024)
        bad("keyword 'threads' got '" + value + "'", "expected a whole number of threads per MPI rank, 1 to 1024");
      s.threads = n;
    } else {
      bad("unknown keyword '" + key + "'",
          "expected spec, halo, device, precision, strict, gpu_share, timing, threads, edges or cuda_graph");
    }
  }
  // A captured step replays fixed shapes: its edge list may change only at a build.
  if (s.cuda_graph && s.edges != "skin")
    bad("keyword 'cuda_graph yes' needs 'edges skin'",
        "a captured step keeps its edge list until the next neighbour-list build: add 'edges skin' (for a graph "
        "blind beyond its cutoff), or leave cuda_graph no");
  return s;
}

const char* StyleSettings::name(distspec::HaloStrategy h)
{
  return h == distspec::HaloStrategy::expanded ? "expanded" : "per_layer";
}

}  // namespace distspec::models
