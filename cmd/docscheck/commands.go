package main

import (
	"fmt"
	"regexp"
	"strings"
)

// Binary is the name of the function's binary, as the docs run it.
const Binary = "function-cluster-platform"

// A Command is one simple shell command from a code block or inline code.
type Command struct {
	// Line is where the command starts.
	Line int
	// Words are its words, quotes removed, after its leading variable
	// assignments and wrappers such as sudo or time.
	Words []string
	// Env are its leading variable assignments.
	Env map[string]string
	// Inline is true for a command in inline code.
	Inline bool
	// Para is the paragraph holding the inline code.
	Para string
}

// shellBlock reports whether a code block's info string says it holds
// shell commands (blocks without one are taken to).
func shellBlock(info string) bool {
	lang, _, _ := strings.Cut(strings.ToLower(info), " ")
	switch strings.Trim(lang, "{}.") {
	case "", "sh", "bash", "shell", "console", "shell-session", "zsh":
		return true
	}
	return false
}

var heredoc = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// Commands returns the shell commands of a markdown file: those of its
// shell code blocks (continuation lines joined, "$ " prompts and
// here-documents dropped) and its inline code.
func Commands(d *Doc) []Command {
	var out []Command
	for _, b := range d.Blocks {
		if !shellBlock(b.Info) {
			continue
		}
		for i := 0; i < len(b.Lines); i++ {
			line := b.Line + i
			text := strings.TrimLeft(b.Lines[i], " \t")
			text = strings.TrimPrefix(text, "$ ")
			for strings.HasSuffix(text, "\\") && i+1 < len(b.Lines) {
				i++
				text = strings.TrimSuffix(text, "\\") + " " + strings.TrimSpace(b.Lines[i])
			}
			if m := heredoc.FindStringSubmatch(text); m != nil {
				for i+1 < len(b.Lines) && strings.TrimSpace(b.Lines[i+1]) != m[1] {
					i++
				}
				i++
			}
			for _, words := range shellSplit(text) {
				out = append(out, newCommand(line, words))
			}
		}
	}
	for _, p := range d.Paras {
		for _, s := range p.Spans {
			for _, words := range shellSplit(s.Code) {
				c := newCommand(p.LineAt(s.Start), words)
				c.Inline, c.Para = true, p.Text
				out = append(out, c)
			}
		}
	}
	return out
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func newCommand(line int, words []string) Command {
	c := Command{Line: line, Env: map[string]string{}}
	for len(words) > 0 {
		w := words[0]
		switch {
		case assignment.MatchString(w):
			k, v, _ := strings.Cut(w, "=")
			c.Env[k] = v
		case w == "sudo" || w == "env" || w == "time" || w == "exec" || w == "nohup":
		default:
			c.Words = words
			return c
		}
		words = words[1:]
	}
	return c
}

// shellSplit splits a line of shell into simple commands, each a list of
// words with quotes removed. It knows quotes, backslashes, $(…) and `…`
// (kept whole in their word), comments, the operators ; & | ( ) that end
// a command, and redirections (dropped with their target).
func shellSplit(s string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, redirect := false, false
	endWord := func() {
		if inWord && !redirect {
			words = append(words, w.String())
		}
		if inWord {
			redirect = false
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words, redirect = nil, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			endWord()
		case c == '#' && !inWord:
			i = len(s)
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			w.WriteString(s[i:min(j+1, len(s))])
			i = j
			inWord = true
		case c == '`':
			j := len(s) - 1
			if end := strings.IndexByte(s[i+1:], '`'); end >= 0 {
				j = i + 1 + end
			}
			w.WriteString(s[i : j+1])
			i = j
			inWord = true
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')':
			endCmd()
		case c == '>' || c == '<':
			if inWord && strings.Trim(w.String(), "0123456789") == "" {
				w.Reset()
				inWord = false
			} else {
				endWord()
			}
			for i+1 < len(s) && strings.IndexByte("<>&-", s[i+1]) >= 0 {
				i++
			}
			redirect = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// binaryArgs returns the arguments a command passes to the function's
// binary, and whether it runs it: bin/function-cluster-platform (any path
// ending in the binary's name) or go run . from the repository root.
func binaryArgs(words []string) ([]string, bool) {
	if len(words) == 0 {
		return nil, false
	}
	if words[0] == Binary || strings.HasSuffix(words[0], "/"+Binary) {
		return words[1:], true
	}
	if len(words) < 3 || words[0] != "go" || words[1] != "run" {
		return nil, false
	}
	for i := 2; i < len(words); i++ {
		switch {
		case strings.HasPrefix(words[i], "-"):
		case words[i] == "." || words[i] == "./":
			return words[i+1:], true
		default:
			return nil, false
		}
	}
	return nil, false
}

var longFlag = regexp.MustCompile(`^--[A-Za-z0-9][A-Za-z0-9-]*$`)

// flags returns the long flags among a command's arguments, up to "--",
// without their values.
func flags(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		if longFlag.MatchString(name) {
			out = append(out, name)
		}
	}
	return out
}

// commandPath returns the command the arguments name, e.g. ["preview"], or
// nil when they name none and the binary runs its default command.
func commandPath(args []string, commands [][]string) []string {
	var positional []string
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
		}
	}
	var best []string
	for _, c := range commands {
		if len(c) > len(best) && len(c) <= len(positional) && strings.Join(c, " ") == strings.Join(positional[:len(c)], " ") {
			best = c
		}
	}
	return best
}

// An OtherFlag is a flag of another tool that the docs write in inline
// code without its command.
type OtherFlag struct {
	// Flag is the flag, e.g. "--required-resources".
	Flag string
	// Tool names the tool; a paragraph that uses the flag must name it
	// (case does not matter).
	Tool string
}

// OtherFlags are the flags of other tools that the docs may write alone in
// inline code, each accepted only in a paragraph that names its tool. Keep
// it small: a flag of the binary needs no entry, and a flag inside a
// command (`crossplane render --include-full-xr`) needs none either.
var OtherFlags = []OtherFlag{
	// crossplane render: the extra resources a render hands the function.
	{Flag: "--required-resources", Tool: "crossplane render"},
	// crossplane render: the pipeline context a render starts with.
	{Flag: "--context-values", Tool: "crossplane render"},
	// Crossplane core: the circuit breaker on an XR's watch events.
	{Flag: "--circuit-breaker-burst", Tool: "Crossplane"},
	{Flag: "--circuit-breaker-refill-rate", Tool: "Crossplane"},
	{Flag: "--circuit-breaker-cooldown", Tool: "Crossplane"},
	// Crossplane core: how often a Usage (and anything without a TTL) is checked again.
	{Flag: "--poll-interval", Tool: "Crossplane"},
	// Crossplane core: how many reconciles of one XR kind run at once.
	{Flag: "--max-reconcile-rate", Tool: "Crossplane"},
	// Crossplane core: how often every object it watches is queued again.
	{Flag: "--sync-interval", Tool: "Crossplane"},
	// ingress-nginx: the certificate it serves by default.
	{Flag: "--default-ssl-certificate", Tool: "ingress-nginx"},
	// external-dns: the one hosted zone it may change.
	{Flag: "--zone-id-filter", Tool: "external-dns"},
	// gcloud: GKE rollout sequencing's soak time, compared in rollouts.md.
	{Flag: "--default-upgrade-soaking", Tool: "gcloud"},
	// provider-kubernetes: Objects that copy Secrets without their data.
	{Flag: "--sanitize-secrets", Tool: "provider-kubernetes"},
}

// checkCommands returns the problems of a markdown file's commands: make
// targets the Makefile lacks and flags the binary lacks.
func (c *Checker) checkCommands(d *Doc) []Problem {
	var problems []Problem
	for _, cmd := range Commands(d) {
		if v, ok := cmd.Env["FN_ARGS"]; ok {
			// test/e2e/run.sh passes FN_ARGS to the function.
			var args []string
			for _, w := range shellSplit(v) {
				args = append(args, w...)
			}
			problems = append(problems, c.checkBinaryArgs(d.Path, cmd.Line, args)...)
		}
		if len(cmd.Words) == 0 {
			continue
		}
		if cmd.Words[0] == "make" {
			problems = append(problems, c.checkMake(d.Path, cmd.Line, cmd.Words[1:])...)
			continue
		}
		if args, ok := binaryArgs(cmd.Words); ok {
			problems = append(problems, c.checkBinaryArgs(d.Path, cmd.Line, args)...)
			continue
		}
		if !cmd.Inline || len(flags(cmd.Words)) == 0 {
			continue
		}
		if strings.HasPrefix(cmd.Words[0], "--") {
			problems = append(problems, c.checkBareFlags(d.Path, cmd)...)
			continue
		}
		commands, err := c.CLI.Commands()
		if err != nil {
			c.fail(err)
			return problems
		}
		if p := commandPath(cmd.Words, commands); len(p) > 0 && p[0] == cmd.Words[0] {
			// `preview --fleet`: a command of the binary, written alone.
			problems = append(problems, c.checkBinaryArgs(d.Path, cmd.Line, cmd.Words)...)
		}
	}
	return problems
}

var targetName = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)

