#!/usr/bin/env bash
# ensure-podman.sh: make sure this machine can build the server images
# (`make images`) with podman. Building needs no daemon and no registry: the
# images are FROM scratch and copy the binaries `make build` made.
#
# If podman is not on PATH, installs Debian's podman (needs root and apt;
# otherwise says what to install and exits 1). Idempotent, and quick when
# podman is already there.
set -euo pipefail

prog=ensure-podman

if ! command -v podman >/dev/null 2>&1; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "$prog: podman is not installed; install it as root: apt-get install podman (or: sudo $0)" >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null; then
		echo "$prog: podman is not installed and there is no apt-get; install podman (or docker, then make images IMAGE_ENGINE=docker)" >&2
		exit 1
	fi
	echo "$prog: installing podman with apt-get..." >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null
fi
echo "$prog: using $(command -v podman) ($(podman --version))"
