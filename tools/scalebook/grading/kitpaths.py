"""Where the steps of a grading tree find their kit: DIR/ctest/kit, this package's copy's root."""
from __future__ import annotations

from pathlib import Path

KIT = Path(__file__).resolve().parents[3]   # KIT/tools/scalebook/grading/kitpaths.py
