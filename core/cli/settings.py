"""The workspace's settings: show, presets, preset NAME."""
from __future__ import annotations

import json


def cmd_settings(workspace, args) -> int:
    """show | presets | preset NAME. Reads and writes settings.json only, without opening the stores."""
    from core.settings.config import SettingsError
    from core.settings.presets import apply_preset, list_presets, preset_changes

    try:
        if args.action == "show":  # what a run uses: the file with CHROMA_HOST / CHROMA_PORT on top
            print(json.dumps(workspace.settings().to_dict(), indent=2))
            return 0
        if args.action == "presets":
            for preset in list_presets():
                print(f"{preset.name}: {preset.description}")
            return 0
        if not args.name:
            raise SystemExit("settings preset needs a NAME: " + ", ".join(p.name for p in list_presets()))
        current = workspace.settings(apply_environment=False)  # the environment is never written into the file
        changes = preset_changes(current, args.name)
        workspace.save_settings(apply_preset(current, args.name))
    except SettingsError as exc:
        raise SystemExit(f"settings: {exc}") from exc
    print(f"preset {args.name} applied to {workspace.settings_path}: "
          + (f"{len(changes)} settings changed" if changes else "nothing to change"))
    for change in changes:
        print(f"  {change}")
    return 0
