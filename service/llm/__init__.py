"""The LLM gateway (the only litellm importer), its clients, config, network guard and embeddings."""
