#!/usr/bin/env python3
"""Writes the TEST message-passing models of potentials/ (architecture "mpnn").

    python3 scripts/generate_mpnn_model.py [--out potentials] [--layers N [N ...]]

writes cu_mpnn_L2.json, cu_mpnn_L4.json (Cu) and cuni_mpnn_L2.json, cuni_mpnn_L4.json (Cu, Ni),
and a byte-exact copy of the shared MLIPSpec halo preset as specs/mpnn_halo.json beside them.
With --layers, it writes cu_mpnn_L<N>.json for each N instead (the benchmarks' depth series;
L2 and L4 come out identical to those of potentials/).

The networks are NOT trained. Their weights are drawn from a fixed-seed generator (Python's
random.Random, seeded by SEED and the file name, so every run writes the same bytes) and
scaled so that the network is a small, smooth perturbation of a Morse pair baseline, which
alone keeps fcc Cu (a = 3.615 Angstrom) a stable solid. They exist to exercise the runtime
(per-layer halo exchange, forces by reverse mode, fp32/fp64) on a physically sensible system,
not to predict anything.

Model (lib/models/mpnn/mpnn.h): SchNet-style interaction layers on F = 64 channels, a Gaussian
radial basis of K = 16 functions on (0, 5) Angstrom, cosine cutoff at 5 Angstrom,
shifted-softplus activations, and a Morse baseline switched off between 4 and 5 Angstrom.
Morse parameters: Cu-Cu and Ni-Ni from L. A. Girifalco and V. G. Weizer, Phys. Rev. 114, 687
(1959); Cu-Ni mixed here (D geometric, alpha and r0 arithmetic means).

Python 3 standard library only.
"""

import argparse
import json
import math
import os
import random
import re
import shutil

SEED = 20261129
FEATURES = 64
BASIS_SIZE = 16
CUTOFF = 5.0
SWITCH_INNER = 4.0  # the Morse baseline is whole up to here: fcc Cu a0 ~ 3.60, B ~ 140 GPa
READOUT_HIDDEN = 32

# Scales of the generated weights (multiplying LeCun-style N(0, 1/fan_in) draws): small enough
# that the network moves forces on a jiggled fcc crystal by a few per cent of the baseline's and
# the fcc lattice constant by a few hundredths of an Angstrom (unittest/models/test_mpnn.cpp
# checks both, and that Cu stays solid in a 1000 K MD run).
FILTER_SCALE = 0.3
READOUT_SCALE = 0.2
BIAS_SCALE = 0.01

# D (eV), alpha (1/Angstrom), r0 (Angstrom): Girifalco & Weizer (1959), Table I.
MORSE = {"Cu": (0.3429, 1.3588, 2.866), "Ni": (0.4205, 1.4199, 2.780)}
# Per-atom reference energies (eV): the Morse baseline's relaxed fcc energy (Cu -2.67 eV/atom at
# a = 3.60, Ni -3.43 at 3.52) plus these gives the experimental cohesive energies (Cu 3.49, Ni
# 4.44 eV; Kittel). A convenience, not a fit: the network adds an offset of its own.
REFERENCE_ENERGY = {"Cu": -0.82, "Ni": -1.01}

SPEC_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "specs",
                           "mpnn_halo_preset.json")

MODELS = [
    ("cu_mpnn_L2.json", ["Cu"], 2),
    ("cu_mpnn_L4.json", ["Cu"], 4),
    ("cuni_mpnn_L2.json", ["Cu", "Ni"], 2),
    ("cuni_mpnn_L4.json", ["Cu", "Ni"], 4),
]


def number(x):
    """8 significant digits: the generated value is the rounded one (files stay small)."""
    return float("%.8g" % x)


def dense(rng, n_in, n_out, scale):
    sigma = scale / math.sqrt(n_in)
    return {
        "weight": [[number(rng.gauss(0.0, sigma)) for _ in range(n_out)] for _ in range(n_in)],
        "bias": [number(rng.gauss(0.0, BIAS_SCALE)) for _ in range(n_out)],
    }


def morse_pair(a, b):
    (da, aa, ra), (db, ab, rb) = MORSE[a], MORSE[b]
    if a == b:
        return {"elements": [a, b], "D": da, "alpha": aa, "r0": ra}
    return {"elements": [a, b], "D": number(math.sqrt(da * db)), "alpha": number(0.5 * (aa + ab)),
            "r0": number(0.5 * (ra + rb))}


def parameters(rng, elements, layers):
    spacing = CUTOFF / (BASIS_SIZE - 1)
    return {
        "features": FEATURES,
        "precision": "fp64",
        "activation": "shifted_softplus",
        "radial_basis": {"kind": "gaussian", "size": BASIS_SIZE, "start": 0.0, "stop": CUTOFF,
                         "width": number(spacing)},
        "embedding": {e: [number(rng.gauss(0.0, 1.0)) for _ in range(FEATURES)] for e in elements},
        "layers": [{
            "filter": dense(rng, BASIS_SIZE, FEATURES, FILTER_SCALE),
            "update": [dense(rng, FEATURES, FEATURES, 1.0), dense(rng, FEATURES, FEATURES, 1.0)],
        } for _ in range(layers)],
        "readout": [dense(rng, FEATURES, READOUT_HIDDEN, 1.0), dense(rng, READOUT_HIDDEN, 1, READOUT_SCALE)],
        "reference_energy": {e: REFERENCE_ENERGY[e] for e in elements},
        "baseline": {
            "kind": "morse",
            "switch_inner": SWITCH_INNER,
            "pairs": [morse_pair(a, b) for i, a in enumerate(elements) for b in elements[i:]],
        },
    }


def model(name, elements, layers):
    rng = random.Random("%d:%s" % (SEED, name))
    return {
        "format": "distspec-model",
        "format_version": 1,
        "architecture": "mpnn",
        "description": ("TEST model with generated (not trained) parameters: a SchNet-style message-passing "
                        "network (%d interaction layers, %d features, %s) as a small smooth perturbation of a "
                        "Morse pair baseline. It exercises the DISTSPEC runtime; it predicts nothing."
                        % (layers, FEATURES, "-".join(elements))),
        "source": ("scripts/generate_mpnn_model.py, seed %d; Morse baseline from L. A. Girifalco and "
                   "V. G. Weizer, Phys. Rev. 114, 687 (1959)" % SEED),
        "license": "CC0-1.0",
        "units": "metal",
        "cutoff": CUTOFF,
        "elements": elements,
        "parameters": parameters(rng, elements, layers),
        "spec": "specs/mpnn_halo.json",
        "runtime": {"autograd_outputs": ["forces", "stress"], "force_strategy": "autograd"},
    }


def dumps(document):
    """Indented JSON with each list of numbers (a weight row) on one line."""
    text = json.dumps(document, indent=1)
    return re.sub(r"\[\s*([-+0-9.eE,\s]+?)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "potentials"), help="output folder")
    parser.add_argument("--spec", default=SPEC_SOURCE, help="the shared mpnn_halo_preset.json to copy")
    parser.add_argument("--layers", type=int, nargs="+", help="write cu_mpnn_L<N>.json for these depths only")
    args = parser.parse_args()
    models = [("cu_mpnn_L%d.json" % n, ["Cu"], n) for n in args.layers] if args.layers else MODELS

    os.makedirs(os.path.join(args.out, "specs"), exist_ok=True)
    shutil.copyfile(args.spec, os.path.join(args.out, "specs", "mpnn_halo.json"))
    for name, elements, layers in models:
        path = os.path.join(args.out, name)
        with open(path, "w") as f:
            f.write(dumps(model(name, elements, layers)))
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
