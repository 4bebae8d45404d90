import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
# the independent reference models (experiments/references/) are shared with the experiments
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "experiments"))
# the command line's persistent compilation cache, private to this test session (inherited by subprocesses)
os.environ.setdefault("DIFFSPACE_CACHE_DIR", tempfile.mkdtemp(prefix="diffspace-test-cache-"))

import diffspace  # noqa: E402,F401  (enables float64 before any test builds arrays)
