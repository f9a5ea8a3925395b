#include "models/eam/eam_tables.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "distspec/error.h"
#include "models/json_fields.h"
#include "models/model_error.h"

namespace distspec::models::eam {
namespace {

// LAMMPS' TextFileReader over text in memory: lines, '#' comments, values wrapping lines.
class PotentialReader {
 public:
  PotentialReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  // One physical line, as skip_line() consumes it.
  std::string_view skip_line() {
    std::string_view line;
    if (!next_physical(line)) fail("unexpected end of file");
    return line;
  }

  // The words of the next non-blank line, joined with following lines until there are at
  // least n (TextFileReader::next_line(nparams)).
  std::vector<std::string_view> next_values(std::size_t n, const char* what) {
    std::vector<std::string_view> words;
    std::string_view line;
    while (words.empty() || words.size() < n) {
      if (!next_physical(line))
        fail("expected " + std::to_string(n) + " values for " + what + ", found " + std::to_string(words.size()) +
             " before the end of the file");
      split(strip_comment(line), words);
    }
    return words;
  }

  // n numbers, as many lines as they take; the rest of the last line is ignored
  // (TextFileReader::next_dvector).
  std::vector<double> next_dvector(std::size_t n, const std::string& what) {
    std::vector<double> out;
    // The count comes from the file: a corrupt one must not allocate before values run out.
    out.reserve(std::min<std::size_t>(n, 1u << 20));
    std::string_view line;
    std::vector<std::string_view> words;
    while (out.size() < n) {
      if (!next_physical(line))
        fail("expected " + std::to_string(n) + " values for " + what + ", found " + std::to_string(out.size()) +
             " before the end of the file");
      words.clear();
      split(strip_comment(line), words);
      for (std::size_t k = 0; k < words.size() && out.size() < n; ++k) out.push_back(to_double(words[k], what));
    }
    return out;
  }

