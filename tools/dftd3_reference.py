#!/usr/bin/env python3
"""Writes lib/models/dftd3/dftd3_reference_data.cpp: the DFT-D3 reference data in metal units.

The data are tad-dftd3's (PyPI, Apache-2.0), which carries s-dftd3's: the reference
coordination numbers and C6 of every element pair (Grimme, Antony, Ehrlich, Krieg, J. Chem.
Phys. 132, 154104 (2010)), the covalent radii of the coordination number (Pyykko and Atsumi,
metals -10 %, scaled by 4/3), the <r4>/<r2> expectation values (rare gases and super-heavy
elements recalculated, 2018 and 2022), the pairwise radii of zero damping, and the damping
parameters of every functional with their aliases. Apache-2.0 lets the generated file be
committed (with this provenance and the licence's name); it is, so that a build needs no
Python. Rerun this script when the pinned tad-dftd3 changes:

    python tools/dftd3_reference.py --out lib/models/dftd3/dftd3_reference_data.cpp
    python tools/dftd3_reference.py --check lib/models/dftd3/dftd3_reference_data.cpp

Conversions use tad-mctc's constants (CODATA 2014: 0.52917721067 Angstrom, 27.211386019 eV),
not LAMMPS dispersion/d3's older ones (0.52917725 Angstrom, 27.21140795 eV): energies of the
two differ by about 1e-6 relative from the constants alone.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
import tomllib


def _load():
    import torch
    import tad_dftd3
    from tad_dftd3 import data as d3data
    from tad_dftd3.reference import Reference
    from tad_mctc.data import radii
    from tad_mctc.data.pse import Z2S
    from tad_mctc.units import energy, length

    bohr = length.AU2AA
    hartree = energy.AU2EV
    ref = Reference(dtype=torch.float64)
    cn = ref.cn.numpy()
    c6 = ref.c6.numpy()
    rcov = (radii.COV_D3(dtype=torch.float64) * bohr).numpy()
    r4r2 = (d3data.R4R2(dtype=torch.float64) * bohr).numpy()
    r0ab = (radii.VDW_PAIRWISE(dtype=torch.float64) * bohr).numpy()
    pdir = os.path.join(os.path.dirname(tad_dftd3.__file__), "param")
    with open(os.path.join(pdir, "parameters.toml"), "rb") as fh:
        params = tomllib.load(fh)
    with open(os.path.join(pdir, "aliases.toml"), "rb") as fh:
        aliases = tomllib.load(fh)["alias"]
    return {
        "version": tad_dftd3.__version__,
        "bohr": bohr,
        "hartree": hartree,
        "cn": cn,
        "c6": c6,
        "rcov": rcov,
        "r4r2": r4r2,
        "r0ab": r0ab,
        "symbols": Z2S,
        "params": params,
        "aliases": aliases,
    }


def _num(x: float) -> str:
    return repr(float(x))


def _short(x: float) -> str:
    """Tabulated values (given with at most 6 digits): 10 significant digits keep them exact."""
    return "%.10g" % float(x)


def _functionals(d) -> list[str]:
    """One initializer per (functional, damping): s6 s8 a1 a2[A] rs6 rs8 alpha beta[1/A]."""
    bohr = d["bohr"]
    defaults = d["params"]["default"]["parameter"]["d3"]
    rows = []
    for name, entry in sorted(d["params"]["parameter"].items()):
        for damping in ("bj", "zero", "bjm", "zerom"):
            p = entry.get("d3", {}).get(damping)
            if p is None:
                continue
            q = dict(defaults[damping])
            q.update(p)
            rows.append(
                "    {\"%s\", Damping::%s, %s, %s, %s, %s, %s, %s, %s, %s},"
                % (
                    name,
                    damping,
                    _num(q.get("s6", 1.0)),
                    _num(q.get("s8", 1.0)),
                    _num(q.get("a1", 0.0)),
                    _num(q.get("a2", 0.0) * bohr),
                    _num(q.get("rs6", 0.0)),
                    _num(q.get("rs8", 1.0)),
                    _num(q.get("alp", 14.0)),
                    _num(q.get("bet", 0.0) / bohr),
                )
            )
    return rows


def render(d) -> str:
    cn, c6, hartree, bohr = d["cn"], d["c6"], d["hartree"], d["bohr"]
    n_z = cn.shape[0]  # 0 is "no element"
    elements, c6_values, offsets = [], [], []
    n_refs = [int((cn[z] >= 0).sum()) for z in range(n_z)]
    for z in range(1, n_z):
        refs = ", ".join(_num(v) for v in cn[z][: n_refs[z]])
        elements.append(
            "    {\"%s\", %d, %s, %s, %d, {%s}},"
            % (d["symbols"][z], z, _num(d["rcov"][z]), _num(d["r4r2"][z]), n_refs[z], refs)
        )
    # C6 blocks of element pairs a <= b, row-major [ref of a][ref of b].
    for a in range(1, n_z):
        for b in range(a, n_z):
            offsets.append(len(c6_values))
            for i in range(n_refs[a]):
                for j in range(n_refs[b]):
                    c6_values.append(c6[a, b, i, j])
    offsets.append(len(c6_values))
    # Grimme's r0ab.dat gives 4 decimals in Angstrom; tad-mctc's copy went through float32
    # (deviations under 1e-6 Angstrom), which rounding undoes.
    r0 = [round(float(d["r0ab"][a, b]), 4) for a in range(1, n_z) for b in range(a, n_z)]

    def block(values, per_line=8):
        lines = []
        for k in range(0, len(values), per_line):
            lines.append("    " + ", ".join(_short(v) for v in values[k : k + per_line]) + ",")
        return "\n".join(lines)

    aliases = [
        "    {\"%s\", \"%s\"}," % (k, v)
        for k, v in sorted(d["aliases"].items())
        if k.isascii()
    ]
    return f"""// Generated by tools/dftd3_reference.py from tad-dftd3 {d['version']} (PyPI; Apache-2.0,
