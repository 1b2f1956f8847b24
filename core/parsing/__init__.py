"""PDF → MinerU content list. See `parse_pdf` and `import_mineru_output`."""
