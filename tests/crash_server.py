"""`reactstep serve` that kills itself (SIGKILL) at one named crash point: the crash tests' launcher.

CRASH_POINT=<point>[@<n>] names the point (tools/projects/crash_points.py) and how many times it is
passed before the kill (default 1); the arguments are `reactstep`'s. Only this launcher reads it.
"""

import os
import signal
import sys

from reactstep.client.cli.main import main
from reactstep.tools.projects.crash_points import on_point

point, _, times = os.environ.get("CRASH_POINT", "").partition("@")
passes = [int(times or 1)]


def die_at_the_point(reached: str) -> None:
    if reached == point:
        passes[0] -= 1
        if passes[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)


on_point(die_at_the_point)
sys.exit(main(sys.argv[1:]))
