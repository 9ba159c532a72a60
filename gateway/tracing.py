"""Optional OpenTelemetry traces: a span per chat request, with child spans for the decision's stages
(signals, fingerprint, search, gates) and the upstream call, and the decision record as attributes.

Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set (the OTLP/HTTP exporter then reads the standard OTEL_*
variables) or a tracer provider is handed to the app (tests use the in-memory exporter). Off, every span is
a no-op and the OpenTelemetry packages are never imported: they are an optional extra (`.[otel]`).
"""
from __future__ import annotations

import json
import logging
import os
from contextlib import contextmanager
from typing import Any, Iterator

log = logging.getLogger("semcache.gateway")


def _attribute(value: Any) -> Any:
    """OpenTelemetry attributes are scalars or lists of scalars: anything else goes as compact JSON."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


class Tracing:
    def __init__(self, provider=None):
        self.provider = provider
        self.tracer = provider.get_tracer("semcache.gateway") if provider is not None else None

    @classmethod
    def from_env(cls) -> "Tracing":
        if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            return cls()
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed "
                        "(pip install 'semcache-gateway[otel]'); no traces are sent")
            return cls()
        service = os.environ.get("OTEL_SERVICE_NAME", "semcache-gateway")
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        log.info("traces go to %s", os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"])
        return cls(provider)

    @property
    def enabled(self) -> bool:
        return self.tracer is not None

    @contextmanager
    def span(self, name: str, server: bool = False, **attributes) -> Iterator[Any]:
        """A child of the current span (a root for `server=True`); yields None when tracing is off."""
        if self.tracer is None:
            yield None
            return
        from opentelemetry.trace import SpanKind
        with self.tracer.start_as_current_span(
                name, kind=SpanKind.SERVER if server else SpanKind.INTERNAL,
                attributes={k: _attribute(v) for k, v in attributes.items() if v is not None}) as span:
            yield span

    @staticmethod
    def annotate(span, **attributes) -> None:
        if span is None:
            return
        for key, value in attributes.items():
            if value is not None:
                span.set_attribute(key, _attribute(value))

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()
