// Command fleetcheck runs the checks of the fleet's images and release
// configuration that need built artifacts or a container engine, for
// `make images-check` and `make release-check`:
//
//	fleetcheck images [--engine podman] --version V --commit C IMAGE…
//	fleetcheck release [--config .goreleaser.yaml] [--targets linux/amd64,darwin/arm64,windows/amd64]
//
// It prints what it checked, what failed and what could not be checked on
// this machine (and why), and exits 1 when anything failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/image"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/internal/command"
	"github.com/mcp-fleet/mcp-fleet/tools/fleetcheck/release"
)

func main() { command.Exit(run) }

const usage = `usage:
  fleetcheck images [--engine podman|docker] [--policy configs/acl.yaml] --version V --commit C IMAGE...
  fleetcheck release [--config .goreleaser.yaml] [--root .] [--targets linux/amd64,darwin/arm64,windows/amd64]
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "images":
		err = images(ctx, args[1:], stdout)
	case "release":
		err = releaseCheck(ctx, args[1:], stdout)
	default:
		fmt.Fprintf(stderr, "fleetcheck: unknown command %q\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "fleetcheck %s: %v\n%s", args[0], err, usage)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "fleetcheck %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ error }

func flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func images(ctx context.Context, args []string, out io.Writer) error {
	fs := flags("images")
	engine := fs.String("engine", "podman", "container engine: podman or docker")
	version := fs.String("version", "", "the version the images were built with (make's VERSION)")
	commit := fs.String("commit", "", "the commit they were built from (make's COMMIT)")
	policyPath := fs.String("policy", "configs/acl.yaml", "the shipped agent policy")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *version == "" || *commit == "" || fs.NArg() == 0 {
		return usageError{errors.New("--version, --commit and at least one image are required")}
	}
	policy, err := os.ReadFile(*policyPath)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "fleetcheck-images-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	e := image.Engine{Bin: *engine}
	failed, notRun := 0, 0
	for i, ref := range fs.Args() {
		program := path.Base(ref)
		program, _, _ = strings.Cut(program, ":")
		w := image.Want{Program: program, Version: *version, Commit: *commit, Policy: policy, Workspace: program == "devtools-mcp"}
		dir := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		archive := filepath.Join(dir, "image.tar")
		if err := e.Save(ctx, ref, archive); err != nil {
			return err
		}
		im, err := image.ReadArchive(archive)
		if err != nil {
			return err
		}
		r := image.Check(im, w)
		r.Merge(image.CheckOnHost(ctx, im, w, dir))
		r.Merge(e.TryContainer(ctx, ref, w))
		fmt.Fprintf(out, "%s  %.1f MB (%s/%s)\n", ref, float64(im.Size)/1e6, im.Config.OS, im.Config.Architecture)
		for _, s := range r.Checked {
			fmt.Fprintf(out, "  ok       %s\n", s)
		}
		for _, s := range r.NotRun {
			fmt.Fprintf(out, "  not run  %s\n", s)
		}
		for _, s := range r.Problems {
			fmt.Fprintf(out, "  FAIL     %s\n", s)
		}
		failed += len(r.Problems)
		notRun += len(r.NotRun)
		_ = os.RemoveAll(dir)
	}
	fmt.Fprintf(out, "images: %d checked, %d problems, %d checks not run on this machine\n", fs.NArg(), failed, notRun)
	if failed > 0 {
		return fmt.Errorf("%d problems", failed)
	}
	return nil
}

func releaseCheck(ctx context.Context, args []string, out io.Writer) error {
	fs := flags("release")
	config := fs.String("config", ".goreleaser.yaml", "the GoReleaser configuration")
	root := fs.String("root", ".", "the repository")
	targets := fs.String("targets", "linux/amd64,darwin/arm64,windows/amd64", "platforms to build, one per OS")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() != 0 {
		return usageError{fmt.Errorf("unexpected arguments %q", fs.Args())}
	}
	c, err := release.Load(*config)
	if err != nil {
		return err
	}
	servers, err := serverNames(*root)
	if err != nil {
		return err
	}
	if problems := release.Check(c, *root, servers); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintf(out, "  FAIL  %s: %s\n", *config, p)
		}
		return fmt.Errorf("%s: %d problems", *config, len(problems))
	}
	fmt.Fprintf(out, "%s: %d servers for %v × %v, static with version and commit, one archive each, sha256 checksums\n",
		*config, len(servers), release.Platforms, release.Arches)
	tmp, err := os.MkdirTemp("", "fleetcheck-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	v := release.Values{Version: "0.0.0-release-check", Commit: "0123456789abcdef0123456789abcdef01234567", ShortCommit: "0123456"}
	var problems []string
	for _, target := range strings.Split(*targets, ",") {
		goos, goarch, ok := strings.Cut(target, "/")
		if !ok {
			return usageError{fmt.Errorf("target %q: want os/arch", target)}
		}
		start := time.Now()
		built, err := release.BuildAll(ctx, c, *root, tmp, goos, goarch, v)
		if err != nil {
			return err
		}
		for _, b := range built {
			problems = append(problems, release.Inspect(ctx, b, v)...)
		}
		fmt.Fprintf(out, "  built %d servers for %s in %.1fs\n", len(built), target, time.Since(start).Seconds())
	}
	for _, p := range problems {
		fmt.Fprintf(out, "  FAIL  %s\n", p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems", len(problems))
	}
	fmt.Fprintln(out, "release: ok")
	return nil
}

// serverNames lists the servers: servers/<name>/cmd/<name>-mcp.
func serverNames(root string) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join(root, "servers", "*", "cmd", "*-mcp"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(filepath.Dir(m)))
		if filepath.Base(m) == name+"-mcp" {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no servers under %s", filepath.Join(root, "servers"))
	}
	return out, nil
}
