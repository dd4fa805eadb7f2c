package main

import (
	"regexp"
	"strings"
)

var ruleLine = regexp.MustCompile(`^([^:=#\t][^:=#]*?)\s*::?(?:[^:=]|$)`)

// MakeTargets returns the targets of a Makefile's rules: the names left of
// the colon of each rule line (not recipes, variable assignments or
// define blocks), without special targets (.PHONY) and names that need
// expanding ($(BIN)/x, %.o).
func MakeTargets(src []byte) map[string]bool {
	targets := map[string]bool{}
	text := strings.ReplaceAll(string(src), "\\\n", " ")
	inDefine := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "define ") || l == "define":
			inDefine = true
		case inDefine:
			inDefine = strings.TrimSpace(l) != "endef"
		case strings.HasPrefix(l, "\t"):
		default:
			m := ruleLine.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			for _, t := range strings.Fields(m[1]) {
				if !strings.HasPrefix(t, ".") && !strings.ContainsAny(t, "$%") {
					targets[t] = true
				}
			}
		}
	}
	return targets
}
