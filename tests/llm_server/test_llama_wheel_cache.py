"""scripts/llama_wheel: a cached wheel is taken as it is; only an empty cache builds one (small, CPU-only)."""

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).parents[2] / "scripts" / "llama_wheel"
WHEEL = "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"


def run(cache: Path, *args: str) -> str:
    env = {**os.environ, "REACTSTEP_WHEEL_CACHE": str(cache)}
    done = subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout.strip()


def test_a_cached_wheel_is_taken_without_a_build(tmp_path: Path) -> None:
    (tmp_path / WHEEL).write_bytes(b"")
    (tmp_path / "llama_cpp_python-0.3.35-py3-none-linux_x86_64.whl").write_bytes(b"")
    assert run(tmp_path) == str(tmp_path / WHEEL)
    assert run(tmp_path, "--dry-run") == str(tmp_path / WHEEL)


def test_an_empty_cache_shows_the_build_it_would_run(tmp_path: Path) -> None:
    command = run(tmp_path, "--dry-run")
    assert command.startswith('CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_BLAS=OFF ')
    assert "-DLLAMA_CURL=OFF" in command
    assert command.endswith(f"-m pip wheel --no-deps --no-cache-dir -w {tmp_path} llama-cpp-python==0.3.36")
    assert list(tmp_path.iterdir()) == []  # nothing built, nothing written
