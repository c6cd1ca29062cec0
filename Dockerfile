# AI Intelligence Bureau: one image serving the API and the built web app on port 8000.
#
# NOT EXERCISED: the development machine has a Docker client but no Docker engine, so this file has never
# been built. It follows what was verified outside Docker (a non-editable install of the package with
# BUREAU_WEB_DIST pointing at the built web app). See docs/operations.md#docker.

# ---- web app -------------------------------------------------------------------------------------
FROM node:20-bookworm-slim AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# ---- proxy (docker-compose.yml): nginx with the built web app -----------------------------------
FROM nginx:1.27-bookworm AS proxy
COPY --from=web /src/web/dist /usr/share/nginx/html
COPY deploy/nginx.conf /etc/nginx/conf.d/default.conf

# ---- runtime (the default target) ----------------------------------------------------------------
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# Pinned dependencies (constraints.txt) first, so code changes do not reinstall them.
COPY pyproject.toml constraints.txt README.md ./
COPY backend/ backend/
RUN pip install -c constraints.txt . && pip check

COPY --from=web /src/web/dist /app/web/dist

RUN useradd --create-home --uid 10001 --user-group bureau \
    && mkdir -p /data /vault \
    && chown bureau:bureau /data /vault \
    && chmod 0700 /vault
USER bureau

# Embedded seekdb, the SQLite ledger and logs live in /data; the keys that open them in /vault, a volume of
# its own that no backup of /data captures (docs/operations.md#backups-and-the-vault). The installed package
# cannot find web/dist relative to itself, so point at it explicitly.
ENV BUREAU_DATA_DIR=/data \
    BUREAU_VAULT_DIR=/vault \
    BUREAU_WEB_DIST=/app/web/dist
VOLUME ["/data", "/vault"]
EXPOSE 8000

# Ready = the memory store answers a real query now (first start takes a few seconds).
HEALTHCHECK --interval=30s --timeout=6s --start-period=60s --retries=3 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/api/ready', timeout=5)"

# A non-loopback bind: `bureau serve` refuses to start unless both passcodes are set (or --insecure-open).
CMD ["bureau", "serve", "--host", "0.0.0.0", "--port", "8000"]
