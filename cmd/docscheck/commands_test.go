package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShellSplit(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   [][]string
	}{
		"Words": {
			reason: "Words split on white space; quotes go, their content stays whole.",
			args:   `a "b c" 'd e' f\ g`,
			want:   [][]string{{"a", "b c", "d e", "f g"}},
		},
		"Operators": {
			reason: "&&, ||, ;, | and & end a command.",
			args:   "cd x && make a || echo b; c | d & e",
			want:   [][]string{{"cd", "x"}, {"make", "a"}, {"echo", "b"}, {"c"}, {"d"}, {"e"}},
		},
		"Redirections": {
			reason: "A redirection goes with its target, file descriptors included.",
			args:   "a --x > out.txt 2>&1 <in b",
			want:   [][]string{{"a", "--x", "b"}},
		},
		"Substitutions": {
			reason: "$(…) and `…` stay whole inside their word.",
			args:   "DIST=$(aws x --query \"a b\") c `d e`",
			want:   [][]string{{"DIST=$(aws x --query \"a b\")", "c", "`d e`"}},
		},
		"Comment": {
			reason: "A # starting a word comments out the rest; inside a word it does not.",
			args:   "make render   # render every example a#b",
			want:   [][]string{{"make", "render"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, shellSplit(tc.args)); diff != "" {
				t.Errorf("%s\nshellSplit(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	type cmd struct {
		Line   int
		Words  []string
		Env    map[string]string
		Inline bool
	}
	cases := map[string]struct {
		reason string
		args   string
		want   []cmd
	}{
		"Blocks": {
			reason: "Shell blocks give commands, continuation lines joined at the first line; prompts and here-documents go; YAML blocks give none.",
			args:   "```shell\n$ A=1 sudo make x \\\n  y\ncat <<EOF\nmake no\nEOF\n```\n\n```yaml\nmake: no\n```\n",
			want: []cmd{
				{Line: 2, Words: []string{"make", "x", "y"}, Env: map[string]string{"A": "1"}},
				{Line: 4, Words: []string{"cat"}, Env: map[string]string{}},
			},
		},
		"Inline": {
			reason: "Each inline code span is a command line of its own.",
			args:   "Run `FN_ARGS=--x make fleet N=1`\nthen `--y`.",
			want: []cmd{
				{Line: 1, Words: []string{"make", "fleet", "N=1"}, Env: map[string]string{"FN_ARGS": "--x"}, Inline: true},
				{Line: 2, Words: []string{"--y"}, Env: map[string]string{}, Inline: true},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []cmd
			for _, c := range Commands(Parse("x.md", []byte(tc.args))) {
				got = append(got, cmd{Line: c.Line, Words: c.Words, Env: c.Env, Inline: c.Inline})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCommands(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestBinaryArgs(t *testing.T) {
	type want struct {
		Args []string
		Ok   bool
	}
	cases := map[string]struct {
		reason string
		args   string
		want   want
	}{
		"Bin":       {reason: "The built binary, by any path.", args: "bin/function-cluster-platform --insecure", want: want{Args: []string{"--insecure"}, Ok: true}},
		"Bare":      {reason: "The binary on the PATH.", args: "function-cluster-platform preview", want: want{Args: []string{"preview"}, Ok: true}},
		"GoRun":     {reason: "go run . from the root, with go's own flags.", args: "go run -race . portal --help", want: want{Args: []string{"portal", "--help"}, Ok: true}},
		"OtherMain": {reason: "go run of another package is not the binary.", args: "go run ./cmd/xrdgen -check"},
		"Other":     {reason: "Another command is not the binary.", args: "crossplane render --include-full-xr"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.Args, got.Ok = binaryArgs(shellSplit(tc.args)[0])
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nbinaryArgs(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestCommandPath(t *testing.T) {
	commands := [][]string{{"serve"}, {"preview"}, {"tool"}, {"tool", "sub"}}
	cases := map[string]struct {
		reason string
		args   []string
		want   []string
	}{
		"Default":  {reason: "No command: the default one.", args: []string{"--insecure", "--address=:1"}},
		"Command":  {reason: "The first positional argument names the command.", args: []string{"preview", "--env", "e", "xr.yaml"}, want: []string{"preview"}},
		"Nested":   {reason: "The longest command wins.", args: []string{"--x", "tool", "sub", "y"}, want: []string{"tool", "sub"}},
		"NotFirst": {reason: "A command's name later on is an argument.", args: []string{"file.yaml", "preview"}},
		"AfterEnd": {reason: "Nothing after -- is a command.", args: []string{"--", "preview"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, commandPath(tc.args, commands)); diff != "" {
				t.Errorf("%s\ncommandPath(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestRuntimeArgs(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   [][]Arg
	}{
		"Block": {
			reason: "A block list under args, at the key's column or deeper, comments and blank lines skipped.",
			args:   "kind: DeploymentRuntimeConfig\nspec:\n  containers:\n  - name: r\n    args:\n    - --a\n\n    # c\n    - \"--b=1\"\n    resources: {}\n",
			want:   [][]Arg{{{Index: 5, Value: "--a"}, {Index: 8, Value: "--b=1"}}},
		},
		"Flow": {
			reason: "A flow list.",
			args:   "kind: DeploymentRuntimeConfig\nargs: [\"--a\", '--b']\n",
			want:   [][]Arg{{{Index: 1, Value: "--a"}, {Index: 1, Value: "--b"}}},
		},
		"OtherKinds": {
			reason: "Only DeploymentRuntimeConfig documents count.",
			args:   "kind: Deployment\nargs: [--a]\n---\nkind: DeploymentRuntimeConfig\nargs:\n- --b\n",
			want:   [][]Arg{{{Index: 5, Value: "--b"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RuntimeArgs(strings.Split(tc.args, "\n"))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRuntimeArgs(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestMakeTargets(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   []string
	}{
		"Rules": {
			reason: "Rule lines name targets; assignments, recipes, define blocks, special and expanded targets do not.",
			args: "A := x:y\nB ?= 1\nC::=2\nall build: dep\n\techo no: here\ndouble::\n.PHONY: all\n$(BIN)/x: y\n%.o: %.c\n" +
				"define f\nnot: this\nendef\nlong \\\n  wrapped: z\nvar-target: V := 1\n",
			want: []string{"all", "build", "double", "long", "var-target", "wrapped"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for t := range MakeTargets([]byte(tc.args)) {
				got = append(got, t)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nMakeTargets(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

// TestMakeTargetsOfTheMakefile parses the repository's own Makefile: every
// .PHONY name is a target it finds.
func TestMakeTargetsOfTheMakefile(t *testing.T) {
	src, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatalf("cannot read the Makefile: %v", err)
	}
	targets := MakeTargets(src)
	phony := regexp.MustCompile(`(?m)^\.PHONY:(.*)$`).FindAllStringSubmatch(string(src), -1)
	if len(phony) == 0 {
		t.Fatal("the Makefile has no .PHONY line")
	}
	for _, m := range phony {
		for _, name := range strings.Fields(m[1]) {
			if !targets[name] {
				t.Errorf("MakeTargets(Makefile) lacks %s, which .PHONY names", name)
			}
		}
	}
}
