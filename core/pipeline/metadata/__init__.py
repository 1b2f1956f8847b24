"""A paper's bibliographic metadata read offline from its PDF and parsed items (extract.py), stored and refreshed
(refresh.py)."""
