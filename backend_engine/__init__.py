"""semcache's bundled paged-KV inference engine."""
from backend_engine.config import EngineConfig
from backend_engine.llm_engine import LLMEngine, PromptTooLong, RequestOutput
from backend_engine.sampling import SamplingParams

__all__ = ["EngineConfig", "LLMEngine", "PromptTooLong", "RequestOutput", "SamplingParams"]
