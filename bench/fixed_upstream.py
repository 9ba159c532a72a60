"""A fixed-latency OpenAI-shaped upstream, for measuring the gateway's own overhead.

    python bench/fixed_upstream.py --port 9001 --latency-ms 20

A raw ASGI app (no framework) so its own cost is as small as possible.
"""
from __future__ import annotations

import argparse
import asyncio
import json

COMPLETION = json.dumps({
    "id": "chatcmpl-fixed", "object": "chat.completion", "created": 0, "model": "fixed",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "A fixed answer of a few words."},
                 "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
}).encode()
MODELS = json.dumps({"object": "list", "data": [{"id": "fixed", "object": "model"}]}).encode()


def make_app(latency_s: float):
    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        body = MODELS if scope["path"].endswith("/models") else COMPLETION
        if body is COMPLETION:
            await asyncio.sleep(latency_s)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
    return app


def main() -> None:
    import uvicorn
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=9001)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    uvicorn.run(make_app(args.latency_ms / 1000), host="127.0.0.1", port=args.port, log_level="warning",
                access_log=False)


if __name__ == "__main__":
    main()
