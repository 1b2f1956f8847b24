"""Settings: every knob of core.config.Settings, one form section per pipeline stage, saved to the workspace."""
from __future__ import annotations

from dataclasses import fields

import streamlit as st

from core import presentation as present
from core.config import SettingsError
from core.embedding import EmbeddingModelError, resolve_model_dir
from ui import state

lib = state.library()
st.title("Settings")
st.caption(f"Saved to {lib.workspace.settings_path.name} in the workspace; they apply to documents parsed "
           "and indexed from now on. The app runs offline: no model is ever downloaded.")

if st.session_state.pop("settings_saved", False):
    st.success("Settings saved. Documents already indexed keep their old parse and index: retry them to redo.")

notice = st.container()  # the outcome of a save shows here, above the long form, where it is seen
# The form edits the file; an environment override is shown, not written into it.
current = lib.workspace.settings(apply_environment=False)
if lib.settings.store.chroma_host and lib.settings.store.chroma_host != current.store.chroma_host:
    st.info(f"CHROMA_HOST is set in the environment: this run uses the Chroma server at "
            f"{lib.settings.store.chroma_host}:{lib.settings.store.chroma_port}, whatever is saved below.")
values: dict[str, dict] = {}
with st.form("settings_form"):
    for section in fields(current):
        config = getattr(current, section.name)
        st.subheader(present.SECTION_TITLES.get(section.name, section.name))
        values[section.name] = {}
        columns = st.columns(2)
        for n, f in enumerate(fields(config)):
            label, help_, choices = present.field_spec(section.name, f.name)
            value, key = getattr(config, f.name), f"setting_{section.name}_{f.name}"
            with columns[n % 2]:
                if choices:
                    widget_value = st.selectbox(label, choices, help=help_ or None, key=key,
                                                index=choices.index(value) if value in choices else 0)
                elif isinstance(value, bool):
                    widget_value = st.toggle(label, value=value, help=help_ or None, key=key)
                elif isinstance(value, int):
                    widget_value = st.number_input(label, value=value, step=1, min_value=0,
                                                   max_value=65535 if f.name.endswith("port") else None,
                                                   help=help_ or None, key=key)
                elif isinstance(value, float):
                    widget_value = st.number_input(label, value=value, help=help_ or None, key=key)
                else:
                    widget_value = st.text_input(label, value=str(value), help=help_ or None, key=key)
            values[section.name][f.name] = widget_value
        if section.name == "parsing":
            st.caption("Only the flash tier works without model weights; the others need MinerU's weights "
                       "already on disk.")
    submitted = st.form_submit_button("Save settings", type="primary")

if submitted:
    try:
        new = present.settings_from_values(values)
        if new.embedding.model != current.embedding.model:
            resolve_model_dir(new.embedding.model)
        lib.workspace.save_settings(new)
    except (SettingsError, EmbeddingModelError) as exc:
        notice.error(f"Not saved: {exc}")
    else:
        state.reload_library()
        st.session_state["settings_saved"] = True
        st.rerun()
