"""scripts/serve installs only when what the install reads changed, and says nothing when nothing did.

The script runs in a copy of the repository's layout whose scripts/install and .venv/bin/reactstep
are stand-ins that say what they were asked, so the test installs nothing.
"""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INSTALL = """#!/usr/bin/env bash
echo installed
mkdir -p .venv/bin
printf '#!/usr/bin/env bash\\necho "reactstep $*"\\n' > .venv/bin/reactstep
chmod +x .venv/bin/reactstep
"""


def serve(tree: Path) -> str:
    done = subprocess.run(
        [str(tree / "scripts" / "serve"), "--port", "9"], capture_output=True, text=True, check=True
    )
    return done.stdout + done.stderr


def test_serve_installs_only_when_its_inputs_change(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "serve", tmp_path / "scripts" / "serve")
    (tmp_path / "scripts" / "install").write_text(INSTALL)
    (tmp_path / "scripts" / "install").chmod(0o755)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    ran = [serve(tmp_path), serve(tmp_path)]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["y"]\n')
    ran += [serve(tmp_path), serve(tmp_path)]
    (tmp_path / "uv.lock").write_text("y==1\n")
    ran += [serve(tmp_path), serve(tmp_path)]
    once, quiet = "installed\nreactstep serve --port 9\n", "reactstep serve --port 9\n"
    assert ran == [once, quiet, once, quiet, once, quiet]
