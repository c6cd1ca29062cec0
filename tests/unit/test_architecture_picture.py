"""docs/architecture.md's pictures are drawn from the imports: a change that moves an arrow must redraw them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_architecture_pictures_match_the_imports() -> None:
    drawn = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "draw_architecture.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert drawn.returncode == 0, drawn.stderr


def test_a_stale_picture_is_redrawn() -> None:
    """The check is not vacuous: an emptied picture is drawn anew from the imports."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import draw_architecture
    finally:
        sys.path.remove(str(REPO / "scripts"))
    emptied = "\n".join(
        f"<!-- picture:{name}:{edge} -->" for name in ("layers", "memory", "vault") for edge in ("start", "end")
    )
    fresh = draw_architecture.drawn(emptied)
    assert "game -->" in fresh and "gateway[gateway.py]" in fresh and "grants[grants.py]" in fresh
    assert "scope -->" not in fresh  # scope imports nothing of ours
