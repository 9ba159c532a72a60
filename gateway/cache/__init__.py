"""The decision pipeline (HIT / PARTIAL / MISS) and the cache service the app uses."""
from gateway.cache.decision import CacheRequest, Decision, DecisionPipeline
from gateway.cache.service import SemanticCache

__all__ = ["CacheRequest", "Decision", "DecisionPipeline", "SemanticCache"]
