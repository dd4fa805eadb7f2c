package main

import (
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// fakeCLI is a binary's flags by command ("" for the binary without one).
type fakeCLI map[string][]string

func (f fakeCLI) Commands() ([][]string, error) {
	var out [][]string
	for k := range f {
		if k != "" {
			out = append(out, strings.Fields(k))
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out, nil
}

func (f fakeCLI) HasFlag(path []string, flag string) (bool, string, error) {
	for _, g := range f[strings.Join(path, " ")] {
		if g == flag {
			return true, "", nil
		}
	}
	return false, "", nil
}

// cli is the fake binary of the tests: serve by default, and preview.
var cli = fakeCLI{
	"":        {"--help", "--insecure", "--address", "--max-concurrent-calls"},
	"serve":   {"--help", "--insecure", "--address", "--max-concurrent-calls"},
	"preview": {"--help", "--env", "--fleet"},
}

const makefile = `.PHONY: build fleet e2e
GO ?= go
N ?= 100
build:
	$(GO) build .
fleet e2e: build
	echo fleet
$(BIN)/tool:
	touch $@
`

func TestCheck(t *testing.T) {
	type args struct {
		files map[string]string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   []string
	}{
		"GoodLinks": {
			reason: "Links to a file, a directory, a heading of another page, an explicit anchor, an image and the web are all fine.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nSee [the guide](docs/guide.md#set-it-up), [the examples](examples/), " +
					"[a note](#note), ![shot](docs/images/a.png), <img src=\"docs/images/a.png\">, " +
					"[the web](https://example.com/x.md#nowhere) and [mail](mailto:a@example.com).\n\n<a id=\"note\"></a>\n",
				"docs/guide.md":     "# Guide\n\n## Set it up!\n\nBack to the [README](../README.md#top).\n",
				"docs/images/a.png": "png",
				"examples/x.yaml":   "a: b\n",
			}},
		},
		"BrokenFile": {
			reason: "A link to a file that does not exist is a problem, at its line.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nfine\n\nSee [gone](docs/gone.md).\n",
			}},
			want: []string{`README.md:5: link "docs/gone.md": docs/gone.md does not exist`},
		},
		"BrokenImage": {
			reason: "An image, markdown or HTML, that does not exist is a problem.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\n![a](a.png)\n\n<img alt=\"b\" src=\"b.png\" />\n",
			}},
			want: []string{
				`README.md:3: link "a.png": a.png does not exist`,
				`README.md:5: link "b.png": b.png does not exist`,
			},
		},
		"BrokenAnchor": {
			reason: "An anchor that no heading of the target makes is a problem, with the closest one suggested.",
			args: args{files: map[string]string{
				"README.md":     "# Top\n\nSee [setup](docs/guide.md#setup) and [here](#topp).\n",
				"docs/guide.md": "# Guide\n\n## Set up\n\n[back](../README.md)\n",
			}},
			want: []string{
				`README.md:3: link "docs/guide.md#setup": docs/guide.md has no heading or anchor #setup (did you mean #set-up?)`,
				`README.md:3: link "#topp": README.md has no heading or anchor #topp (did you mean #top?)`,
			},
		},
		"DuplicateHeadingSlug": {
			reason: "Repeated headings get -1, -2 (GitHub's rule); a link to the unnumbered slug beyond them is fine, to a number too far is not.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\n## GCP\n\n## GCP\n\n## GCP\n\n[a](#gcp) [b](#gcp-1) [c](#gcp-2) [d](#gcp-3)\n",
			}},
			want: []string{`README.md:9: link "#gcp-3": README.md has no heading or anchor #gcp-3 (did you mean #gcp-1?)`},
		},
		"HeadingPunctuationAndCode": {
			reason: "Slugs drop punctuation but - and _, keep code spans' text, and turn spaces into -.",
			args: args{files: map[string]string{
				"README.md": "# Previewing: `preview`\n\n## Day-2 lifecycle: upgrades, rotations (v1.2)\n\n## snake_case & [a link](https://x)\n\n" +
					"[a](#previewing-preview) [b](#day-2-lifecycle-upgrades-rotations-v12) [c](#snake_case--a-link)\n",
			}},
		},
		"CodeIgnored": {
			reason: "Links in fenced code blocks and in inline code are not links.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\n```markdown\n[gone](gone.md)\n# Not a heading\n```\n\nNot a link: `[gone](gone.md)`.\n\n[heading in code](#not-a-heading)\n",
			}},
			want: []string{`README.md:10: link "#not-a-heading": README.md has no heading or anchor #not-a-heading`},
		},
		"ReferenceLinks": {
			reason: "A reference definition's target is checked, and a reference to an undefined label is a problem.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nSee [the guide][guide], [Top][] and [this][nowhere].\n\n[guide]: docs/gone.md\n[top]: #top\n",
			}},
			want: []string{
				`README.md:3: reference link [nowhere] has no definition`,
				`README.md:5: link "docs/gone.md": docs/gone.md does not exist`,
			},
		},
		"LeavesRepository": {
			reason: "A relative link out of the repository does not resolve on GitHub.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nThe [CRDs](../shared/crds).\n",
			}},
			want: []string{`README.md:3: link "../shared/crds" leaves the repository`},
		},
		"MakeTargets": {
			reason: "make commands in code blocks and inline code name Makefile targets; variables and options are fine, a missing target is not.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\n```shell\nmake build   # build it\nFN_ARGS=--insecure make fleet N=150\ncd x && make -j 4 e2e FLEET_SMOKE=10\nmake -C other anything\nmake docs\n```\n\n" +
					"Run `make e2e\nFLEET_SMOKE=10` or `make bench`; make sure of it.\n",
			}},
			want: []string{
				`README.md:8: make docs: the Makefile has no target docs`,
				`README.md:12: make bench: the Makefile has no target bench`,
			},
		},
		"BinaryFlags": {
			reason: "Flags of bin/function-cluster-platform and go run . are checked against the command they name, the default one without.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\n```shell\nbin/function-cluster-platform --insecure --addr=:9443 &\n" +
					"go run . preview --fleet dir \\\n  --env e --insecure > out.txt\ngo run ./internal/other --anything\n" +
					"crossplane render xr.yaml --include-full-xr\n```\n",
			}},
			want: []string{
				`README.md:4: function-cluster-platform has no flag --addr`,
				`README.md:5: function-cluster-platform preview has no flag --insecure`,
			},
		},
		"FNArgs": {
			reason: "FN_ARGS are flags of the function (test/e2e/run.sh passes them to it).",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nMeasured with `FN_ARGS='--insecure --ttl=1m' make fleet N=150`.\n",
			}},
			want: []string{`README.md:3: function-cluster-platform has no flag --ttl`},
		},
		"InlineFlags": {
			reason: "Flags alone in inline code must be the binary's (any command) or, in a paragraph naming it, another tool's from OtherFlags; a command of the binary written alone is checked.",
			args: args{files: map[string]string{
				"README.md": "# Top\n\nRaise `--max-concurrent-calls`; `--fleet DIR --env OLD`; `--nope`.\n\n" +
					"external-dns runs with `--zone-id-filter`.\n\nThe provider runs with `--zone-id-filter`.\n\n" +
					"Plan with `preview --fleet` or `preview --address`; `kubectl wait --for=condition=Ready` is another tool.\n",
			}},
			want: []string{
				`README.md:3: --nope is not a flag of function-cluster-platform or of its commands, nor of a tool in docscheck's OtherFlags`,
				`README.md:7: --zone-id-filter is a flag of external-dns, not of function-cluster-platform: name external-dns in the paragraph, or write the command`,
				`README.md:9: function-cluster-platform preview has no flag --address`,
			},
		},
		"RuntimeConfigArgs": {
			reason: "The args of a DeploymentRuntimeConfig, in the docs or under examples/, are flags of the function; other kinds' args are not.",
			args: args{files: map[string]string{
				"README.md":                 "# Top\n\n```yaml\napiVersion: pkg.crossplane.io/v1beta1\nkind: DeploymentRuntimeConfig\nspec:\n  containers:\n  - name: package-runtime\n    args:\n    - --insecure\n    - \"--max-concurrent-calls=4\"\n    - --bogus\n---\nkind: Deployment\nargs: [--other]\n```\n",
				"examples/install/drc.yaml": "kind: DeploymentRuntimeConfig\nspec:\n  containers:\n  - args: [\"--address=:9443\", \"--wrong\"]\n",
			}},
			want: []string{
				`README.md:12: function-cluster-platform has no flag --bogus`,
				`examples/install/drc.yaml:4: function-cluster-platform has no flag --wrong`,
			},
		},
		"OrphanPage": {
			reason: "A docs page that no chain of links from the README reaches is an orphan; one reached through another page, or as a folder's README, is not.",
			args: args{files: map[string]string{
				"README.md":            "# Top\n\n[Guide](docs/guide.md), [ops](docs/ops/)\n",
				"docs/guide.md":        "# Guide\n\n[More](more.md)\n",
				"docs/more.md":         "# More\n",
				"docs/ops/README.md":   "# Ops\n",
				"docs/orphan.md":       "# Orphan\n",
				"docs/nested/lost.md":  "# Lost\n\n[home](../../README.md)\n",
				"docs/images/notes.md": "",
			}},
			want: []string{
				`docs/images/notes.md:1: no link leads here from README.md (directly or through other pages)`,
				`docs/nested/lost.md:1: no link leads here from README.md (directly or through other pages)`,
				`docs/orphan.md:1: no link leads here from README.md (directly or through other pages)`,
			},
		},
		"ReadmeTooLong": {
			reason: "A README over the limit is a problem at its first line too many.",
			args: args{files: map[string]string{
				"README.md": "# Top\n" + strings.Repeat("text\n", 24),
			}},
			want: []string{`README.md:21: the README has 25 lines, more than 20: move detail into docs/`},
		},
		"ReadmeEmpty": {
			reason: "An empty README is a problem.",
			args: args{files: map[string]string{
				"README.md": "\n  \n",
			}},
			want: []string{`README.md:1: the README is empty`},
		},
		"ReadmeMissing": {
			reason: "A missing README is a problem.",
			args:   args{files: map[string]string{}},
			want:   []string{`README.md:1: there is no README.md`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"Makefile": {Data: []byte(makefile)}}
			for p, s := range truePackage {
				fsys[p] = &fstest.MapFile{Data: []byte(s)}
			}
			for p, s := range tc.args.files {
				fsys[p] = &fstest.MapFile{Data: []byte(s)}
			}
			c := &Checker{FS: fsys, CLI: cli, MaxReadmeLines: 20}
			problems, err := c.Check()
			if err != nil {
				t.Fatalf("%s\nCheck(): %v", tc.reason, err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCheck(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
