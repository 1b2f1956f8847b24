"""A paper's stored content, below both wings: its content items (content_list.py, pages.py), their searchable
words (items.py), media items and their descriptions (media_items.py, media_doc.py), page pictures (render.py,
images.py) and the stored source of text documents (sources.py). The write side stores them; the read side and the
pages read them."""
