// Command docscheck keeps the docs true: it checks README.md and every
// docs/**/*.md, and prints each problem as file:line: message.
//
//	go run ./cmd/docscheck     # from the repository root; make docs
//
// It checks that
//
//   - relative links and images resolve to a file or directory of the
//     repository, and their anchors to a heading (GitHub's slugs) or an
//     <a id|name> of the markdown file they name;
//   - every make command in code names a target of the Makefile;
//   - every long flag the docs give the binary is one it accepts: in a
//     command running bin/function-cluster-platform or go run ., in FN_ARGS,
//     in the args of a DeploymentRuntimeConfig (in the docs or examples/),
//     in inline code starting with one of its commands (`preview --fleet`),
//     and in inline code that is only flags (`--max-concurrent-calls`),
//     which may also be a flag of another tool listed in OtherFlags when
//     the paragraph names that tool. The binary is built once and asked
//     (see BinaryCLI), so the check cannot drift from the code;
//   - README.md has at most 250 lines and is not empty, and a chain of links
//     from it reaches every docs/**/*.md.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// MaxReadmeLines is the most lines README.md may have.
const MaxReadmeLines = 250

// A Problem is one thing in the docs that is not true.
type Problem struct {
	// File is the file's slash path from the repository root.
	File string
	// Line is the line number.
	Line int
	// Message says what is wrong.
	Message string
}

// String returns file:line: message.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
}

// A Checker checks the docs of a repository.
type Checker struct {
	// FS is the repository.
	FS fs.FS
	// CLI answers what the binary accepts.
	CLI CLI
	// MaxReadmeLines is the most lines README.md may have.
	MaxReadmeLines int

	docs    map[string]*Doc
	targets map[string]bool
	err     error
}

func (c *Checker) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// load reads and parses a markdown file, once.
func (c *Checker) load(p string) (*Doc, error) {
	if d, ok := c.docs[p]; ok {
		return d, nil
	}
	src, err := fs.ReadFile(c.FS, p)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", p, err)
	}
	if c.docs == nil {
		c.docs = map[string]*Doc{}
	}
	c.docs[p] = Parse(p, src)
	return c.docs[p], nil
}

// Pages returns README.md and the markdown files under docs/, sorted.
func Pages(fsys fs.FS) ([]string, error) {
	pages := []string{"README.md"}
	err := fs.WalkDir(fsys, "docs", func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == "docs" {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if !e.IsDir() && isMarkdown(p) {
			pages = append(pages, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot list docs/: %w", err)
	}
	sort.Strings(pages[1:])
	return pages, nil
}

// Check returns every problem of the docs, sorted by file and line.
func (c *Checker) Check() ([]Problem, error) {
	src, err := fs.ReadFile(c.FS, "Makefile")
	if err != nil {
		return nil, fmt.Errorf("cannot read the Makefile: %w", err)
	}
	c.targets = MakeTargets(src)
	pages, err := Pages(c.FS)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	for _, p := range pages {
		d, err := c.load(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, Problem{File: p, Line: 1, Message: "there is no " + p})
				continue
			}
			return nil, err
		}
		if p == "README.md" {
			problems = append(problems, checkReadme(d, c.MaxReadmeLines)...)
		}
		lp, _ := c.checkLinks(d)
		problems = append(problems, lp...)
		problems = append(problems, c.checkCommands(d)...)
		for _, b := range d.Blocks {
			problems = append(problems, c.checkRuntimeArgs(p, b.Line, b.Lines)...)
		}
	}
	problems = append(problems, c.checkOrphans("README.md", pages[1:])...)
	ep, err := c.checkExamples()
	if err != nil {
		return nil, err
	}
	problems = append(problems, ep...)
	pp, err := c.checkPackage()
	if err != nil {
		return nil, err
	}
	problems = append(problems, pp...)
	if c.err != nil {
		return nil, c.err
	}
	sort.SliceStable(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	return problems, nil
}

// checkExamples checks the args of the DeploymentRuntimeConfigs under
// examples/, the ones the docs install.
func (c *Checker) checkExamples() ([]Problem, error) {
	var problems []Problem
	err := fs.WalkDir(c.FS, "examples", func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == "examples" {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if e.IsDir() || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
			return nil
		}
		src, err := fs.ReadFile(c.FS, p)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "DeploymentRuntimeConfig") {
			problems = append(problems, c.checkRuntimeArgs(p, 1, strings.Split(string(src), "\n"))...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read examples/: %w", err)
	}
	return problems, nil
}

// lazyCLI builds the binary the first time it is asked.
type lazyCLI struct {
	gocmd, root string
	binary      string
	dir         string
	cli         *BinaryCLI
}

func (l *lazyCLI) get() (*BinaryCLI, error) {
	if l.cli != nil {
		return l.cli, nil
	}
	bin := l.binary
	if bin == "" {
		dir, err := tempDir()
		if err != nil {
			return nil, err
		}
		l.dir = dir
		if bin, err = BuildBinary(l.gocmd, l.root, dir); err != nil {
			return nil, err
		}
	}
	l.cli = &BinaryCLI{Path: bin}
	return l.cli, nil
}

// Commands asks the binary, built on first use.
func (l *lazyCLI) Commands() ([][]string, error) {
	cli, err := l.get()
	if err != nil {
		return nil, err
	}
	return cli.Commands()
}

// HasFlag asks the binary, built on first use.
func (l *lazyCLI) HasFlag(path []string, flag string) (bool, string, error) {
	cli, err := l.get()
	if err != nil {
		return false, "", err
	}
	return cli.HasFlag(path, flag)
}

func main() {
	root := flag.String("root", ".", "the repository")
	gocmd := flag.String("go", "go", "the go command that builds the binary")
	binary := flag.String("binary", "", "the binary to ask instead of building one from -root")
	flag.Parse()

	cli := &lazyCLI{gocmd: *gocmd, root: *root, binary: *binary}
	c := &Checker{FS: os.DirFS(*root), CLI: cli, MaxReadmeLines: MaxReadmeLines}
	problems, err := c.Check()
	if cli.dir != "" {
		_ = os.RemoveAll(cli.dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "docscheck: %d problems in the docs\n", len(problems))
		os.Exit(1)
	}
}
