package main

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSlug(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   string
	}{
		"Plain": {
			reason: "Lower case, spaces to -.",
			args:   "Using it",
			want:   "using-it",
		},
		"Punctuation": {
			reason: "Punctuation goes but - and _; the space beside it stays, so two -s can follow each other.",
			args:   "Day-2 lifecycle: upgrades, rotations & snake_case (v1.2)!",
			want:   "day-2-lifecycle-upgrades-rotations--snake_case-v12",
		},
		"CodeSpan": {
			reason: "A code span keeps its text, backticks gone.",
			args:   "Previewing: `preview --fleet`",
			want:   "previewing-preview---fleet",
		},
		"Link": {
			reason: "A link keeps its text; an image and HTML go.",
			args:   "See [the guide](docs/x.md) ![logo](a.png) <b>now</b>",
			want:   "see-the-guide--now",
		},
		"Unicode": {
			reason: "Letters and numbers of any script stay, lower-cased.",
			args:   "Größe — Übersicht 2",
			want:   "größe--übersicht-2",
		},
		"Entity": {
			reason: "An HTML entity is its character, then dropped as punctuation.",
			args:   "A &amp; B",
			want:   "a--b",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Slug(tc.args)); diff != "" {
				t.Errorf("%s\nSlug(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestParseAnchors(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   string
		want   []string
	}{
		"Duplicates": {
			reason: "A repeated heading gets -1, then -2; a heading that is itself base-1 pushes the count on.",
			args:   "# A\n\n## A\n\n## A-1\n\n## A\n",
			want:   []string{"a", "a-1", "a-1-1", "a-2"},
		},
		"ClosingHashes": {
			reason: "An ATX heading's closing #s are not its text; a # inside a word is.",
			args:   "## Title ##\n\n### C#\n\n#NotAHeading\n",
			want:   []string{"c", "title"},
		},
		"Setext": {
			reason: "Setext headings (=== and --- underlines) have anchors; a list followed by --- does not become one.",
			args:   "Big\n===\n\nSmall\n---\n\n- item\n---\n",
			want:   []string{"big", "small"},
		},
		"Explicit": {
			reason: "<a id> and <a name> are anchors, as written.",
			args:   "# T\n\n<a id=\"Custom-1\"></a> and <a name='old'>\n",
			want:   []string{"Custom-1", "old", "t"},
		},
		"CodeIgnored": {
			reason: "A # line in a fenced block (backticks or tildes) and an anchor in inline code are not anchors.",
			args:   "# T\n\n```sh\n# comment\n```\n\n~~~\n## no\n~~~\n\n`<a id=\"x\">`\n",
			want:   []string{"t"},
		},
		"UnclosedFence": {
			reason: "A fence that never closes runs to the end of the file.",
			args:   "# T\n\n```\n# no\n",
			want:   []string{"t"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Parse("x.md", []byte(tc.args))
			var got []string
			for a := range d.Anchors {
				got = append(got, a)
			}
			sort.Strings(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nParse(%q).Anchors: -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestCodeSpans(t *testing.T) {
	type want struct {
		codes  []string
		masked string
	}
	cases := map[string]struct {
		reason string
		args   string
		want   want
	}{
		"Simple": {
			reason: "A span is blanked in the masked text and its content returned.",
			args:   "a `b` c",
			want:   want{codes: []string{"b"}, masked: "a     c"},
		},
		"DoubleBackticks": {
			reason: "A span of two backticks holds a single backtick; one space each side is stripped.",
			args:   "``a ` b`` x",
			want:   want{codes: []string{"a ` b"}, masked: "          x"},
		},
		"Multiline": {
			reason: "A span may cross lines: its newline is a space, and kept in the masked text.",
			args:   "`make e2e\nFLEET_SMOKE=10` x",
			want:   want{codes: []string{"make e2e FLEET_SMOKE=10"}, masked: "         \n                x"},
		},
		"Unclosed": {
			reason: "A backtick run without its closing run is literal.",
			args:   "a ` b",
			want:   want{masked: "a ` b"},
		},
		"Escaped": {
			reason: "A backslash-escaped backtick opens no span.",
			args:   "a \\`b` c",
			want:   want{masked: "a \\`b` c"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spans, masked := codeSpans(tc.args)
			got := want{masked: masked}
			for _, s := range spans {
				got.codes = append(got.codes, s.Code)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\ncodeSpans(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	type want struct {
		links     []Link
		undefined []RefUse
	}
	cases := map[string]struct {
		reason string
		args   string
		want   want
	}{
		"Inline": {
			reason: "Inline links and images, with titles, angle brackets and balanced parentheses.",
			args:   "[a](x.md) ![b](i.png \"t\")\n[c](<a b.md>) [d](f(1).md) [[e]](n.md)",
			want: want{links: []Link{
				{Line: 1, Dest: "x.md"}, {Line: 1, Dest: "i.png"}, {Line: 2, Dest: "a b.md"}, {Line: 2, Dest: "f(1).md"}, {Line: 2, Dest: "n.md"},
			}},
		},
		"Nested": {
			reason: "A linked image has two destinations.",
			args:   "[![badge](b.svg)](ci.md)",
			want:   want{links: []Link{{Line: 1, Dest: "b.svg"}, {Line: 1, Dest: "ci.md"}}},
		},
		"Reference": {
			reason: "Definitions are links; usages need a definition, in any case.",
			args:   "[a][One] [One][] [b][two]\n\n[one]: x.md \"title\"",
			want: want{
				links:     []Link{{Line: 3, Dest: "x.md"}},
				undefined: []RefUse{{Line: 1, Label: "two"}},
			},
		},
		"HTML": {
			reason: "img src and a href are links.",
			args:   "<p><img width=\"3\" src=\"a.png\"> <a href='b.md'>b</a></p>",
			want:   want{links: []Link{{Line: 1, Dest: "a.png"}, {Line: 1, Dest: "b.md"}}},
		},
		"NotLinks": {
			reason: "Brackets without a link after them, code, and HTML comments are not links.",
			args:   "a[0] (x) `[c](c.md)` <!-- [d](d.md) --> [e] (f.md)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got want
			got.links, got.undefined = Links(Parse("x.md", []byte(tc.args)))
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nLinks(%q): -want, +got:\n%s", tc.reason, tc.args, diff)
			}
		})
	}
}
