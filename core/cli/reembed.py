"""reembed: rewrite every vector with the configured embedding model and variant."""
from __future__ import annotations

import sys

from core.cli.common import say
from core.library import Library
from core.pipeline.reembed import reembed_workspace


def cmd_reembed(lib: Library, args) -> int:
    def progress(name: str, done: int, total: int) -> None:
        if not args.quiet:
            say(f"  {name}: {done}/{total}", file=sys.stderr)

    counts = reembed_workspace(lib, progress)
    say("re-embedded " + ", ".join(f"{n} {name}" for name, n in counts.items()) + f" with "
        f"{lib.settings.embedding.model} ({lib.settings.embedding.variant})")
    return 0
