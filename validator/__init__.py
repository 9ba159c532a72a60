"""Gates on every hit: risk policy, key facts and the key-fact validator
(the change-intent classifier arrives with the rest of issue 7)."""
from validator.key_fact_validator import KeyFactValidator, Verdict
from validator.key_facts import KeyFactExtractor
from validator.risk_policy import Policy, RiskPolicy

__all__ = ["KeyFactExtractor", "KeyFactValidator", "Policy", "RiskPolicy", "Verdict"]
