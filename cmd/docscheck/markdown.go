package main

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A Doc is one markdown file as the checks read it: its fenced code blocks,
// its prose, and the anchors a link may name.
type Doc struct {
	// Path is the file's slash path from the repository root.
	Path string
	// Lines is the number of lines.
	Lines int
	// Empty is true when the file holds nothing but white space.
	Empty bool
	// Blocks are the fenced code blocks.
	Blocks []CodeBlock
	// Paras are the runs of non-blank lines outside code blocks.
	Paras []Para
	// Anchors are the heading slugs (GitHub's rules) and explicit
	// <a id="…"> or <a name="…"> anchors.
	Anchors map[string]bool
}

// A CodeBlock is a fenced code block.
type CodeBlock struct {
	// Line is the line number of the block's first content line.
	Line int
	// Info is the fence's info string, e.g. "shell".
	Info string
	// Lines are the block's content lines.
	Lines []string
}

// A Para is a run of non-blank lines outside code blocks: a paragraph, a
// heading, a list, a table.
type Para struct {
	// Line is the line number of its first line.
	Line int
	// Text is its lines joined by newlines.
	Text string
	// Masked is Text with its inline code spans and HTML comments blanked
	// (same length, newlines kept), for finding links outside code.
	Masked string
	// Spans are its inline code spans.
	Spans []Span
}

// A Span is one inline code span.
type Span struct {
	// Start and End delimit the span, backticks included, in its Para's
	// Text.
	Start, End int
	// Code is its content, newlines as spaces.
	Code string
}

// LineAt returns the line number of an offset in the Para's Text.
func (p Para) LineAt(offset int) int {
	return p.Line + strings.Count(p.Text[:offset], "\n")
}

var (
	fenceOpen   = regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*([^`]*?)\\s*$")
	atxHeading  = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextUnder = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	htmlAnchor  = regexp.MustCompile(`(?i)<a\s[^>]*?\b(?:id|name)\s*=\s*(?:"([^"]*)"|'([^']*)')`)
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	orderedItem = regexp.MustCompile(`^\d+[.)] `)
)

// Parse splits a markdown file into what the checks read.
func Parse(path string, src []byte) *Doc {
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	d := &Doc{Path: path, Lines: len(lines), Empty: strings.TrimSpace(text) == "", Anchors: map[string]bool{}}

	var para []string
	start := 0
	flush := func() {
		if len(para) > 0 {
			d.Paras = append(d.Paras, newPara(start, para))
		}
		para = nil
	}
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.TrimSpace(lines[i]) == "" {
				flush()
				continue
			}
			if len(para) == 0 {
				start = i + 1
			}
			para = append(para, lines[i])
			continue
		}
		flush()
		b := CodeBlock{Line: i + 2, Info: m[2]}
		j := i + 1
		for ; j < len(lines) && !closesFence(lines[j], m[1]); j++ {
			b.Lines = append(b.Lines, lines[j])
		}
		d.Blocks = append(d.Blocks, b)
		i = j
	}
	flush()

	s := &slugger{seen: map[string]int{}}
	for _, p := range d.Paras {
		for _, h := range headings(p) {
			d.Anchors[s.slug(h)] = true
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(p.Masked, -1) {
			d.Anchors[m[1]+m[2]] = true
		}
	}
	return d
}

// closesFence reports whether a line closes a code block opened by fence:
// the same character, at least as many, nothing after.
func closesFence(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

func newPara(line int, lines []string) Para {
	p := Para{Line: line, Text: strings.Join(lines, "\n")}
	masked := htmlComment.ReplaceAllStringFunc(p.Text, blank)
	p.Spans, p.Masked = codeSpans(masked)
	return p
}

// blank replaces every character but newlines with a space.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// codeSpans finds the inline code spans of a text (CommonMark: a run of n
// backticks up to the next run of exactly n; a backslash escapes a backtick
// outside a span) and returns them and the text with them blanked.
func codeSpans(text string) ([]Span, string) {
	var spans []Span
	masked := []byte(text)
	run := func(i int) int {
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		return n
	}
	for i := 0; i < len(text); {
		switch text[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			m := run(j)
			if m == n {
				end = j
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		code := strings.ReplaceAll(text[i+n:end], "\n", " ")
		if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.TrimSpace(code) != "" {
			code = code[1 : len(code)-1]
		}
		spans = append(spans, Span{Start: i, End: end + n, Code: code})
		for k := i; k < end+n; k++ {
			if masked[k] != '\n' {
				masked[k] = ' '
			}
		}
		i = end + n
	}
	return spans, string(masked)
}

// headings returns the text of a Para's ATX and setext headings, in order.
func headings(p Para) []string {
	var out []string
	lines := strings.Split(p.Text, "\n")
	from := 0 // first line that may be the text of a setext heading
	for i, l := range lines {
		if m := atxHeading.FindStringSubmatch(l); m != nil && strings.HasPrefix(strings.TrimLeft(l, " "), "#") {
			out = append(out, m[1])
			from = i + 1
			continue
		}
		if i > from && setextUnder.MatchString(l) && plainLine(lines[from]) {
			out = append(out, strings.Join(lines[from:i], " "))
			from = i + 1
		}
	}
	return out
}

// plainLine reports whether a line may start a paragraph that a setext
// underline turns into a heading (not a list item, table, quote or HTML).
func plainLine(l string) bool {
	t := strings.TrimLeft(l, " ")
	for _, p := range []string{"- ", "* ", "+ ", "|", ">", "<"} {
		if strings.HasPrefix(t, p) {
			return false
		}
	}
	return !orderedItem.MatchString(t)
}

var (
	mdImage   = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	mdLink    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdRefLink = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	htmlTag   = regexp.MustCompile(`<[^>]+>`)
)

// headingText returns the text GitHub renders for a heading's markdown:
// code spans keep their content, links their text; images and HTML tags go.
func headingText(md string) string {
	spans, _ := codeSpans(md)
	var b strings.Builder
	plain := func(s string) {
		s = mdImage.ReplaceAllString(s, "")
		s = mdLink.ReplaceAllString(s, "$1")
		s = mdRefLink.ReplaceAllString(s, "$1")
		s = htmlTag.ReplaceAllString(s, "")
		b.WriteString(html.UnescapeString(s))
	}
	prev := 0
	for _, sp := range spans {
		plain(md[prev:sp.Start])
		b.WriteString(sp.Code)
		prev = sp.End
	}
	plain(md[prev:])
	return strings.TrimSpace(b.String())
}

// A slugger turns headings into GitHub's anchors: lower case; every
// character but letters, marks, numbers, connector punctuation (_), '-'
// and ' ' dropped; spaces to '-'; a repeated slug gets -1, -2, ….
type slugger struct {
	seen map[string]int
}

// Slug returns a heading's anchor without numbering repeats.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(headingText(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-', unicode.IsLetter(r), unicode.IsMark(r), unicode.IsNumber(r), unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *slugger) slug(heading string) string {
	base := Slug(heading)
	slug := base
	for {
		if _, ok := s.seen[slug]; !ok {
			break
		}
		s.seen[base]++
		slug = base + "-" + strconv.Itoa(s.seen[base])
	}
	s.seen[slug] = 0
	return slug
}