// checkMake returns a problem for each target of a make command that the
// Makefile lacks.
func (c *Checker) checkMake(file string, line int, args []string) []Problem {
	var problems []Problem
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-f" || strings.HasPrefix(a, "--directory") || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "--makefile") ||
			strings.HasPrefix(a, "-C") || strings.HasPrefix(a, "-f"):
			return nil // another Makefile
		case a == "-I" || a == "-o" || a == "-W":
			i++
		case (a == "-j" || a == "-l") && i+1 < len(args) && strings.Trim(args[i+1], "0123456789.") == "":
			i++
		case strings.HasPrefix(a, "-"), assignment.MatchString(a), !targetName.MatchString(a):
		case !c.targets[a]:
			problems = append(problems, Problem{File: file, Line: line, Message: fmt.Sprintf("make %s: the Makefile has no target %s", a, a)})
		}
	}
	return problems
}

// checkBinaryArgs returns a problem for each long flag in the arguments of
// the binary that the command they name does not accept.
func (c *Checker) checkBinaryArgs(file string, line int, args []string) []Problem {
	fl := flags(args)
	if len(fl) == 0 {
		return nil
	}
	path, ok := c.commandPath(args)
	if !ok {
		return nil
	}
	var problems []Problem
	for _, f := range fl {
		problems = append(problems, c.checkFlag(file, line, path, f)...)
	}
	return problems
}

