# Sluice (Edge, CLI, policy server) on Python 3.11. Build from the repository root:
#   docker build -t sluice-edge:0.1.0 .
FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
COPY src ./src
RUN python -m pip install --no-cache-dir --require-hashes -r requirements.lock \
 && python -m pip install --no-cache-dir --no-deps --no-build-isolation . \
 && useradd --system --uid 10001 sluice
USER sluice
ENV SLUICE_CACHE_DIR=/tmp/sluice-cache
EXPOSE 8080
ENTRYPOINT ["sluice-edge"]
