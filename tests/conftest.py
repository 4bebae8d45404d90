import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import diffspace  # noqa: E402,F401  (enables float64 before any test builds arrays)
