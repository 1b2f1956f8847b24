"""Asking the collection: retrieval modes, rerank, context assembly, cited answers, history."""
