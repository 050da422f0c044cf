# syntax=docker/dockerfile:1
# One multi-stage build, one small non-root image per deployable: pick it with --target.
#   docker build --target router                  -t ghcr.io/kubeloop/router:0.1.0 .
#   docker build --target webhook                 -t ghcr.io/kubeloop/webhook:0.1.0 .
#   docker build --target function-pod-name-label -t ghcr.io/kubeloop/function-pod-name-label:0.1.0 .
# (likewise function-podset, function-watcher, function-at, function-watcher-sidecar). See docs/deploy.md.
# test/e2e/images.test.ts runs every target's ENTRYPOINT from the same production bundle and checks it serves.

# Node 24 LTS, as package.json's engines and CI.
ARG NODE_MAJOR=24

# ---- build: compile TypeScript to dist/ and keep only production dependencies ----
FROM node:${NODE_MAJOR}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY cli ./cli
COPY lib ./lib
COPY router ./router
COPY functions ./functions
COPY webhooks ./webhooks
COPY certs ./certs
# npm run build: tsc to dist/, then esbuild bundles the router, webhook and function commands into dist/bundle
# (cli/bundle-entrypoints.js; cli/bin.js starts them from there). tsx and esbuild then go: images run dist/ only.
# The router's snapshot blob it makes is this stage's Node's, at /src: the router target makes its own.
RUN npm run build \
 && rm dist/bundle/router.blob dist/bundle/router.blob.json \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/tsx node_modules/esbuild node_modules/@esbuild node_modules/.bin

# ---- runtime: distroless Node.js, no shell, no package manager, uid 65532 ----
FROM gcr.io/distroless/nodejs${NODE_MAJOR}-debian12:nonroot AS runtime
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=0:0 /src/package.json ./package.json
COPY --from=build --chown=0:0 /src/node_modules ./node_modules
COPY --from=build --chown=0:0 /src/dist ./dist
COPY --from=build --chown=0:0 /src/cli/bin.js ./cli/bin.js
# V8's code cache of the entrypoints' modules, made by this image's own Node at the paths it runs from (the
# cache is keyed by both): containers start without compiling them. Read-only at run time.
COPY --from=build --chown=0:0 /src/cli/warm-compile-cache.js ./cli/warm-compile-cache.js
COPY --from=build --chown=0:0 /src/cli/build-snapshot.js ./cli/build-snapshot.js
USER 0:0
RUN ["/nodejs/bin/node", "cli/warm-compile-cache.js"]
USER 65532:65532
LABEL org.opencontainers.image.source="https://github.com/kubeloop/kubeloop" \
      org.opencontainers.image.licenses="Apache-2.0"

# ---- one target per deployable; Kubernetes `args` append flags (--port=..., --leader-elect, ...) ----
FROM runtime AS router
# Under load on a large node V8 grows the young generation to 2 x 64 MiB, half the router's peak RSS with 2,000
# pods; 2 x 4 MiB holds its short-lived garbage and keeps the peak 10-16 MiB under 2 x 8 MiB at no measured CPU
# cost. One V8 worker thread instead of four (its GC and compiler helpers): 4-6 MiB less at the peak, CPU per pod
# alike (docs/performance.md). An environment variable, not a flag, so a Deployment's env can change it. V8's heap
# growing factor, which NODE_OPTIONS refuses, the router sets itself (--heap-growing-percent).
ENV NODE_OPTIONS="--max-semi-space-size=4 --v8-pool-size=1"
# V8 startup snapshot of the router with its bundle loaded (cli/build-snapshot.js), made by this image's own Node at
# the paths it runs from: a container restores the loaded heap instead of compiling and running ~3 MB of modules.
# `node --snapshot-blob <blob> router [flags]` takes the same flags as `node cli/bin.js router` (docs/performance.md).
# --efficiency-mode (cli/node-flags.ts, which kubeloop dev starts its router with too): TurboFan later, the GC on the
# main thread; less CPU per object and a lower peak in a router's bursts of work. --no-allocation-site-pretenuring:
# what V8 learns while the watches open together (objects allocated there live long) no longer sends the same sites'
# short-lived objects at rest, a bookmark's among them, to the old generation.
USER 0:0
RUN ["/nodejs/bin/node", "cli/build-snapshot.js"]
USER 65532:65532
EXPOSE 8081
ENTRYPOINT ["/nodejs/bin/node", "--efficiency-mode", "--no-allocation-site-pretenuring", "--snapshot-blob", "dist/bundle/router.blob", "router"]

FROM runtime AS webhook
# 8443: admission (HTTPS, the API server only); 8082: /healthz, /readyz, /metrics.
EXPOSE 8443 8082
ENTRYPOINT ["/nodejs/bin/node", "cli/bin.js", "webhook"]

FROM runtime AS function-pod-name-label
# A function's garbage is per request and short-lived: a 1 MiB semi-space instead of the 8 MiB new space V8 grows
# during start-up, ~2 MiB less idle RSS and 3-8 MiB less at peak for ~11 % more CPU per request (docs/performance.md,
# bench:function-memory). NODE_OPTIONS, not a flag, so a Deployment's env can change it (NODE_OPTIONS= for V8's default).
# --single-threaded (V8 compiles and collects on the main thread; NODE_OPTIONS refuses it, so it is on the command
# line, as kubeloop dev's cli/node-flags.ts has it): a function's hot code is small, and compiling it on helper
# threads cost ~20 MiB of peak RSS and more CPU per request, not less, on a busy node. --max-opt=2: Maglev is the top
# tier, no TurboFan: ~5-7 MiB less at the peak under load (TurboFan's pages of the node binary and its code) for
# 3-6 % more CPU per request up to ~4,000 requests/s, 1.25x at saturation (a Deployment may drop it in its command).
# --no-sparkplug: no baseline tier between the interpreter and Maglev: its code for every warm function was ~1.3 MiB of
# the peak, and the hot path Maglev optimizes anyway, so CPU per request stays the same (0.94-1.02x).
ENV NODE_OPTIONS="--max-semi-space-size=1"
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "--single-threaded", "--max-opt=2", "--no-sparkplug", "cli/bin.js", "function", "pod-name-label"]

FROM runtime AS function-podset
ENV NODE_OPTIONS="--max-semi-space-size=1"
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "--single-threaded", "--max-opt=2", "--no-sparkplug", "cli/bin.js", "function", "podset"]

FROM runtime AS function-watcher
ENV NODE_OPTIONS="--max-semi-space-size=1"
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "--single-threaded", "--max-opt=2", "--no-sparkplug", "cli/bin.js", "function", "watcher"]

FROM runtime AS function-at
ENV NODE_OPTIONS="--max-semi-space-size=1"
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "--single-threaded", "--max-opt=2", "--no-sparkplug", "cli/bin.js", "function", "at"]

FROM runtime AS function-watcher-sidecar
ENV NODE_OPTIONS="--max-semi-space-size=1"
EXPOSE 8080
ENTRYPOINT ["/nodejs/bin/node", "--single-threaded", "--max-opt=2", "--no-sparkplug", "cli/bin.js", "function", "watcher-sidecar"]
