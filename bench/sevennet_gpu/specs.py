"""Saves, with nvalchemi, the two specs bench/sevennet_gpu/run.sh needs where nvalchemi does not
import (a GPU machine without nvalchemi-toolkit's warp): the exported SevenNet-0's halo spec and
the serial module's local one, as the exporter would write them.

  python specs.py FOLDER      (a Python with nvalchemi-toolkit and the repository's tools/ importable)
"""

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from nvalchemi.distributed.spec import DistributionSpec, MLIPSpec  # noqa: E402

from distspec_export import sevennet  # noqa: E402

export = importlib.import_module("distspec_export.export")
folder = Path(sys.argv[1])
folder.mkdir(parents=True, exist_ok=True)
export.write_spec(sevennet.spec(), folder / "sevennet.spec.json")
MLIPSpec(DistributionSpec()).save(str(folder / "serial.spec.json"))
print(f"wrote {folder}/sevennet.spec.json and serial.spec.json")
