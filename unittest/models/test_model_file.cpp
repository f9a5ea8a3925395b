// The model-file reader: the shipped model files, spec sources (file, inline, override), and
// every malformed value as an error with the model file's name, the JSON pointer and the
// message pinned.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "distspec/error.h"
#include "distspec/spec/spec_json.h"
#include "models/factory/model_factory.h"
#include "models/model_file.h"
#include "model_test_util.h"

namespace distspec::test {
namespace {

using models::Json;

// A model file that does not exist on disk, beside the shipped ones so its relative paths work.
const std::string kPath = potentials("virtual.json");

Json shipped(const std::string& name) { return Json::parse(models::read_file_bytes(potentials(name))); }

models::ModelFile parse(const Json& j, const std::string& spec_override = "") {
  return models::parse_model_file(j.dump(), kPath, spec_override, models::architecture_table());
}

// Parses `j` (and builds its model) and expects the error at `pointer` with `message`, and the
// `id` and `hint` where given.
void expect_error(const Json& j, const std::string& pointer, const std::string& message, const std::string& id = "",
                  const std::string& hint = "") {
  const Error e = error_of([&] { models::make_model(parse(j)); });
  EXPECT_EQ(e.file(), kPath);
  EXPECT_EQ(e.pointer(), pointer);
  EXPECT_EQ(e.message(), message);
  if (!id.empty()) {
    EXPECT_EQ(e.id(), id);
  }
  if (!hint.empty()) {
    EXPECT_EQ(e.hint(), hint);
  }
}

Json with(Json j, const std::string& pointer, const Json& value) {
  j[Json::json_pointer(pointer)] = value;
  return j;
}

Json without(Json j, const std::string& key) {
  j.erase(key);
  return j;
}

TEST(ModelFile, ShippedFilesReadAndBuild) {
  struct Expect {
    const char* file;
    const char* architecture;
    std::vector<std::string> elements;
    double cutoff;
    const char* spec;
    const char* parameters_file;
  };
  for (const Expect& x : {Expect{"lj_argon.json", "lj", {"Ar"}, 8.5, "specs/lj_halo.json", ""},
                          Expect{"lj_binary.json", "lj", {"Ar", "Kr"}, 9.0, "specs/lj_halo.json", ""},
                          Expect{"cu_eam_u3.json", "eam", {"Cu"}, 4.95, "specs/eam_halo.json", "Cu_u3.eam"},
                          Expect{"cuni_eam_alloy.json", "eam", {"Cu", "Ni"}, 6.394332378, "specs/eam_halo.json",
                                 "CuNi.eam.alloy"}}) {
    SCOPED_TRACE(x.file);
    const models::ModelFile m = models::read_model_file(potentials(x.file));
    EXPECT_EQ(m.architecture, x.architecture);
    EXPECT_EQ(m.units, "metal");
    EXPECT_EQ(m.elements, x.elements);
    EXPECT_EQ(m.cutoff, x.cutoff);
    EXPECT_FALSE(m.source.empty());
    EXPECT_FALSE(m.license.empty());
    EXPECT_EQ(m.spec_source, potentials(x.spec));
    EXPECT_EQ(m.spec, read_mlip_spec_file(potentials(x.spec)));
    EXPECT_EQ(m.parameters_file, *x.parameters_file ? potentials(x.parameters_file) : "");
    EXPECT_EQ(m.force_strategy, models::ForceStrategy::analytic);
    const auto model = models::make_model(m);
    EXPECT_EQ(model->info().elements, x.elements);
    EXPECT_EQ(model->info().cutoff, x.cutoff);
    // Every op the model calls is registered.
    models::register_builtin_ops();
    for (const OpUse& op : model->info().ops) EXPECT_TRUE(OpRegistry::global().contains(op.qualname)) << op.qualname;
  }
}

// The spec files in potentials/specs are nvalchemi's bytes: reading and writing gives them back.
// A LAMMPS potential file given as the model file (a user switching from pair_style eam,
// eam/alloy or eam/fs) reads as the model file it stands for: the file's elements, its cutoff
// (against the shipped model files of the same files), its format, the file itself, and the
// architecture's built-in spec (the bytes of potentials/specs/eam_halo.json).
TEST(ModelFile, LammpsPotentialFileReadsAsItsModelFile) {
  struct Expect {
    const char* file;
    const char* format;
    std::vector<std::string> elements;
    double cutoff;
  };
  const double cu_u3 = models::read_model_file(potentials("cu_eam_u3.json")).cutoff;
  const double cuni = models::read_model_file(potentials("cuni_eam_alloy.json")).cutoff;
  for (const Expect& x : {Expect{"CuNi.eam.alloy", "setfl", {"Ni", "Cu"}, cuni},
                          Expect{"Cu_u3.eam", "funcfl", {"Cu"}, cu_u3},
                          Expect{"NiAlH_jea.eam.fs", "fs", {"Ni", "Al", "H"}, 5.65}}) {
    SCOPED_TRACE(x.file);
    const std::string path = potentials(x.file);
    const models::ModelFile m = models::read_model_file(path);
    EXPECT_EQ(m.architecture, "eam");
    EXPECT_EQ(m.units, "metal");
    EXPECT_EQ(m.elements, x.elements);
    EXPECT_EQ(m.parameters.at("file_format"), x.format);
    EXPECT_EQ(m.parameters_file, path);
    EXPECT_NEAR(m.cutoff, x.cutoff, 1e-9 * x.cutoff);  // the shipped files round the file's
    EXPECT_EQ(m.spec_source, "eam_halo.json (built in)");
    EXPECT_EQ(m.spec, read_mlip_spec_file(potentials("specs/eam_halo.json")));
    EXPECT_EQ(models::make_model(m)->info().elements, x.elements);
  }
  // Anything else that is not JSON still gets the JSON reader's error.
  const Error text =
      error_of([&] { models::parse_model_file("pair_style eam\n", kPath, "", models::architecture_table()); });
  EXPECT_NE(text.message().find("invalid JSON"), std::string::npos) << text.what();
}

// The format follows the name as LAMMPS names its files; under another name it is the one
// format the file parses as with nothing left over (an eam/fs file of three elements also
// parses as setfl, with values to spare). A file named as one format that is another is that
// format's error, with the line.
TEST(ModelFile, PotentialFileFormatFromNameOrContents) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("distspec_potential_names_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto copy_as = [&](const char* shipped, const char* name) {
    const fs::path to = dir / name;
    fs::copy_file(potentials(shipped), to, fs::copy_options::overwrite_existing);
    return to.string();
  };
  const std::string fs_file = copy_as("NiAlH_jea.eam.fs", "NiAlH.potential");
  const std::string setfl_file = copy_as("CuNi.eam.alloy", "CuNi.potential");
  const std::string misnamed = copy_as("CuNi.eam.alloy", "CuNi.eam.fs");
  EXPECT_EQ(models::read_model_file(fs_file).parameters.at("file_format"), "fs");
  EXPECT_EQ(models::read_model_file(setfl_file).parameters.at("file_format"), "setfl");
  const Error e = error_of([&] { models::read_model_file(misnamed); });
  EXPECT_EQ(e.file(), misnamed);
  EXPECT_EQ(e.id(), "model.table");
  EXPECT_NE(e.message().find("line "), std::string::npos) << e.what();
  fs::remove_all(dir);
}

TEST(ModelFile, ShippedSpecsRoundTripByteForByte) {
  for (const char* name : {"specs/lj_halo.json", "specs/eam_halo.json"}) {
    const std::string bytes = models::read_file_bytes(potentials(name));
    EXPECT_EQ(write_mlip_spec(read_mlip_spec(bytes, name)), bytes) << name;
  }
}

TEST(ModelFile, SpecInlineOrOverridden) {
  const Json lj = shipped("lj_argon.json");
  const Json spec = Json::parse(models::read_file_bytes(potentials("specs/lj_halo.json")));
  const models::ModelFile inline_spec = parse(with(lj, "/spec", spec));
  EXPECT_EQ(inline_spec.spec_source, "inline");
  EXPECT_EQ(inline_spec.spec, read_mlip_spec_file(potentials("specs/lj_halo.json")));

  const std::string override_path = potentials("specs/eam_halo.json");
  const models::ModelFile overridden = parse(lj, override_path);
  EXPECT_EQ(overridden.spec_source, override_path);
  EXPECT_EQ(overridden.spec.core.custom_ops.at(0).op, "distspec_eam::density");
  // With an override the model file needs no spec of its own.
  EXPECT_EQ(parse(without(lj, "spec"), override_path).spec_source, override_path);
  // Nor without: a built-in architecture runs under its shipped spec, compiled in.
  const models::ModelFile builtin = parse(without(lj, "spec"));
  EXPECT_EQ(builtin.spec_source, "lj_halo.json (built in)");
  EXPECT_EQ(builtin.spec, read_mlip_spec_file(potentials("specs/lj_halo.json")));
  for (const char* architecture : {"lj", "eam", "mpnn", "ewald"}) {
    const auto d = models::default_spec(architecture);
    ASSERT_TRUE(d) << architecture;
    EXPECT_EQ(d->text, models::read_file_bytes(potentials("specs/" + d->name))) << architecture;
  }
  EXPECT_FALSE(models::default_spec("torch"));
}

TEST(ModelFile, RuntimeDefaultsAndValues) {
  const Json lj = without(shipped("lj_argon.json"), "runtime");
  const models::ModelFile m = parse(lj);
  EXPECT_TRUE(m.autograd_outputs.empty());
  EXPECT_EQ(m.force_strategy, models::ForceStrategy::analytic);
  const models::ModelFile a =
      parse(with(lj, "/runtime", Json{{"autograd_outputs", {"forces"}}, {"force_strategy", "autograd"}}));
  EXPECT_EQ(a.autograd_outputs, std::vector<std::string>{"forces"});
  EXPECT_EQ(a.force_strategy, models::ForceStrategy::autograd);
}

TEST(ModelFileErrors, TopLevelValues) {
  const Json lj = shipped("lj_argon.json");
  expect_error(with(lj, "/format", "nvalchemi"), "/format", "expected \"distspec-model\", found \"nvalchemi\"",
               "model.value", "this is not a DISTSPEC model file");
  expect_error(with(lj, "/format_version", 2), "/format_version", "expected 1, found 2");
  expect_error(without(lj, "architecture"), "/architecture", "missing required key 'architecture'", "model.missing_key");
  expect_error(with(lj, "/units", "eV"), "/units", "unknown value 'eV'", "model.value",
               "expected one of lj, real, metal, si, cgs, electron, micro, nano");
  expect_error(with(lj, "/parameter_file", "x"), "/parameter_file", "unknown key 'parameter_file'", "model.unknown_key",
               "expected one of format, format_version, architecture, description, source, license, units, cutoff, "
               "elements, parameters, parameters_file, spec, runtime");
  expect_error(with(lj, "/runtime/force_strategy", "magic"), "/runtime/force_strategy", "unknown value 'magic'",
               "model.value", "expected one of analytic, autograd");
  expect_error(with(lj, "/runtime/autograd_outputs", {"forces", 1}), "/runtime/autograd_outputs/1",
               "expected a string, found an integer");
}

TEST(ModelFileErrors, UnknownArchitectureListsTheKnownOnes) {
  const Error e = error_of([] { parse(with(shipped("lj_argon.json"), "/architecture", "mace")); });
  EXPECT_EQ(e.pointer(), "/architecture");
  EXPECT_EQ(e.message(), "unknown value 'mace'");
  const std::string known = models::join_names(models::architecture_names());
  EXPECT_NE(known.find("lj, eam"), std::string::npos);
  EXPECT_EQ(e.hint(), "expected one of " + known);
  EXPECT_EQ(std::string(e.what()), kPath + ": /architecture: unknown value 'mace'; expected one of " + known);
}

TEST(ModelFileErrors, Cutoff) {
  const Json lj = shipped("lj_argon.json");
  expect_error(with(lj, "/cutoff", -1.0), "/cutoff", "expected a positive number, found -1.0");
  expect_error(with(lj, "/cutoff", 0), "/cutoff", "expected a positive number, found 0");
  expect_error(with(lj, "/cutoff", "8.5"), "/cutoff", "expected a number, found a string", "model.type");
  // JSON has no infinity: an overflowing literal is refused by the parser.
  std::string bytes = lj.dump();
  bytes.replace(bytes.find("\"cutoff\":8.5"), 12, "\"cutoff\":1e999");
  const Error e = error_of([&] { models::parse_model_file(bytes, kPath, "", models::architecture_table()); });
  EXPECT_EQ(e.file(), kPath);
  EXPECT_EQ(e.id(), "spec.parse");
  EXPECT_NE(e.message().find("1e999"), std::string::npos) << e.message();
}

TEST(ModelFileErrors, Elements) {
  const Json lj = shipped("lj_argon.json");
  expect_error(with(lj, "/elements", Json::array()), "/elements", "expected at least one element, found an empty list");
  expect_error(with(lj, "/elements", {"Ar", "Ar"}), "/elements/1", "element 'Ar' is listed twice (also at /elements/0)");
  expect_error(with(lj, "/elements", {"Ar", 18}), "/elements/1", "expected a string, found an integer");
  expect_error(with(lj, "/elements", "Ar"), "/elements", "expected an array, found a string");
}

TEST(ModelFileErrors, ParametersAndFiles) {
  const Json lj = shipped("lj_argon.json");
  expect_error(without(lj, "parameters"), "/parameters", "missing both 'parameters' and 'parameters_file'");
  expect_error(with(lj, "/parameters", Json::array()), "/parameters", "expected an object, found an array");
  expect_error(with(lj, "/parameters_file", "missing.eam"), "/parameters_file",
               "cannot read file '" + potentials("missing.eam") + "'", "model.io");
  expect_error(with(lj, "/parameters_file", "Cu_u3.eam"), "/parameters_file",
               "architecture 'lj' takes its parameters inline");
  expect_error(with(lj, "/parameters/pairs/0/cutoff", 9.0), "/parameters/pairs/0/cutoff",
               "pair cutoff 9.0 exceeds the model cutoff 8.5");
}

TEST(ModelFileErrors, Spec) {
  const Json lj = shipped("lj_argon.json");
  expect_error(with(without(lj, "spec"), "/architecture", "torch"), "/spec", "missing required key 'spec'");
  expect_error(with(lj, "/spec", 2), "/spec", "expected an MLIPSpec object or a path string, found an integer");
  // A spec file the model file names that cannot be read: a case row (errors_model_lj.json
  // model_spec_path_missing), the route by which a spec file reaches the style (unittest/README.md).
  // An inline spec's errors point into the model file.
  Json spec = Json::parse(models::read_file_bytes(potentials("specs/lj_halo.json")));
  spec["core"]["policy"]["kind"] = "halo2";
  const Error e = error_of([&] { parse(with(lj, "/spec", spec)); });
  EXPECT_EQ(e.file(), kPath);
  EXPECT_EQ(e.pointer(), "/spec/core/policy/kind");
  EXPECT_EQ(e.message(), "unknown policy 'halo2'");
  EXPECT_EQ(e.hint(), "expected one of local, shard, graph_parallel, halo, refresh_halo");
  // An override that cannot be read is named as such.
  const Error o = error_of([&] { parse(lj, "no/such/spec.json"); });
  EXPECT_EQ(o.file(), "no/such/spec.json");
}

TEST(ModelFileErrors, NotJsonOrNotThere) {
  const Error syntax =
      error_of([] { models::parse_model_file("{\"format\": ", kPath, "", models::architecture_table()); });
  EXPECT_EQ(syntax.file(), kPath);
  EXPECT_EQ(syntax.id(), "spec.parse");
  const Error missing = error_of([] { models::read_model_file("no/such/model.json"); });
  EXPECT_EQ(missing.file(), "no/such/model.json");
  EXPECT_EQ(missing.id(), "model.io");
  EXPECT_EQ(missing.message(), "cannot read the model file");
}

// The spec a model file names is digested over its canonical JSON: the same whether in its file
// or inline, whatever the order and indentation; another spec digests otherwise; a spec given on
// the pair_style line or built in is not the model file's, and has none.
TEST(ModelFile, SpecDigestInlineOrInItsFile) {
  const Json lj = shipped("lj_argon.json");
  const models::ModelFile in_file = parse(lj);
  // Python: hashlib.sha256(json.dumps(json.load(open("potentials/specs/lj_halo.json")),
  // sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
  EXPECT_EQ(in_file.spec_sha256, "2a86ad4083de588da8de7040dcf6a2f64589d8b3059210663e30203353637edd");
  const Json spec = Json::parse(models::read_file_bytes(potentials("specs/lj_halo.json")));
  Json reordered = Json::object();
  for (auto it = spec.rbegin(); it != spec.rend(); ++it) reordered[it.key()] = it.value();
  EXPECT_EQ(parse(with(lj, "/spec", reordered)).spec_sha256, in_file.spec_sha256);
  EXPECT_NE(parse(with(lj, "/spec", with(spec, "/system_reductions", false))).spec_sha256, in_file.spec_sha256);
  EXPECT_EQ(parse(lj, potentials("specs/eam_halo.json")).spec_sha256, "");
  EXPECT_EQ(parse(without(lj, "spec")).spec_sha256, "");
}

// A zip archive of stored records, as PyTorch writes them (CRCs left zero: nothing here reads
// them); with `zip64` the end records say so, as an archive of more than 65 535 records must.
std::string zip_of(const std::vector<std::pair<std::string, std::string>>& records, bool zip64 = false) {
  auto le = [](std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  std::string out, central;
  for (const auto& [name, data] : records) {
    const std::uint64_t offset = out.size();
    out += "PK\x03\x04";
    le(out, 20, 2), le(out, 0, 2), le(out, 0, 2), le(out, 0, 4), le(out, 0, 4);
    le(out, data.size(), 4), le(out, data.size(), 4), le(out, name.size(), 2), le(out, 0, 2);
    out += name + data;
    central += "PK\x01\x02";
    le(central, 20, 2), le(central, 20, 2), le(central, 0, 2), le(central, 0, 2), le(central, 0, 4), le(central, 0, 4);
    le(central, data.size(), 4), le(central, data.size(), 4), le(central, name.size(), 2);
    le(central, zip64 ? 12 : 0, 2), le(central, 0, 2), le(central, 0, 2), le(central, 0, 2), le(central, 0, 4);
    le(central, zip64 ? 0xffffffffu : offset, 4);
    central += name;
    if (zip64) le(central, 1, 2), le(central, 8, 2), le(central, offset, 8);
  }
  const std::uint64_t directory = out.size();
  out += central;
  if (zip64) {
    const std::uint64_t end64 = out.size();
    out += "PK\x06\x06";
    le(out, 44, 8), le(out, 45, 2), le(out, 45, 2), le(out, 0, 4), le(out, 0, 4);
    le(out, records.size(), 8), le(out, records.size(), 8), le(out, central.size(), 8), le(out, directory, 8);
    out += "PK\x06\x07";
    le(out, 0, 4), le(out, end64, 8), le(out, 1, 4);
  }
  out += "PK\x05\x06";
  le(out, 0, 2), le(out, 0, 2), le(out, zip64 ? 0xffff : records.size(), 2), le(out, zip64 ? 0xffff : records.size(), 2);
  le(out, central.size(), 4), le(out, zip64 ? 0xffffffffu : directory, 4), le(out, 0, 2);
  return out;
}

// What pair_coeff says of `bytes` given as the model file `path`.
Error not_a_model_file(const std::string& bytes, const std::string& path = "run/toy.pt2") {
  return error_of([&] { models::parse_model_file(bytes, path, "", models::architecture_table()); });
}

// A file of another kind where the model file belongs: what it looks like (from the records of
// PyTorch's zip archive and the names its pickle holds) and which file to give instead.
TEST(ModelFileErrors, AnotherKindOfFileSaysWhatItIsAndWhatToGive) {
  using namespace std::string_literals;
  struct Case {
    std::string name, bytes, looks_like, hint;
  };
  const std::string pt2_meta = R"({"distspec.json": "{}", "AOTI_DEVICE_KEY": "cpu"})";
  const std::vector<Case> cases{
      {"mace", zip_of({{"m/data.pkl", "\x80\x02" "cmace.modules.models\nScaleShiftMACE\nq\x00"s}, {"m/version", "3\n"}}),
       "this is a MACE model saved by mace-torch", "`distspec-export --from mace run/toy.pt2 --out DIR --name NAME`"},
      {"sevennet", zip_of({{"c/data.pkl", "\x80\x02}X\x10\x00\x00\x00model_state_dictX\x06\x00\x00\x00" "config"s}}),
       "this is a SevenNet checkpoint", "--from sevennet run/toy.pt2 --precision fp32"},
      {"nequip checkpoint", zip_of({{"c/data.pkl", "X\x19\x00\x00\x00pytorch-lightning_versionX\x06\x00\x00\x00nequip"s}}),
       "this is a nequip training checkpoint", "--from nequip run/toy.pt2"},
      {"nequip package", zip_of({{"p/.data/extern_modules", ""}, {"p/nequip/model.pkl", ""}, {"p/.data/version", "6"}}),
       "this is a nequip package", "--from nequip run/toy.pt2"},
      {"our .pt2", zip_of({{"g/data/aotinductor/model/c1.wrapper.so", "\x7f" "ELF"},
                           {"g/data/aotinductor/model/c1.wrapper_metadata.json", pt2_meta}, {"g/.data/version", "1"}}),
       "this is an AOTInductor package (.pt2) distspec-export wrote", "the model file distspec-export wrote beside it, run/toy.json"},
      {"our .pt", zip_of({{"g/extra/distspec.json", "{}"}, {"g/data.pkl", ""}, {"g/code/__torch__.py", ""},
                          {"g/constants.pkl", ""}}),
       "this is a TorchScript module (.pt) distspec-export wrote", "run/toy.json"},
      {"deployed", zip_of({{"d/extra/chemical_symbols_to_index", "Si"}, {"d/code/__torch__.py", ""}, {"d/constants.pkl", ""}}),
       "this is a TorchScript module SevenNet deployed", "`distspec-export --deployed run/toy.pt2 --elements"},
      {"other .pt2", zip_of({{"g/data/aotinductor/model/c1.wrapper_metadata.json", R"({"AOTI_DEVICE_KEY": "cpu"})"}}),
       "this is an AOTInductor package (.pt2, data/aotinductor/ inside) that distspec-export did not write",
       "pair_coeff takes a DISTSPEC model file (JSON)"},
      {"torch.save", zip_of({{"a/data.pkl", "\x80\x02}q\x00."s}, {"a/data/0", "0000"}}),
       "this is a file torch.save wrote", "--from mace FILE, --from sevennet FILE, --from nequip FILE, or --module"},
      {"zip64", zip_of({{"m/data.pkl", "cmace.modules.models\nMACE\n"}}, true), "this is a MACE model", "--from mace"},
      {"plain zip", zip_of({{"notes/readme.txt", "hello"}}), "this is a zip archive ('notes/readme.txt'), not one PyTorch writes",
       "pair_coeff takes a DISTSPEC model file (JSON)"},
      {"cut zip", zip_of({{"m/data.pkl", "x"}}).substr(0, 20), "this is a zip archive cut short", "distspec-export"},
      {"pickle", std::string("\x80\x04\x95\x00\x00", 5), "this is a Python pickle", "distspec-export"},
      {"binary", std::string("\x01\x02\x00\x03", 4), "this is a binary file (it starts '\\x01\\x02\\x00\\x03')", "distspec-export"},
  };
  for (const Case& c : cases) {
    const Error e = not_a_model_file(c.bytes);
    EXPECT_EQ(e.file(), "run/toy.pt2") << c.name;
    EXPECT_EQ(e.id(), "model.not_model_file") << c.name;
    EXPECT_EQ(e.message().rfind(c.looks_like, 0), 0u) << c.name << ": " << e.message();
    EXPECT_NE(e.message().find("not a DISTSPEC model file"), std::string::npos) << c.name;
    EXPECT_NE(e.hint().find(c.hint), std::string::npos) << c.name << ": " << e.hint();
  }
}

// JSON of another kind, and text that is no JSON at all: the first named, the second hinted.
TEST(ModelFileErrors, SpecOrTextWhereTheModelFileBelongs) {
  const Error spec = not_a_model_file(models::read_file_bytes(potentials("specs/lj_halo.json")), "lj_halo.json");
  EXPECT_EQ(spec.id(), "model.not_model_file");
  EXPECT_EQ(spec.file(), "lj_halo.json");
  EXPECT_EQ(spec.message().rfind("this is an MLIPSpec (a spec file nvalchemi saved", 0), 0u) << spec.message();
  EXPECT_NE(spec.hint().find("`pair_style distspec spec FILE`"), std::string::npos);
  const Error text = not_a_model_file("units metal\n", "in.lj");
  EXPECT_EQ(text.id(), "spec.parse");
  EXPECT_EQ(text.file(), "in.lj");
  EXPECT_NE(text.hint().find("a model file is a JSON object"), std::string::npos) << text.hint();
}

// Whatever the bytes of a zip archive become (cut anywhere, any byte changed), the reader reads
// no byte outside them (the sanitizer builds check) and says what the file is or is not.
TEST(ModelFileErrors, DamagedArchivesAreReadWithinTheirBytes) {
  const std::string good = zip_of({{"m/data.pkl", "cmace.modules.models\nMACE\n"}, {"m/version", "3"}}, true);
  auto read = [](const std::string& bytes) {
    models::parse_model_file(bytes, "run/toy.pt2", "", models::architecture_table());
  };
  for (std::size_t n = 0; n <= good.size(); ++n) EXPECT_THROW(read(good.substr(0, n)), Error) << n;
  for (std::size_t at = 0; at < good.size(); ++at)
    for (char value : {'\0', '\x7f', '\xff'}) {
      std::string bad = good;
      bad[at] = value;
      EXPECT_THROW(read(bad), Error) << at;
    }
}

TEST(ModelFileErrors, EamParameters) {
  const Json cu = shipped("cu_eam_u3.json");
  const Json cuni = shipped("cuni_eam_alloy.json");
  expect_error(with(cu, "/units", "real"), "/units", "EAM potentials are in metal units, the model file says real");
  expect_error(with(cu, "/cutoff", 5.0), "/cutoff", "the model cutoff 5.0 differs from the potential file's 4.949999999999989");
  expect_error(with(cu, "/parameters/file_format", "eam/fs"), "/parameters/file_format", "unknown value 'eam/fs'");
  expect_error(with(cu, "/elements", {"Cu", "Ni"}), "/elements", "a funcfl file holds one element, the model has 2");
  expect_error(with(with(cu, "/elements", {"Cu", "Ni"}), "/parameters/files", {{"Cu", "Cu_u3.eam"}}),
               "/parameters_file", "give either parameters_file or parameters.files, not both");
  expect_error(with(without(with(cu, "/elements", {"Cu", "Ni"}), "parameters_file"), "/parameters/files",
                    {{"Cu", "Cu_u3.eam"}}),
               "/parameters/files/Ni", "no funcfl file for element 'Ni'");
  expect_error(with(cuni, "/elements", {"Cu", "Al"}), "/elements",
               "element 'Al' is not in the setfl file '" + potentials("CuNi.eam.alloy") + "', which has Ni, Cu");
}

}  // namespace
}  // namespace distspec::test
