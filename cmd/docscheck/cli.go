package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// A CLI answers what the binary's command line accepts.
type CLI interface {
	// Commands returns the binary's commands, each as its path of words,
	// e.g. [["serve"] ["preview"] ["portal"]].
	Commands() ([][]string, error)
	// HasFlag reports whether a command (nil: the binary with no command,
	// which runs its default one) accepts a long flag such as "--env", and
	// when it does not, the binary's suggestion, if any.
	HasFlag(path []string, flag string) (ok bool, hint string, err error)
}

// A BinaryCLI asks the function's binary itself, so that what the docs are
// checked against cannot drift from the code: its --help lists the
// commands, and `<binary> <command> <flag> --help` parses the flag exactly
// as a real run would (kong reports an unknown flag before it prints help).
type BinaryCLI struct {
	// Path is the binary.
	Path string

	commands [][]string
	probed   map[string]probe
}

type probe struct {
	ok   bool
	hint string
}

// BuildBinary builds the binary from the module in root into dir with the
// go command gocmd.
func BuildBinary(gocmd, root, dir string) (string, error) {
	bin := filepath.Join(dir, Binary)
	cmd := exec.Command(gocmd, "build", "-o", bin, ".") //nolint:gosec // the go command the caller chose
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("cannot build %s: %w\n%s", Binary, err, stderr.String())
	}
	return bin, nil
}

// run runs the binary with args and returns its output and how it exited.
func (b *BinaryCLI) run(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Path, args...) //nolint:gosec // the binary under check
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Stdin = nil
	err = cmd.Run()
	return o.String(), e.String(), err
}

// Commands returns the commands the binary's --help lists.
func (b *BinaryCLI) Commands() ([][]string, error) {
	if b.commands != nil {
		return b.commands, nil
	}
	out, stderr, err := b.run("--help")
	if err != nil {
		return nil, fmt.Errorf("cannot run %s --help: %w\n%s", b.Path, err, stderr)
	}
	b.commands = ParseCommands(out)
	if len(b.commands) == 0 {
		return nil, fmt.Errorf("cannot find the commands in the output of %s --help:\n%s", b.Path, out)
	}
	return b.commands, nil
}

var commandLine = regexp.MustCompile(`^  ([a-z][a-z0-9-]*(?: [a-z][a-z0-9-]*)*)(?: [\[<].*)?$`)

// ParseCommands returns the commands in kong's help output: the lines
// indented by two spaces in its "Commands:" section, up to their first
// argument or "[flags]".
func ParseCommands(help string) [][]string {
	var out [][]string
	in := false
	for _, l := range strings.Split(help, "\n") {
		switch {
		case l == "Commands:":
			in = true
		case in && l != "" && !strings.HasPrefix(l, " "):
			in = false
		case in:
			if m := commandLine.FindStringSubmatch(l); m != nil {
				out = append(out, strings.Fields(m[1]))
			}
		}
	}
	return out
}

// HasFlag runs `<binary> <path> <flag> --help`.
func (b *BinaryCLI) HasFlag(path []string, flag string) (bool, string, error) {
	key := strings.Join(append(append([]string{}, path...), flag), " ")
	if p, ok := b.probed[key]; ok {
		return p.ok, p.hint, nil
	}
	_, stderr, err := b.run(append(append(append([]string{}, path...), flag), "--help")...)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return false, "", fmt.Errorf("cannot run %s: %w", b.Path, err)
	}
	ok, hint, err := Classify(flag, err == nil, stderr)
	if err != nil {
		return false, "", fmt.Errorf("cannot tell whether %s %s accepts %s: %w", Binary, strings.Join(path, " "), flag, err)
	}
	if b.probed == nil {
		b.probed = map[string]probe{}
	}
	b.probed[key] = probe{ok: ok, hint: hint}
	return ok, hint, nil
}

var (
	unknownFlag = regexp.MustCompile(`error: unknown flag (--[^\s,]+)(?:, did you mean "([^"]+)"\?)?`)
	flagValue   = regexp.MustCompile(`error: (--[A-Za-z0-9-]+): `)
)

// Classify reads how `<binary> <flag> --help` went: it succeeded (a flag
// without a value), kong refused the flag as unknown, or kong refused its
// value ("--help"), so the flag exists.
func Classify(flag string, succeeded bool, stderr string) (ok bool, hint string, err error) {
	if succeeded {
		return true, "", nil
	}
	if m := unknownFlag.FindStringSubmatch(stderr); m != nil && m[1] == flag {
		return false, m[2], nil
	}
	if m := flagValue.FindStringSubmatch(stderr); m != nil && m[1] == flag {
		return true, "", nil
	}
	return false, "", fmt.Errorf("unexpected output: %q", strings.TrimSpace(stderr))
}

// tempDir makes a directory for the built binary.
func tempDir() (string, error) {
	dir, err := os.MkdirTemp("", "docscheck-")
	if err != nil {
		return "", fmt.Errorf("cannot make a temporary directory: %w", err)
	}
	return dir, nil
}
