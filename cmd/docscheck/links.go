package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strings"
)

// A Link is one link destination in a markdown file.
type Link struct {
	// Line is where the link is.
	Line int
	// Dest is its destination as written, e.g. "docs/x.md#y".
	Dest string
}

// A RefUse is a reference-style link, [text][label] or [label][].
type RefUse struct {
	// Line is where the link is.
	Line int
	// Label is the reference it names.
	Label string
}

var (
	refDef   = regexp.MustCompile(`^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>\n]*>|\S+)`)
	htmlLink = regexp.MustCompile(`(?i)<(?:img|a|source)\b[^>]*?\s(?:src|href|srcset)\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	scheme   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// Links returns the link destinations of a markdown file outside code
// (inline links and images, reference definitions, HTML src and href), and
// its reference-style links whose label has no definition.
func Links(d *Doc) ([]Link, []RefUse) {
	var links []Link
	defs := map[string]bool{}
	for _, p := range d.Paras {
		off := 0
		for _, l := range strings.SplitAfter(p.Masked, "\n") {
			if m := refDef.FindStringSubmatchIndex(l); m != nil {
				defs[refLabel(l[m[2]:m[3]])] = true
				links = append(links, Link{Line: p.LineAt(off), Dest: l[m[4]:m[5]]})
			}
			off += len(l)
		}
	}
	var undefined []RefUse
	for _, p := range d.Paras {
		s := p.Masked
		for i := strings.Index(s, "]"); i >= 0; i = next(s, i) {
			open := openBracket(s, i)
			if open < 0 || i+1 >= len(s) {
				continue
			}
			switch s[i+1] {
			case '(':
				if dest, ok := inlineDest(s[i+2:]); ok {
					links = append(links, Link{Line: p.LineAt(i), Dest: dest})
				}
			case '[':
				end := strings.IndexByte(s[i+2:], ']')
				if end < 0 {
					continue
				}
				label := s[i+2 : i+2+end]
				if strings.TrimSpace(label) == "" {
					label = p.Text[open+1 : i]
				}
				if !defs[refLabel(label)] {
					undefined = append(undefined, RefUse{Line: p.LineAt(i), Label: label})
				}
			}
		}
		for _, m := range htmlLink.FindAllStringSubmatchIndex(s, -1) {
			g := 2
			if m[2] < 0 {
				g = 4
			}
			links = append(links, Link{Line: p.LineAt(m[g]), Dest: s[m[g]:m[g+1]]})
		}
	}
	return links, undefined
}

func next(s string, i int) int {
	j := strings.Index(s[i+1:], "]")
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// openBracket returns the '[' that the ']' at close closes, or -1.
func openBracket(s string, closing int) int {
	depth := 0
	for i := closing - 1; i >= 0; i-- {
		switch s[i] {
		case ']':
			depth++
		case '[':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// inlineDest reads the destination of an inline link from just after its
// "](": <dest> or dest with balanced parentheses, an optional title, ")".
func inlineDest(s string) (string, bool) {
	t := strings.TrimLeft(s, " \t\n")
	var dest string
	if strings.HasPrefix(t, "<") {
		end := strings.IndexAny(t, ">\n")
		if end < 0 || t[end] != '>' {
			return "", false
		}
		dest, t = t[1:end], t[end+1:]
	} else {
		depth, i := 0, 0
	loop:
		for ; i < len(t); i++ {
			switch t[i] {
			case ' ', '\t', '\n':
				break loop
			case '(':
				depth++
			case ')':
				if depth == 0 {
					break loop
				}
				depth--
			}
		}
		dest, t = t[:i], t[i:]
	}
	t = strings.TrimLeft(t, " \t\n")
	if len(t) > 0 && strings.ContainsRune(`"'(`, rune(t[0])) {
		closing := map[byte]byte{'"': '"', '\'': '\'', '(': ')'}[t[0]]
		end := strings.IndexByte(t[1:], closing)
		if end < 0 {
			return "", false
		}
		t = strings.TrimLeft(t[end+2:], " \t\n")
	}
	return dest, strings.HasPrefix(t, ")")
}

// refLabel normalises a reference label: case and runs of white space do
// not matter.
func refLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// isMarkdown reports whether a path names a markdown file.
func isMarkdown(p string) bool {
	return strings.HasSuffix(strings.ToLower(p), ".md")
}

