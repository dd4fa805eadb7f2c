// Package deps holds the project's security floors for its dependencies
// (floors.txt) and checks go.mod against them.
package deps

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// A Floor is the lowest version go.mod may name for a module ("go" for the
// go directive, "toolchain" for the toolchain line), and why.
type Floor struct {
	Module, Version, Why string
}

// ParseFloors reads floors.txt: one floor a line, module, version and why
// separated by spaces; '#' starts a comment.
func ParseFloors(data []byte) ([]Floor, error) {
	var out []Floor
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("cannot parse floor on line %d: want module, version and why", n)
		}
		out = append(out, Floor{Module: f[0], Version: f[1], Why: strings.Join(f[2:], " ")})
	}
	return out, sc.Err()
}

// A Finding is a module go.mod names below its floor, or not at all.
type Finding struct {
	Floor
	// Have is the version go.mod names; empty when it names none.
	Have string
}

// String says what is wrong.
func (f Finding) String() string {
	if f.Have == "" {
		return fmt.Sprintf("%s: go.mod names no version; its floor is %s (%s)", f.Module, f.Version, f.Why)
	}
	return fmt.Sprintf("%s %s is below its floor %s (%s)", f.Module, f.Have, f.Version, f.Why)
}

// Check returns the floors go.mod does not meet, in the floors' order,
// and what go.mod names for each floor's module.
func Check(gomod []byte, floors []Floor) ([]Finding, map[string]string, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot parse go.mod: %w", err)
	}
	have := map[string]string{}
	if f.Go != nil {
		have["go"] = f.Go.Version
	}
	if f.Toolchain != nil {
		have["toolchain"] = strings.TrimPrefix(f.Toolchain.Name, "go")
	}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	var out []Finding
	for _, fl := range floors {
		h, ok := have[fl.Module]
		if !ok || semver.Compare(canonical(fl.Module, h), canonical(fl.Module, fl.Version)) < 0 {
			out = append(out, Finding{Floor: fl, Have: h})
		}
	}
	return out, have, nil
}

// canonical is a version as package semver reads it: the go directive's
// and the toolchain line's have no "v".
func canonical(module, v string) string {
	if module == "go" || module == "toolchain" {
		return "v" + v
	}
	return v
}