// commandPath returns the binary's command that the arguments name, nil
// for its default one; false when the binary cannot say.
func (c *Checker) commandPath(args []string) ([]string, bool) {
	commands, err := c.CLI.Commands()
	if err != nil {
		c.fail(err)
		return nil, false
	}
	return commandPath(args, commands), true
}

// checkFlag returns a problem when the binary's command path does not
// accept the flag.
func (c *Checker) checkFlag(file string, line int, path []string, flag string) []Problem {
	ok, hint, err := c.CLI.HasFlag(path, flag)
	if err != nil {
		c.fail(err)
		return nil
	}
	if ok {
		return nil
	}
	return []Problem{{File: file, Line: line,
		Message: fmt.Sprintf("%s has no flag %s%s", strings.Join(append([]string{Binary}, path...), " "), flag, hintText(hint))}}
}

// checkBareFlags returns a problem for each flag in inline code without a
// command that is neither the binary's (by default or of any of its
// commands) nor, in a paragraph naming its tool, in OtherFlags.
func (c *Checker) checkBareFlags(file string, cmd Command) []Problem {
	commands, err := c.CLI.Commands()
	if err != nil {
		c.fail(err)
		return nil
	}
	var problems []Problem
flag:
	for _, f := range flags(cmd.Words) {
		hint := ""
		for _, path := range append([][]string{nil}, commands...) {
			ok, h, err := c.CLI.HasFlag(path, f)
			if err != nil {
				c.fail(err)
				return problems
			}
			if ok {
				continue flag
			}
			if hint == "" {
				hint = h
			}
		}
		msg := fmt.Sprintf("%s is not a flag of %s or of its commands%s, nor of a tool in docscheck's OtherFlags", f, Binary, hintText(hint))
		for _, o := range OtherFlags {
			if o.Flag != f {
				continue
			}
			if strings.Contains(strings.ToLower(cmd.Para), strings.ToLower(o.Tool)) {
				continue flag
			}
			msg = fmt.Sprintf("%s is a flag of %s, not of %s: name %s in the paragraph, or write the command", f, o.Tool, Binary, o.Tool)
		}
		problems = append(problems, Problem{File: file, Line: cmd.Line, Message: msg})
	}
	return problems
}

