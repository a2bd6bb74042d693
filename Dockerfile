# Sluice on Python 3.11: Edge by default; the collector, the builder and the
# CLI are in the same image (docker run --entrypoint sluice-collector ...).
# Build from the repository root:
#   docker build -t sluice-edge:0.1.0 .
# The build stage has a C compiler and the build tools (requirements-dev.lock)
# for the mypyc-compiled hot-path modules (setup.py); the runtime image gets
# the runtime dependencies only (requirements.lock) and the resulting wheel,
# and runs as a non-root user.
FROM python:3.11 AS build
WORKDIR /src
COPY requirements.lock requirements-dev.lock pyproject.toml setup.py README.md ./
RUN python -m pip install --no-cache-dir --require-hashes -r requirements-dev.lock
COPY src ./src
RUN python -m pip wheel --no-cache-dir --no-deps --no-build-isolation -w /wheels .

FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock ./
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir --require-hashes -r requirements.lock \
 && python -m pip install --no-cache-dir --no-deps /wheels/*.whl \
 && rm -rf /wheels \
 && useradd --system --uid 10001 sluice
USER sluice
ENV SLUICE_CACHE_DIR=/tmp/sluice-cache
EXPOSE 8080
# Liveness: the process serves /_health on its listen port (8080 in the examples).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/_health', timeout=2).status != 200)"]
ENTRYPOINT ["sluice-edge"]
