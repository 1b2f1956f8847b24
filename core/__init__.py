"""PaperGraph core: everything the app and the CLI do, importable without Streamlit."""