  double to_double(std::string_view word, const std::string& what) const {
    // utils::is_double: digits, sign, '.', exponent only (so no inf, nan or hex).
    const bool plain = word.find_first_not_of("0123456789+-.eE") == std::string_view::npos;
    const std::string s(word);
    char* end = nullptr;
    errno = 0;
    const double v = plain && !s.empty() ? std::strtod(s.c_str(), &end) : 0.0;
    if (!plain || s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
      fail("expected a number for " + what + ", found '" + s + "'");
    return v;
  }

  int to_int(std::string_view word, const std::string& what) const {
    const std::string s(word);
    char* end = nullptr;
    errno = 0;
    const long v = s.empty() ? 0 : std::strtol(s.c_str(), &end, 10);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
      fail("expected an integer for " + what + ", found '" + s + "'");
    return static_cast<int>(v);
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(model_error_id::table, "", "line " + std::to_string(line_no_) + ": " + message,
                "is this a LAMMPS DYNAMO potential file of the format the model file names?", file_);
  }

  // Whether any value follows the last one read (past its line): a file read as another format.
  bool values_remain() {
    std::string_view line;
    std::vector<std::string_view> words;
    while (words.empty() && next_physical(line)) split(strip_comment(line), words);
    return !words.empty();
  }

 private:
  bool next_physical(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    return true;
  }

  static std::string_view strip_comment(std::string_view line) { return line.substr(0, line.find('#')); }

  static void split(std::string_view line, std::vector<std::string_view>& words) {
    constexpr char kSpace[] = " \t\r\n\f";  // LAMMPS Tokenizer's default separators
    std::size_t i = line.find_first_not_of(kSpace);
    while (i != std::string_view::npos) {
      const std::size_t j = std::min(line.find_first_of(kSpace, i), line.size());
      words.push_back(line.substr(i, j - i));
      i = line.find_first_not_of(kSpace, j);
    }
  }

  std::string_view text_;
  std::string file_;
  std::size_t pos_ = 0;
  int line_no_ = 0;
};

// utils::get_potential_units(): the word after "UNITS:" on the first line.
std::string units_of(std::string_view header) {
  const std::size_t at = header.find("UNITS:");
  if (at == std::string_view::npos) return {};
  std::string_view rest = header.substr(at + 6);
  const std::size_t b = rest.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  rest = rest.substr(b);
  return std::string(rest.substr(0, rest.find_first_of(" \t\r")));
}

// The grid line "nrho drho nr dr cut" of both formats, checked as pair_eam.cpp does, plus
// the 5 points interpolate() reads around each end.
template <class File>
void read_grid(PotentialReader& reader, File& f) {
  const auto w = reader.next_values(5, "the grid (nrho drho nr dr cutoff)");
  f.nrho = reader.to_int(w[0], "nrho");
  f.drho = reader.to_double(w[1], "drho");
  f.nr = reader.to_int(w[2], "nr");
  f.dr = reader.to_double(w[3], "dr");
  f.cut = reader.to_double(w[4], "cutoff");
  if (f.nrho < 5 || f.nr < 5 || !(f.drho > 0.0) || !(f.dr > 0.0) || !(f.cut > 0.0))
    reader.fail("invalid grid: nrho and nr must be at least 5, drho, dr and the cutoff positive");
}

// pair_eam.cpp file2array(): value of a file's table at x on the merged grid, by 4-point
// Lagrange interpolation around point k, clamped to the table's interior. LAMMPS' tables are
// 1-based: its f[k] is values[k - 1] here.
double resample(const std::vector<double>& values, double delta, double x) {
  constexpr double sixth = 1.0 / 6.0;
  const int n = static_cast<int>(values.size());
  double p = x / delta + 1.0;
  int k = static_cast<int>(p);
  k = std::max(std::min(k, n - 2), 2);
  p -= k;
  p = std::min(p, 2.0);
  const double cof1 = -sixth * p * (p - 1.0) * (p - 2.0);
  const double cof2 = 0.5 * (p * p - 1.0) * (p - 2.0);
  const double cof3 = -0.5 * p * (p + 1.0) * (p - 2.0);
  const double cof4 = sixth * p * (p * p - 1.0);
  const std::size_t i = static_cast<std::size_t>(k) - 2;
  return cof1 * values[i] + cof2 * values[i + 1] + cof3 * values[i + 2] + cof4 * values[i + 3];
}

std::vector<double> resample_grid(const std::vector<double>& values, double delta, int n, double spacing) {
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int m = 1; m <= n; ++m) out[m - 1] = resample(values, delta, (m - 1) * spacing);
  return out;
}

void finish(Tables& t) {
  t.rdr = 1.0 / t.dr;
  t.rdrho = 1.0 / t.drho;
}

}  // namespace

Funcfl parse_funcfl(std::string_view text, const std::string& file) {
  PotentialReader reader(text, file);
  Funcfl f;
  f.header = std::string(reader.skip_line());
  f.units = units_of(f.header);
  const auto w = reader.next_values(2, "the element line (atomic number, mass)");
  f.atomic_number = reader.to_int(w[0], "the atomic number");
  f.mass = reader.to_double(w[1], "the mass");
  read_grid(reader, f);
  f.frho = reader.next_dvector(static_cast<std::size_t>(f.nrho), "F(rho)");
  f.zr = reader.next_dvector(static_cast<std::size_t>(f.nr), "Z(r)");
  f.rhor = reader.next_dvector(static_cast<std::size_t>(f.nr), "rho(r)");
  f.trailing_values = reader.values_remain();
  return f;
}

namespace {

// setfl and eam/fs files differ only in the density blocks: one per element, or one per pair.
Setfl parse_dynamo_set(std::string_view text, const std::string& file, bool finnis_sinclair) {
  PotentialReader reader(text, file);
  Setfl f;
  f.finnis_sinclair = finnis_sinclair;
  f.header = std::string(reader.skip_line());
  f.units = units_of(f.header);
  reader.skip_line();
  reader.skip_line();
  const auto names = reader.next_values(1, "the element line (count, names)");
  const int n = reader.to_int(names[0], "the number of elements");
  if (n < 1 || static_cast<std::size_t>(n) + 1 != names.size())
    reader.fail("the element line gives " + std::to_string(n) + " elements but names " +
                std::to_string(names.size() - 1));
  for (int i = 0; i < n; ++i) f.elements.emplace_back(names[static_cast<std::size_t>(i) + 1]);
  read_grid(reader, f);
  for (int i = 0; i < n; ++i) {
    const std::string& el = f.elements[static_cast<std::size_t>(i)];
    const auto w = reader.next_values(2, "an element line (atomic number, mass)");
    f.atomic_numbers.push_back(reader.to_int(w[0], "the atomic number of " + el));
    f.masses.push_back(reader.to_double(w[1], "the mass of " + el));
    f.frho.push_back(reader.next_dvector(static_cast<std::size_t>(f.nrho), "F(rho) of " + el));
    if (!finnis_sinclair) {
      f.rhor.push_back(reader.next_dvector(static_cast<std::size_t>(f.nr), "rho(r) of " + el));
      continue;
    }
    for (int j = 0; j < n; ++j)
      f.rhor.push_back(reader.next_dvector(static_cast<std::size_t>(f.nr),
                                           "rho(r) of " + el + " at " + f.elements[static_cast<std::size_t>(j)]));
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j)
      f.z2r.push_back(reader.next_dvector(static_cast<std::size_t>(f.nr),
                                          "r*phi(r) of " + f.elements[i] + "-" + f.elements[j]));
  f.trailing_values = reader.values_remain();
  return f;
}

}  // namespace

Setfl parse_setfl(std::string_view text, const std::string& file) { return parse_dynamo_set(text, file, false); }

Setfl parse_fs(std::string_view text, const std::string& file) { return parse_dynamo_set(text, file, true); }

Spline interpolate(const std::vector<double>& f, double delta) {
  const int n = static_cast<int>(f.size());
  Spline s(static_cast<std::size_t>(n) + 1, std::array<double, 7>{});
  for (int m = 1; m <= n; m++) s[m][6] = f[m - 1];
  s[1][5] = s[2][6] - s[1][6];
  s[2][5] = 0.5 * (s[3][6] - s[1][6]);
  s[n - 1][5] = 0.5 * (s[n][6] - s[n - 2][6]);
  s[n][5] = s[n][6] - s[n - 1][6];
  for (int m = 3; m <= n - 2; m++) s[m][5] = ((s[m - 2][6] - s[m + 2][6]) + 8.0 * (s[m + 1][6] - s[m - 1][6])) / 12.0;
  for (int m = 1; m <= n - 1; m++) {
    s[m][4] = 3.0 * (s[m + 1][6] - s[m][6]) - 2.0 * s[m][5] - s[m + 1][5];
    s[m][3] = s[m][5] + s[m + 1][5] - 2.0 * (s[m + 1][6] - s[m][6]);
  }
  s[n][4] = 0.0;
  s[n][3] = 0.0;
  for (int m = 1; m <= n; m++) {
    s[m][2] = s[m][5] / delta;
    s[m][1] = 2.0 * s[m][4] / delta;
    s[m][0] = 3.0 * s[m][3] / delta;
  }
  return s;
}

Tables tables_from_funcfl(const std::vector<Funcfl>& files) {
  Tables t;
  t.n_species = static_cast<int>(files.size());
  double rmax = 0.0;
  for (const Funcfl& f : files) {
    t.dr = std::max(t.dr, f.dr);
    t.drho = std::max(t.drho, f.drho);
    rmax = std::max(rmax, (f.nr - 1) * f.dr);
    t.rhomax = std::max(t.rhomax, (f.nrho - 1) * f.drho);
    t.cutoff = std::max(t.cutoff, f.cut);  // init_one(): the longest file cutoff
  }
  // 0.5 is for round-off in divide (pair_eam.cpp)
  t.nr = static_cast<int>(rmax / t.dr + 0.5);
  t.nrho = static_cast<int>(t.rhomax / t.drho + 0.5);
  finish(t);

  std::vector<std::vector<double>> z(files.size());
  for (std::size_t a = 0; a < files.size(); ++a) {
    const Funcfl& f = files[a];
    t.rhor_of.insert(t.rhor_of.end(), files.size(), static_cast<int>(a));  // type2rhor[i][j] = map[i]
    t.masses.push_back(f.mass);
    t.frho.push_back(interpolate(resample_grid(f.frho, f.drho, t.nrho, t.drho), t.drho));
    t.rhor.push_back(interpolate(resample_grid(f.rhor, f.dr, t.nr, t.dr), t.dr));
    z[a] = resample_grid(f.zr, f.dr, t.nr, t.dr);
  }
  // Units: 27.2 eV per Hartree, 0.529 Angstrom per Bohr, the constants pair_eam.cpp uses.
  t.z2r.resize(files.size() * (files.size() + 1) / 2);
  for (std::size_t a = 0; a < files.size(); ++a)
    for (std::size_t b = 0; b <= a; ++b) {
      std::vector<double> z2(static_cast<std::size_t>(t.nr));
      for (std::size_t m = 0; m < z2.size(); ++m) z2[m] = 27.2 * 0.529 * z[a][m] * z[b][m];
      t.z2r[Tables::pair_index(static_cast<int>(a), static_cast<int>(b))] = interpolate(z2, t.dr);
    }
  return t;
}

Tables tables_from_setfl(const Setfl& file, const std::vector<std::string>& elements, const std::string& path) {
  std::vector<int> map;
  for (const std::string& el : elements) {
    const auto it = std::find(file.elements.begin(), file.elements.end(), el);
    if (it == file.elements.end())
      throw Error(model_error_id::value, "/elements",
                  "element '" + el + "' is not in the setfl file '" + path + "', which has " + join_names(file.elements),
                  "the model's elements (" + join_names(elements) + ") must all be in the potential file");
    map.push_back(static_cast<int>(it - file.elements.begin()));
  }
  Tables t;
  t.n_species = static_cast<int>(elements.size());
  t.nrho = file.nrho;
  t.nr = file.nr;
  t.drho = file.drho;
  t.dr = file.dr;
  t.rhomax = (file.nrho - 1) * file.drho;
  t.cutoff = file.cut;
  finish(t);
  const int n_file = static_cast<int>(file.elements.size());
  for (int e : map) {
    t.masses.push_back(file.masses[static_cast<std::size_t>(e)]);
    t.frho.push_back(interpolate(file.frho[e], t.drho));
  }
  // type2rhor of pair_eam_alloy.cpp (map[i]) and pair_eam_fs.cpp (map[i] * nelements + map[j]),
  // with each table of the file the model's elements use splined once.
  std::vector<int> table_of(file.rhor.size(), -1);
  for (int from = 0; from < t.n_species; ++from)
    for (int at = 0; at < t.n_species; ++at) {
      const int k = file.finnis_sinclair ? map[from] * n_file + map[at] : map[from];
      if (table_of[k] < 0) {
        table_of[k] = static_cast<int>(t.rhor.size());
        t.rhor.push_back(interpolate(file.rhor[static_cast<std::size_t>(k)], t.dr));
      }
      t.rhor_of.push_back(table_of[k]);
    }
  t.z2r.resize(elements.size() * (elements.size() + 1) / 2);
  for (int a = 0; a < t.n_species; ++a)
    for (int b = 0; b <= a; ++b) {
      t.z2r[Tables::pair_index(a, b)] = interpolate(file.z2r[Tables::pair_index(map[a], map[b])], t.dr);
    }
  return t;
}

}  // namespace distspec::models::eam
