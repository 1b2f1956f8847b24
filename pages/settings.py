"""Settings: every knob of core.settings.config.Settings, saved to the workspace. Named presets
(core.settings.presets) first; then one form whose tabs group the sections by stage, the LLM first
(core.presentation.display.SETTINGS_TABS); then the LLM connection test.

Each widget is drawn from its field's metadata (label, help, choices, bounds: core.settings.fields).

The LLM section has its own widgets: the API key is written to the credentials file outside the workspace (never
to settings.json) and never shown back, and "Test connection" checks the endpoint the form describes.
"""
from __future__ import annotations

import os
from dataclasses import asdict, fields

import streamlit as st

from core.models.embedding import EmbeddingModelError, resolve_model_dir
from core.models.llm import secrets
from core.models.llm.factory import describe_llm
from core.pipeline.parsing.budget import describe as describe_parse_budget
from core.presentation import display as present
from core.settings.config import LLMConfig, SettingsError
from core.settings.fields import FieldSpec, field_spec, specs
from core.settings.presets import apply_preset, list_presets, preset_changes
from pages.widgets import auth, state
from pages.widgets.api_tokens import api_tokens_panel

KEY_WIDGET = "setting_llm_api_key"
VLM_KEY_WIDGET = "setting_vlm_api_key"
PROVIDER_LABELS = {
    "none": "none: no LLM, everything runs on the LLM-free defaults (spaCy entities, extractive answers)",
    "openai": "openai: any OpenAI-compatible endpoint (OpenAI, Ollama /v1, vLLM, LM Studio)",
    "embedded": "embedded: Qwen2.5-Coder-1.5B inside the app, on the CPU (no server, but slow)",
}
EMBEDDED_COST = ("The embedded model generates about 10 tokens/s on this machine: extracting a graph takes 35–50 s "
                 "per chunk (a 20-chunk paper, 12–17 minutes). It is an opt-in install: `make llm`.")
LLM_CUSTOM = {"provider", "base_url", "model"}  # drawn by llm_section(), before the generic fields


def generic_widget(spec: FieldSpec, value, key: str):
    label, help_, choices = spec.label, spec.help or None, spec.choices
    if choices:
        return st.selectbox(label, choices, help=help_, key=key, index=choices.index(value) if value in choices else 0)
    if isinstance(value, bool):
        return st.toggle(label, value=value, help=help_, key=key)
    if isinstance(value, int | float):
        # Streamlit refuses bounds of another type than the value (an int bound on a float input).
        kind = type(value)
        low = kind(spec.min) if spec.min is not None else None
        high = kind(spec.max) if spec.max is not None else None
        return st.number_input(label, value=value, step=1 if kind is int else None, min_value=low, max_value=high,
                               help=help_, key=key)
    if isinstance(value, list):
        text = st.text_input(label, value=", ".join(map(str, value)), help=help_ or None, key=key)
        return [item.strip() for item in text.split(",") if item.strip()]
    return st.text_input(label, value=str(value), help=help_, key=key)


def llm_section(config) -> dict:
    spec = field_spec(LLMConfig, "provider")
    provider = st.selectbox(spec.label, spec.choices, key="setting_llm_provider",
                            index=spec.choices.index(config.provider) if config.provider in spec.choices else 0,
                            format_func=lambda p: PROVIDER_LABELS.get(p, p))
    left, right = st.columns(2)
    with left:
        base_url = generic_widget(field_spec(LLMConfig, "base_url"), config.base_url, "setting_llm_base_url")
    with right:
        model = generic_widget(field_spec(LLMConfig, "model"), config.model, "setting_llm_model")
    st.text_input("API key", type="password", key=KEY_WIDGET, placeholder="paste a key to save it for this endpoint",
                  help=f"Kept in {secrets.credentials_path()} (readable only by you), never in the workspace, "
                       "and never shown again. Saved with the settings for the base URL above, and sent only "
                       "there: a new base URL asks for its key again.")
    st.caption(EMBEDDED_COST)
    st.caption("Papers already in the graph keep what their extractor found. To re-extract them with the LLM: "
               "Library → select papers → Rebuild graph (or `python -m core graph retry`). Every LLM reply is "
               "cached, so a rebuild never pays twice for the same chunk.")
    return {"provider": provider, "base_url": base_url.strip(), "model": model.strip()}


