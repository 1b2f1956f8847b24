"""Streamlit glue shared by the pages: cached resources and session-level state. Logic lives in core/."""