// https://www.apache.org/licenses/LICENSE-2.0), which carries s-dftd3's reference data. Do not
// edit: rerun the script. Lengths in Angstrom (tad-mctc's CODATA 2014 Bohr), C6 in atomic units.
#include "models/dftd3/dftd3_reference.h"

namespace distspec::models::dftd3 {{

static_assert(kBohr == {_num(bohr)} && kHartree == {_num(d['hartree'])},
              "dftd3_reference.h's constants are not those this file was converted with");

const std::array<ReferenceElement, kMaxElement> kElements{{{{
{chr(10).join(elements)}
}}}};

// Per element pair a <= b (pair_index), row-major [reference of a][reference of b], in
// Hartree Bohr^6 as tabulated (kHartreeBohr6 converts).
const double kC6[] = {{
{block(c6_values)}
}};
const int kC6Offsets[] = {{
{block(offsets, 12)}
}};
// Pairwise radii of zero damping, per element pair a <= b, Angstrom.
const double kR0ab[] = {{
{block(r0)}
}};

const FunctionalParameters kFunctionals[] = {{
{chr(10).join(_functionals(d))}
}};
const std::size_t kFunctionalCount = sizeof(kFunctionals) / sizeof(kFunctionals[0]);

const FunctionalAlias kAliases[] = {{
{chr(10).join(aliases)}
}};
const std::size_t kAliasCount = sizeof(kAliases) / sizeof(kAliases[0]);

}}  // namespace distspec::models::dftd3
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", help="write the C++ file here")
    g.add_argument("--check", help="exit 1 unless this file is what the installed tad-dftd3 gives")
    args = ap.parse_args()
    text = render(_load())
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
        return 0
    with open(args.check) as fh:
        old = fh.read()
    if old == text:
        print(f"{args.check}: up to date")
        return 0
    sys.stdout.writelines(list(difflib.unified_diff(old.splitlines(True), text.splitlines(True), args.check, "generated"))[:40])
    print(f"{args.check}: differs from what tad-dftd3 gives; rerun with --out", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
