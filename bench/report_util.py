"""The command line the benchmarks' report.py scripts share (Python 3 standard library only).

    report.py LOG_FOLDER PLOT.png

main() reads LOG_FOLDER/machine.txt (the machine line run.sh wrote, if any), collects the rows,
prints the tables and draws the plot with the script's own functions.
"""

import os
import sys


def main(collect, print_tables, plot, nothing):
    """collect(folder) -> rows; print_tables(rows, machine); plot(rows, folder, png); `nothing`
    names what an empty folder lacks, in the message report.py stops with."""
    folder, png = sys.argv[1], sys.argv[2]
    machine_path = os.path.join(folder, "machine.txt")
    machine = open(machine_path).read().strip() if os.path.exists(machine_path) else ""
    rows = collect(folder)
    if not rows:
        sys.exit("report.py: %s in %s/log.*" % (nothing, folder))
    print_tables(rows, machine)
    plot(rows, folder, png)
    print("\nplot: %s" % png)
