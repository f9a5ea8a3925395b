#!/usr/bin/env python3
"""The table (and, where matplotlib imports, the plot) of bench/torch_kk_gpu/run.sh's logs.

For each model and size: ms per step under the plain style with `device cuda` and under
distspec/kk, the graph call's share (DISTSPEC's Kernels + Exchange rows, the call itself with
the halo exchanges it makes), and where the rest of the step goes: DISTSPEC's Graph (promotion,
the edge arrays), Edges, Checks and Writeback rows, and LAMMPS' own Neigh, Comm, Modify and
Other. The target: outside the graph call at most 5 % of a step at 100 000 atoms.

  report.py OUT_DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import lammps_log  # noqa: E402


def row(log: Path):
    timed = [s for s in lammps_log.segments(log) if s.label == "timed"]
    if not timed:
        return None
    s = timed[-1]
    step = s.per_step_ms(s.loop)
    d = {k: s.per_step_ms(v) for k, v in s.distspec.items()}
    lmp = {k: s.per_step_ms(v) for k, v in s.sections.items()}
    call = d.get("Kernels", 0.0) + d.get("Exchange", 0.0)
    glue = d.get("Graph", 0.0) + d.get("Edges", 0.0) + d.get("Checks", 0.0) + d.get("Writeback", 0.0)
    host = sum(lmp.get(k, 0.0) for k in ("Neigh", "Comm", "Modify", "Other", "Output"))
    return {"atoms": s.atoms, "step": step, "call": call, "exchange": d.get("Exchange", 0.0), "glue": glue, "lammps": host,
            "outside": max(step - call, 0.0), "memory": s.memory_mb}


def main() -> int:
    out = Path(sys.argv[1])
    rows = []
    for log in sorted(out.glob("log.*")):
        _, model, style, n = log.name.split(".")[:4]
        r = row(log)
        if r is None:
            rows.append((model, int(n), style, None))
            continue
        rows.append((model, int(n), style, r))
    rows.sort(key=lambda x: (x[0], x[3]["atoms"] if x[3] else 0, x[2]))
    lines = ["| model | atoms | style | ms/step | graph call ms | of it halo exchange ms | outside ms | outside % | "
             "DISTSPEC glue ms | LAMMPS rest ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for model, n, style, r in rows:
        if r is None:
            lines.append(f"| {model} | n={n} | {style} | did not run (log.{model}.{style}.{n}) | | | | | | |")
            continue
        lines.append(f"| {model} | {r['atoms']} | {style} | {r['step']:.2f} | {r['call']:.2f} | {r['exchange']:.2f} | "
                     f"{r['outside']:.2f} | "
                     f"{100 * r['outside'] / r['step']:.1f} | {r['glue']:.2f} | {r['lammps']:.2f} |")
    text = "\n".join(lines) + "\n"
    (out / "table.md").write_text(text)
    print(text, end="")
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("(no matplotlib here: table only)")
        return 0
    fig, ax = plt.subplots(figsize=(6, 4))
    for model in sorted({r[0] for r in rows}):
        for style, mark in (("device_cuda", "o--"), ("kk", "s-")):
            pts = sorted((r["atoms"], 100 * r["outside"] / r["step"]) for m, _, s, r in rows
                         if m == model and s == style and r)
            if pts:
                ax.plot(*zip(*pts), mark, label=f"{model}, {style}")
    ax.axhline(5, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("atoms")
    ax.set_ylabel("step outside the graph call (%)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "outside_share.png", dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
