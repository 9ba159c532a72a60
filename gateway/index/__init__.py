"""The HNSW index of cache entries, and the pool of promotion candidates."""
from gateway.index.hnsw import EntryTags, SearchFilter, VectorIndex
from gateway.index.pool import CandidatePool

__all__ = ["CandidatePool", "EntryTags", "SearchFilter", "VectorIndex"]
