"""Where built files come from, for the provenance they record: the checkout (`REPO`), its
commit (`git_commit`), a file's hash (`sha256_of`) and a path as the repository names it
(`shown`, no machine-specific prefix)."""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]   # the checkout: agents/cli/ is two levels below it


def git_commit(root: Path = REPO) -> str:
    """HEAD's short hash, "+dirty" when tracked files differ from it; "unknown" outside git."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shown(path: Path, root: Path = REPO) -> str:
    """A path as the repository names it where it lies inside it (no machine-specific prefix)."""
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