// resolve resolves a link in the file from. It returns the path it names
// (from itself for "#anchor"), its anchor, whether the link is external (not
// checked), and a problem when the link cannot resolve.
func resolve(from, dest string) (target, anchor string, external bool, problem string) {
	dest = strings.TrimSpace(dest)
	if dest == "" {
		return "", "", false, "empty link"
	}
	if scheme.MatchString(dest) || strings.HasPrefix(dest, "//") {
		return "", "", true, ""
	}
	p, frag, _ := strings.Cut(dest, "#")
	p, _, _ = strings.Cut(p, "?")
	up, err := url.PathUnescape(p)
	if err != nil {
		return "", "", false, fmt.Sprintf("link %q: cannot unescape its path: %v", dest, err)
	}
	anchor, err = url.PathUnescape(frag)
	if err != nil {
		return "", "", false, fmt.Sprintf("link %q: cannot unescape its anchor: %v", dest, err)
	}
	target = from
	if up != "" {
		if strings.HasPrefix(up, "/") {
			target = path.Clean(strings.TrimLeft(up, "/"))
		} else {
			target = path.Join(path.Dir(from), up)
		}
		if target == ".." || strings.HasPrefix(target, "../") {
			return "", "", false, fmt.Sprintf("link %q leaves the repository", dest)
		}
	}
	return target, anchor, false, ""
}

// checkLinks returns the problems of a markdown file's links, and the
// markdown files they lead to.
func (c *Checker) checkLinks(d *Doc) ([]Problem, []string) {
	var problems []Problem
	var reached []string
	add := func(line int, format string, a ...any) {
		problems = append(problems, Problem{File: d.Path, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	links, undefined := Links(d)
	for _, u := range undefined {
		add(u.Line, "reference link [%s] has no definition", u.Label)
	}
	for _, l := range links {
		target, anchor, external, problem := resolve(d.Path, l.Dest)
		if external {
			continue
		}
		if problem != "" {
			add(l.Line, "%s", problem)
			continue
		}
		info, err := fs.Stat(c.FS, target)
		if errors.Is(err, fs.ErrNotExist) {
			add(l.Line, "link %q: %s does not exist", l.Dest, target)
			continue
		}
		if err != nil {
			c.fail(fmt.Errorf("cannot stat %s: %w", target, err))
			continue
		}
		page := target
		if info.IsDir() {
			page = path.Join(target, "README.md")
			if _, err := fs.Stat(c.FS, page); err != nil {
				page = ""
			}
		}
		if isMarkdown(page) {
			reached = append(reached, page)
		}
		if anchor == "" || info.IsDir() || !isMarkdown(target) {
			continue
		}
		td, err := c.load(target)
		if err != nil {
			c.fail(err)
			continue
		}
		if !td.Anchors[anchor] {
			add(l.Line, "link %q: %s has no heading or anchor #%s%s", l.Dest, target, anchor, didYouMean(anchor, td.Anchors))
		}
	}
	return problems, reached
}

// checkOrphans returns a problem for each page that no chain of links from
// start reaches.
func (c *Checker) checkOrphans(start string, pages []string) []Problem {
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		d, err := c.load(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // the missing README is a problem already
		}
		if err != nil {
			c.fail(err)
			continue
		}
		_, reached := c.checkLinks(d)
		for _, r := range reached {
			if !seen[r] {
				seen[r] = true
				queue = append(queue, r)
			}
		}
	}
	var problems []Problem
	for _, p := range pages {
		if !seen[p] {
			problems = append(problems, Problem{File: p, Line: 1, Message: fmt.Sprintf("no link leads here from %s (directly or through other pages)", start)})
		}
	}
	return problems
}

// checkReadme returns the problems of the README itself: empty, or longer
// than max lines.
func checkReadme(d *Doc, maxLines int) []Problem {
	switch {
	case d.Empty:
		return []Problem{{File: d.Path, Line: 1, Message: "the README is empty"}}
	case d.Lines > maxLines:
		return []Problem{{File: d.Path, Line: maxLines + 1, Message: fmt.Sprintf("the README has %d lines, more than %d: move detail into docs/", d.Lines, maxLines)}}
	}
	return nil
}

// didYouMean suggests the closest of names to s, when one is close.
func didYouMean(s string, names map[string]bool) string {
	best, bestD := "", len(s)/3+2
	for n := range names {
		if d := distance(s, n); d < bestD || (d == bestD && best != "" && n < best) {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean #%s?)", best)
}

// distance is the Levenshtein distance between two strings, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
