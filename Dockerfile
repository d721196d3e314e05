# reactstep in a container: slim, non-root, the embedding model baked in, a health check on /healthz.
# Its build steps are scripts/image-setup, which CI runs on the host (tests/test_container.py).
FROM python:3.11-slim

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    REACTSTEP_DATA_DIR=/data \
    REACTSTEP_HOST=0.0.0.0 \
    REACTSTEP_PORT=8000

WORKDIR /src
COPY pyproject.toml README.md openapi.yaml ./
COPY client client
COPY contract contract
COPY service service
COPY tools tools
COPY prompts prompts
COPY scripts/image-setup scripts/image-setup
RUN useradd --system --uid 10001 --home-dir /data reactstep \
    && scripts/image-setup /opt/reactstep /data /src \
    && chown -R reactstep /data \
    && rm -rf /src

USER reactstep
WORKDIR /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/opt/reactstep/bin/python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"]
CMD ["/opt/reactstep/bin/reactstep", "serve"]
