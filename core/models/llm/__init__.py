"""Chat models: any OpenAI-compatible endpoint, or the opt-in embedded llama.cpp model, behind one contract."""
