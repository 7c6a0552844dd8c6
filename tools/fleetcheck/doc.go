// Package fleetcheck holds the checks of what the fleet ships besides the
// servers' code — the MCP client configurations in configs/, the container
// images `make images` builds, the docker compose stack and the release
// configuration (.goreleaser.yaml) — and the charter demo that plays the
// fleet's main job end to end. The checks hold each artifact to the real
// binaries: every flag and variable a configuration uses is one a server's
// --help lists, every agent one the shipped policy names, every image one
// the Makefile builds.
//
// Packages: help (what a server binary's --help says it accepts), clients
// (the four clients' configuration formats, checked and started as the
// clients would), image (a built image inspected from its archive, without
// running it), dockerfile (the files a Dockerfile stage copies, laid out so
// its build can be tried on the host), compose (docker-compose.yml loaded as
// docker compose loads it and held to the binaries, the Dockerfile, the
// policy and configs/.env.example; the database's first start run on a real
// PostgreSQL), release (the GoReleaser configuration and a build of it per
// operating system), charter (the charter workflow played by six agents
// over stdio on the local backends). cmd/fleetcheck runs the image and
// release checks for `make images-check` and `make release-check`;
// cmd/charter-demo runs the workflow for `make demo`.
package fleetcheck
