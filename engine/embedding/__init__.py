"""Turn embeddings: sentence-transformers in process, ONNX Runtime, an OpenAI-compatible endpoint."""
