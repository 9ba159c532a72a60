"""OpenAI-style errors: `{"error": {"message", "type", "param", "code"}}` with a 4xx/5xx status."""
from __future__ import annotations


class GatewayError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param
        self.headers = headers            # e.g. Retry-After on a 429

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def invalid(message: str, param: str | None = None, code: str = "invalid_value") -> GatewayError:
    return GatewayError(400, message, code=code, param=param)
