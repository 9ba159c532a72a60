"""Gates on every hit candidate: the pair judge, the risk policy, key facts and the key-fact validator."""
from validator.key_fact_validator import KeyFactValidator, Verdict
from validator.key_facts import KeyFactExtractor
from validator.pair_judge import PairJudge
from validator.risk_policy import Policy, RiskPolicy

__all__ = ["KeyFactExtractor", "KeyFactValidator", "PairJudge", "Policy", "RiskPolicy", "Verdict"]
