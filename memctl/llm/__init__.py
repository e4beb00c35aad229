"""Language models, through Ollama's chat API. Only this package (and embed/) talks to models."""
