"""Storage behind small interfaces (see base.py); one backend per file."""