func hintText(hint string) string {
	if hint == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", hint)
}

var (
	runtimeConfigKind = regexp.MustCompile(`^\s*kind:\s*["']?DeploymentRuntimeConfig["']?\s*$`)
	argsKey           = regexp.MustCompile(`^(\s*)(?:-\s+)?args:\s*(.*?)\s*$`)
	listItem          = regexp.MustCompile(`^(\s*)-\s+(.*?)\s*$`)
)

// An Arg is one argument in a YAML document, and its line index.
type Arg struct {
	// Index is the index of its line.
	Index int
	// Value is the argument, quotes removed.
	Value string
}

// RuntimeArgs returns the container args lists of the
// DeploymentRuntimeConfigs in YAML lines (flow or block lists), each
// argument with the index of its line.
func RuntimeArgs(lines []string) [][]Arg {
	var out [][]Arg
	start := 0
	for end := 0; end <= len(lines); end++ {
		if end < len(lines) && !strings.HasPrefix(lines[end], "---") {
			continue
		}
		out = append(out, runtimeArgs(lines, start, end)...)
		start = end + 1
	}
	return out
}

// runtimeArgs returns the args lists in lines[start:end], one YAML
// document, if it is a DeploymentRuntimeConfig.
func runtimeArgs(lines []string, start, end int) [][]Arg {
	isConfig := false
	for _, l := range lines[start:end] {
		isConfig = isConfig || runtimeConfigKind.MatchString(l)
	}
	if !isConfig {
		return nil
	}
	var out [][]Arg
	unquote := func(s string) string { return strings.Trim(strings.TrimSpace(s), `"'`) }
	for i := start; i < end; i++ {
		m := argsKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		var args []Arg
		if strings.HasPrefix(m[2], "[") {
			for _, a := range strings.Split(strings.Trim(m[2], "[]"), ",") {
				args = append(args, Arg{Index: i, Value: unquote(a)})
			}
			out = append(out, args)
			continue
		}
		// The key's column (past a "- " that starts a list item): the
		// items are there or further in.
		indent := strings.Index(lines[i], "args:")
		for j := i + 1; j < end; j++ {
			if t := strings.TrimSpace(lines[j]); t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			item := listItem.FindStringSubmatch(lines[j])
			if item == nil || len(item[1]) < indent {
				break
			}
			args = append(args, Arg{Index: j, Value: unquote(item[2])})
		}
		out = append(out, args)
	}
	return out
}

// checkRuntimeArgs returns a problem for each flag a
// DeploymentRuntimeConfig passes to the binary that it lacks. line is the
// line number of lines[0].
func (c *Checker) checkRuntimeArgs(file string, line int, lines []string) []Problem {
	var problems []Problem
	for _, args := range RuntimeArgs(lines) {
		values := make([]string, len(args))
		for i, a := range args {
			values[i] = a.Value
		}
		path, ok := c.commandPath(values)
		if !ok {
			return problems
		}
		for _, a := range args {
			for _, f := range flags([]string{a.Value}) {
				problems = append(problems, c.checkFlag(file, line+a.Index, path, f)...)
			}
		}
	}
	return problems
}
