"""Finds a Python that can import matplotlib: this one, Debian's
(python3-matplotlib, installed by scripts/setup.sh), or a venv the suite
creates with matplotlib from PyPI."""
import os
import subprocess
import sys

VENV = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "gpuraid", "suite-venv")


def _has_matplotlib(python):
    try:
        return subprocess.run([python, "-c", "import matplotlib"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_python(allow_venv: bool):
    """(interpreter, None) or (None, why not)."""
    for py in dict.fromkeys([sys.executable, "/usr/bin/python3", os.path.join(VENV, "bin", "python")]):
        if os.path.exists(py) and _has_matplotlib(py):
            return py, None
    if not allow_venv:
        return None, "no Python with matplotlib found (install python3-matplotlib, or use --charts auto)"
    py = os.path.join(VENV, "bin", "python")
    try:
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, capture_output=True, timeout=300)
        subprocess.run([py, "-m", "pip", "install", "-q", "matplotlib"], check=True, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"could not create a venv with matplotlib at {VENV}: {e}"
    return (py, None) if _has_matplotlib(py) else (None, f"matplotlib still missing in {VENV}")
