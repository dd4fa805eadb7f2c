package preview

import (
	"fmt"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/envcfg"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// Load reads a World from files or folders: the EnvironmentConfigs from
// env, every other object a requirement may name from objects. inContext
// delivers the EnvironmentConfigs merged into the pipeline context (see
// World.InContext).
//
// An EnvironmentConfig written as envcfg.OldAPIVersion is refused wherever
// the function would get it through a requirement: Crossplane v2 does not
// serve that version, and crossplane render --required-resources (or
// --extra-resources) matches a requirement's API version exactly, so it
// would not be found there either. The error names every such file and
// object and says how to fix them. Merged into the context (inContext, the
// EnvironmentConfigs only) they are accepted as they are, with a warning
// that says the same: the original platform's configs (examples/compat)
// are kept in their original form, and make render passes them merged
// with --context-values, whatever their version.
func Load(env, objects []string, inContext bool) (World, []string, error) {
	w := World{InContext: inContext}
	var warnings []string
	for _, part := range []struct {
		paths  []string
		into   *[]xpsim.Object
		what   string
		merged bool
	}{
		{paths: env, into: &w.Environment, what: "the EnvironmentConfigs", merged: inContext},
		{paths: objects, into: &w.Objects, what: "the required objects"},
	} {
		files, err := xpsim.Files(part.paths...)
		if err != nil {
			return World{}, nil, fmt.Errorf("cannot read %s: %w", part.what, err)
		}
		var old []string
		for _, f := range files {
			objs, err := xpsim.Load(f)
			if err != nil {
				return World{}, nil, fmt.Errorf("cannot read %s: %w", part.what, err)
			}
			for _, o := range objs {
				if o["apiVersion"] == envcfg.OldAPIVersion && o["kind"] == envcfg.Kind {
					meta, _ := o["metadata"].(map[string]any)
					old = append(old, fmt.Sprintf("%s: %s %q is %s", f, envcfg.Kind, fmt.Sprint(meta["name"]), envcfg.OldAPIVersion))
				}
			}
			*part.into = append(*part.into, objs...)
		}
		if len(old) == 0 {
			continue
		}
		msg := strings.Join(old, "; ") + ". " + envcfg.APIVersionHint
		if !part.merged {
			return World{}, warnings, fmt.Errorf("cannot use %s: %s", part.what, msg)
		}
		warnings = append(warnings, msg+" (--env-context merges them into the pipeline context all the same)")
	}
	return w, warnings, nil
}
