"""distspec-export: PyTorch energy models -> graphs and model files for `pair_style distspec`.

Python API: `export(model, spec, elements, cutoff, units, out_dir, name, format="aoti",
precision="fp64")`; the command line is `tools/distspec-export --help`. The contract between
the files written here and the plugin is doc/torch_models.md.
"""

from .export import ExportResult, export, write_spec
from .trace import CONTRACT, INPUT_NAMES, OUTPUT_NAMES, ExportError

__all__ = ["CONTRACT", "INPUT_NAMES", "OUTPUT_NAMES", "ExportError", "ExportResult", "export", "write_spec"]
