# Images of the mcp-fleet servers: one small image per server, each holding
# only its static binary, CA certificates, the shipped agent policy, a
# non-root user (mcp, 65532) and the directories that user writes: /data
# (MCP_DATA_DIR) and /tmp. The base is empty (scratch): no shell, no package
# manager, nothing to patch but the binary.
#
# Each server is a stage; build it by naming it as the target:
#
#   make images                                              all five, offline, from bin/
#   docker build --target avinode -t mcp-fleet/avinode-mcp .  one, compiled from source
#
# BINARIES says where the binaries come from:
#   source (default)  compiled in a Go build stage with the Makefile's own
#                     `make build` (static, -trimpath, version and commit);
#                     the golang image is pulled, so this needs a registry.
#   host              copied from bin/, where `make build` put them, with the
#                     CA bundle that `make images` copies to bin/; nothing is
#                     pulled, so this works offline (`make images` uses it).
# Both feed the same runtime stages, so both give the same image.
#
# The default command is the stdio server (`docker run -i --rm IMAGE`); add
# `--transport http` to serve streamable HTTP on the exposed port (the image
# listens on all interfaces: MCP_HOST=0.0.0.0, and HTTP needs a bearer token).

ARG BINARIES=source
ARG GO_IMAGE=golang:1.26-bookworm

# --- binaries compiled from source (needs the golang image) ------------------
FROM ${GO_IMAGE} AS binaries-source
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY Makefile go.work go.work.sum ./
COPY shared/ shared/
COPY servers/ servers/
# Every module go.work lists must be there for the go command to start; the
# checks' module is needed only for that.
COPY tools/fleetcheck/go.mod tools/fleetcheck/go.sum tools/fleetcheck/
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    make build VERSION="${VERSION}" COMMIT="${COMMIT}" \
 && mkdir -p /out \
 && cp bin/*-mcp /etc/ssl/certs/ca-certificates.crt /out/

# --- binaries built on the host by `make build` (offline) --------------------
FROM scratch AS binaries-host
COPY bin/ca-certificates.crt bin/avinode-mcp bin/gmail-mcp bin/sheets-mcp bin/supabase-mcp bin/devtools-mcp /out/

# The chosen binaries, with the user files beside them. (That this stage adds
# a layer of its own also keeps podman's --layers=false clean-up from
# removing one image twice.)
FROM binaries-${BINARIES} AS binaries
COPY build/image/passwd build/image/group /out/etc/

# --- what every server image holds -------------------------------------------
FROM scratch AS runtime
ARG VERSION=dev
ARG COMMIT=unknown
COPY --from=binaries /out/etc/ /etc/
USER 65532:65532
# /tmp (temporary files, e.g. of the docs command) and /data (local state;
# mount a volume there to keep it), both owned by the user above. A builder
# creates the working directory, as USER, at the latest at the next COPY:
# hence each WORKDIR before a COPY.
WORKDIR /tmp
COPY --from=binaries /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
WORKDIR /data
# The shipped agent policy, for `--acl /etc/mcp-fleet/acl.yaml`; mount your
# own over it. It is enforced only when a server is started with --acl.
COPY configs/acl.yaml /etc/mcp-fleet/acl.yaml
ENV MCP_DATA_DIR=/data \
    MCP_HOST=0.0.0.0
LABEL org.opencontainers.image.source="https://github.com/mcp-fleet/mcp-fleet" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${COMMIT}"

# --- one stage per server ------------------------------------------------------
FROM runtime AS avinode
COPY --from=binaries /out/avinode-mcp /usr/local/bin/avinode-mcp
LABEL org.opencontainers.image.title="avinode-mcp" \
      org.opencontainers.image.description="MCP server for the Avinode charter marketplace (a simulated marketplace without credentials)"
EXPOSE 3001
ENTRYPOINT ["/usr/local/bin/avinode-mcp"]

FROM runtime AS gmail
COPY --from=binaries /out/gmail-mcp /usr/local/bin/gmail-mcp
LABEL org.opencontainers.image.title="gmail-mcp" \
      org.opencontainers.image.description="MCP server for Gmail (a local mailbox of .eml files without credentials)"
EXPOSE 3002
ENTRYPOINT ["/usr/local/bin/gmail-mcp"]

FROM runtime AS sheets
COPY --from=binaries /out/sheets-mcp /usr/local/bin/sheets-mcp
LABEL org.opencontainers.image.title="sheets-mcp" \
      org.opencontainers.image.description="MCP server for a client database in Google Sheets (a local workbook without credentials)"
EXPOSE 3003
ENTRYPOINT ["/usr/local/bin/sheets-mcp"]

FROM runtime AS supabase
COPY --from=binaries /out/supabase-mcp /usr/local/bin/supabase-mcp
LABEL org.opencontainers.image.title="supabase-mcp" \
      org.opencontainers.image.description="MCP server for the agents' workflow state in Supabase or PostgreSQL (an embedded database without credentials)"
EXPOSE 3004
ENTRYPOINT ["/usr/local/bin/supabase-mcp"]

FROM runtime AS devtools
# The tools are confined to /workspace: mount the project there. The image has
# no other programs, so shell_execute finds none of its built-in ones.
# WORKDIR comes before the COPY so that the directory is created.
WORKDIR /workspace
ENV DEVTOOLS_ROOTS=/workspace
COPY --from=binaries /out/devtools-mcp /usr/local/bin/devtools-mcp
LABEL org.opencontainers.image.title="devtools-mcp" \
      org.opencontainers.image.description="MCP server with file, web, database and system tools confined to /workspace"
EXPOSE 3005
ENTRYPOINT ["/usr/local/bin/devtools-mcp"]