def section_fields(name: str, config, values: dict[str, dict], titled: bool, workers: int) -> None:
    """One section's widgets in two columns (the LLM's own widgets first), under its title when its tab holds
    more than one section."""
    if titled:
        st.markdown(f"#### {type(config).TITLE}")
    values[name] = llm_section(config) if name == "llm" else {}
    generic = [spec for spec in specs(config) if not (name == "llm" and spec.name in LLM_CUSTOM)]
    columns = st.columns(2)
    for n, spec in enumerate(generic):
        with columns[n % 2]:
            values[name][spec.name] = generic_widget(spec, getattr(config, spec.name), f"setting_{name}_{spec.name}")
    if name == "vlm":
        st.text_input("VLM API key", type="password", key=VLM_KEY_WIDGET,
                      placeholder="paste a key to save it for the VLM's endpoint",
                      help=f"Kept in {secrets.credentials_path()} for the VLM base URL above and sent only there, "
                           "never in the workspace. Not needed when the VLM shares the LLM's base URL: the key "
                           "saved for that URL serves both.")
        if config.provider == "openai":
            st.caption("VLM: " + secrets.key_notice(config.base_url))
    if name == "parsing":
        st.caption("Only the flash tier works without model weights; the others need MinerU's weights "
                   "already on disk.")
        # The cap each MinerU child gets and the deadline formula, as the saved settings make them.
        st.caption("Now: " + describe_parse_budget(config, workers) +
                   ". A document MinerU was stopped on can be retried with a larger budget on the Library page.")


def preset_panel(settings) -> None:
    """Above the form (a form holds no plain buttons): a named preset, what it would change, and Apply."""
    st.subheader("Presets")
    presets = {p.name: p for p in list_presets()}
    name = st.selectbox("Preset", list(presets), key="settings_preset",
                        help="A preset sets only the fields it names, on top of the settings saved above; it never "
                             "holds an API key.")
    st.caption(presets[name].description)
    try:
        changes = preset_changes(settings, name)
    except SettingsError as exc:
        st.error(f"This preset cannot be applied to the saved settings: {exc}")
        return
    if not changes:
        st.caption("It changes nothing: the saved settings already match it.")
        return
    st.caption("It changes " + "; ".join(f"{c.label} ({c.section}.{c.name}) from {c.old!r} to {c.new!r}"
                                         for c in changes) + ".")
    if st.button(f"Apply the {name} preset", key="apply_preset"):
        lib.workspace.save_settings(apply_preset(settings, name))
        state.reload_library()
        # The form's widgets keep what they showed unless forgotten: drop them so they draw the saved values.
        for key in [k for k in st.session_state if str(k).startswith("setting_")]:
            del st.session_state[key]
        st.session_state["settings_notices"] = [("success", f"The {name} preset is applied and saved: "
                                                 f"{len(changes)} settings changed.")]
        st.rerun()


def connection_panel(settings) -> None:
    """Below the form (a form holds no plain buttons): the saved endpoint's key status, Forget and Test."""
    llm = settings.llm
    st.subheader("LLM connection")
    st.caption(f"Now: {describe_llm(settings)}. The test uses the saved settings.")
    from core.models.llm.cache import usage_summary

    st.caption(present.llm_usage_text(usage_summary(lib.llm_cache)))
    source = secrets.key_source(llm.base_url) if llm.base_url else None
    if llm.provider == "openai" or source:
        st.caption(secrets.key_notice(llm.base_url))  # which key goes where: each key only to its own endpoint
    left, right = st.columns(2)
    if left.button("Test connection", key="test_llm_connection"):
        st.session_state["llm_connection_report"] = test_connection(llm)
    if source == "credentials file" and right.button("Forget the saved key", key="forget_api_key"):
        secrets.forget_api_key(llm.base_url)
        st.session_state["settings_notices"] = [("info", f"The key saved for {llm.base_url} is forgotten.")]
        st.rerun()
    report = st.session_state.pop("llm_connection_report", None)
    if report and report["step"] == "provider":
        st.info(report["message"])
    elif report:
        (st.success if report["ok"] else st.error)(
            f"{'Connected' if report['ok'] else 'Connection failed'}: {report['message']}")
        if report["models"]:
            st.caption("Models served: " + ", ".join(report["models"][:30]))


def save_typed_key(base_url: str, notices: list[tuple[str, str]]) -> None:
    typed = (st.session_state.get(KEY_WIDGET) or "").strip()
    if not typed:
        return
    try:
        path = secrets.save_api_key(base_url, typed)
    except secrets.SecretsError as exc:
        notices.append(("error", f"API key not saved: {exc}"))
    else:
        notices.append(("success", f"API key saved for {secrets.endpoint_id(base_url)} in {path}."))


