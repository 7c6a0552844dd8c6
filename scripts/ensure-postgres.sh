#!/usr/bin/env bash
# ensure-postgres.sh: make sure this machine can run the PostgreSQL
# integration tests (Go package shared/pgtest), which start a throwaway
# cluster with initdb and pg_ctl and talk to it with psql, and the benchmarks
# that compare with pgbench (Debian ships it with the server).
#
# If initdb is neither on PATH nor under /usr/lib/postgresql/*/bin, installs
# Debian's PostgreSQL (needs root; otherwise says what to install and exits
# 1). As root, also makes sure the "postgres" system user exists: PostgreSQL
# refuses to run as root, so pgtest runs the server as that user.
# Idempotent, and quick when everything is already there.
set -euo pipefail

prog=ensure-postgres

# find PROGRAM: print the path of PROGRAM on PATH, else the one under the
# highest /usr/lib/postgresql/<version>/bin; fail if there is none.
find_pg() {
	local p
	if p=$(command -v "$1" 2>/dev/null) && [[ -x $p ]]; then
		printf '%s\n' "$p"
		return 0
	fi
	local -a found=()
	local f
	for f in /usr/lib/postgresql/*/bin/"$1"; do
		[[ -x $f ]] && found+=("$f")
	done
	((${#found[@]})) || return 1
	printf '%s\n' "${found[@]}" | sort -t/ -k5,5V | tail -n 1
}

is_root() { [[ $(id -u) -eq 0 ]]; }

if ! find_pg initdb >/dev/null || ! find_pg psql >/dev/null || ! find_pg pgbench >/dev/null; then
	if ! is_root; then
		echo "$prog: PostgreSQL is not installed (no initdb/psql/pgbench on PATH or in /usr/lib/postgresql/*/bin)." >&2
		echo "$prog: install it as root: apt-get install postgresql-15 (or: sudo $0)" >&2
		exit 1
	fi
	if ! command -v apt-get >/dev/null; then
		echo "$prog: PostgreSQL is not installed and there is no apt-get; install PostgreSQL (>= 13) server binaries with your package manager." >&2
		exit 1
	fi
	echo "$prog: installing PostgreSQL with apt-get..." >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
fi

if is_root && ! id -u postgres >/dev/null 2>&1; then
	# The Debian package creates this user; binaries installed some other way
	# may come without it.
	echo "$prog: creating the postgres system user" >&2
	if command -v adduser >/dev/null; then
		adduser --system --group --quiet --home /var/lib/postgresql --no-create-home \
			--shell /bin/bash postgres
	else
		useradd --system --user-group --home-dir /var/lib/postgresql --no-create-home \
			--shell /bin/bash postgres
	fi
fi

if ! initdb=$(find_pg initdb); then
	echo "$prog: initdb still not found after installing PostgreSQL" >&2
	exit 1
fi
echo "$prog: using $initdb ($("$initdb" --version))"
