"""The HNSW index of cache entries."""
from gateway.index.hnsw import EntryTags, SearchFilter, VectorIndex

__all__ = ["EntryTags", "SearchFilter", "VectorIndex"]
