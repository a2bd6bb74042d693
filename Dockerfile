# Sluice (Edge, CLI, policy server) on Python 3.11. Build from the repository root:
#   docker build -t sluice-edge:0.1.0 .
# The build stage has a C compiler for the mypyc-compiled hot-path modules
# (setup.py); the runtime image only gets the resulting wheel.
FROM python:3.11 AS build
WORKDIR /src
COPY requirements.lock pyproject.toml setup.py README.md ./
COPY src ./src
RUN python -m pip install --no-cache-dir --require-hashes -r requirements.lock \
 && python -m pip wheel --no-cache-dir --no-deps --no-build-isolation -w /wheels .

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
ENTRYPOINT ["sluice-edge"]
