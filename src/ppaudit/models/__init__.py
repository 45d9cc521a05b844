"""Models that a mechanism is built from: teacher classifiers (:mod:`.teachers`), frozen
encoders for Private-kNN features (:mod:`.encoders`) and their on-disk cache (:mod:`.feature_cache`), LLM prompt teachers (:mod:`.llm`).
Import the sub-module you need: each pulls in torch / transformers only when used."""