def keys_to_ask_again(old, new) -> list[tuple[str, str]]:
    """A changed base URL has no key until one is given for it: the old URL's key is not carried over. Say so
    when the old URL had a key and the new one has none."""
    asks = []
    for section, label, widget in (("llm", "LLM", "API key"), ("vlm", "VLM", "VLM API key")):
        before, after = getattr(old, section), getattr(new, section)
        if after.provider != "openai" or secrets.endpoint_id(before.base_url) == secrets.endpoint_id(after.base_url):
            continue
        if secrets.key_source(before.base_url) and not secrets.key_source(after.base_url):
            asks.append(("warning", f"The {label} base URL changed to {secrets.endpoint_id(after.base_url)}: the key "
                         f"for {secrets.endpoint_id(before.base_url)} is not sent there. Paste the key for the new "
                         f"URL in {widget} and save again (local servers need none)."))
    return asks


def test_connection(config) -> dict:
    if config.provider != "openai":
        what = ("the embedded model runs inside the app: there is nothing to connect to" if
                config.provider == "embedded" else "choose the openai provider to test an endpoint")
        return {"ok": False, "step": "provider", "message": what, "latency_s": 0.0, "models": []}
    from core.models.llm.connection import check_connection  # imports openai (1-2 s): only when a test is asked for

    with st.spinner(f"Testing {config.base_url}…"):
        return asdict(check_connection(config, secrets.api_key_for(config.base_url)))


auth.page_guard()  # signed in (or open on loopback) before anything: see pages/widgets/auth.py
auth.require_editor()  # not in a viewer's navigation either; this holds whatever way the page is reached
lib = state.library()
st.title("Settings")
st.caption(f"Saved to {lib.workspace.settings_path.name} in the workspace; they apply to documents parsed "
           "and indexed from now on. The app runs offline: no model is ever downloaded.")

if st.session_state.pop("clear_api_key", False):
    st.session_state[KEY_WIDGET] = ""  # before the widget exists: the typed key is never drawn back
    st.session_state[VLM_KEY_WIDGET] = ""
if st.session_state.pop("settings_saved", False):
    st.success("Settings saved. Documents already indexed keep their old parse and index: retry them to redo.")

notice = st.container()  # the outcome of a save shows here, above the long form, where it is seen
for kind, text in st.session_state.pop("settings_notices", []):
    getattr(notice, kind)(text)
# The form edits the file; an environment override is shown, not written into it.
current = lib.workspace.settings(apply_environment=False)
if lib.settings.store.chroma_host and lib.settings.store.chroma_host != current.store.chroma_host:
    st.info(f"CHROMA_HOST is set in the environment: this run uses the Chroma server at "
            f"{lib.settings.store.chroma_host}:{lib.settings.store.chroma_port}, whatever is saved below.")
with st.container(border=True):
    preset_panel(current)

values: dict[str, dict] = {}
sections = {section.name for section in fields(current)}
with st.form("settings_form"):
    st.subheader("By pipeline stage")
    tabs = present.settings_tabs()
    for tab, (_label, names) in zip(st.tabs([label for label, _ in tabs]), tabs):
        with tab:  # a form's tabs all run: every field is submitted whichever tab is open
            for name in names:
                if name in sections:
                    section_fields(name, getattr(current, name), values, titled=len(names) > 1,
                                   workers=current.compute.workers or os.cpu_count() or 1)
    st.caption("Save settings saves every tab.")
    submitted = st.form_submit_button("Save settings", type="primary")

if submitted:
    notices: list[tuple[str, str]] = []
    if st.session_state.get(KEY_WIDGET):
        save_typed_key(values["llm"]["base_url"], notices)
        st.session_state["clear_api_key"] = True
    typed_vlm_key = (st.session_state.get(VLM_KEY_WIDGET) or "").strip()
    if typed_vlm_key:
        try:
            secrets.save_api_key(values["vlm"]["base_url"], typed_vlm_key)
            notices.append(("success", f"VLM API key saved for {secrets.endpoint_id(values['vlm']['base_url'])}."))
        except secrets.SecretsError as exc:
            notices.append(("error", f"VLM API key not saved: {exc}"))
        st.session_state["clear_api_key"] = True
    try:
        if not values["graph"]["entity_types"]:
            raise SettingsError("name at least one entity type")
        new = present.settings_from_values(values)
        if new.embedding.model != current.embedding.model:
            resolve_model_dir(new.embedding.model)
        lib.workspace.save_settings(new)
    except (SettingsError, EmbeddingModelError) as exc:
        notices.append(("error", f"Not saved: {exc}"))
    else:
        state.reload_library()
        st.session_state["settings_saved"] = True
        notices += keys_to_ask_again(current, new)
    st.session_state["settings_notices"] = notices
    st.rerun()

connection_panel(current)
with st.container(border=True):
    api_tokens_panel()
