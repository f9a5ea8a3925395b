"""distspec-export: PyTorch energy models -> graphs and model files for `pair_style distspec`.

Python API: `export(model, spec, elements, cutoff, units, out_dir, name, format="aoti",
precision="fp64")`, or `export_with(model, spec, ExportOptions(...))` with the options as one
value; the command line is `tools/distspec-export --help`. The contract between
the files written here and the plugin is doc/torch_models.md.
"""

from .export import ExportOptions, ExportResult, export, export_with, write_spec
from .trace import CONTRACT, INPUT_NAMES, OUTPUT_NAMES, ExportError

__all__ = ["CONTRACT", "INPUT_NAMES", "OUTPUT_NAMES", "ExportError", "ExportOptions", "ExportResult", "export",
           "export_with", "write_spec"]
