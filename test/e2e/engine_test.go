package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRDSRefusal(t *testing.T) {
	instance := func(asked, runs string, allow bool) object {
		fp := map[string]any{"engineVersion": asked}
		if allow {
			fp["allowMajorVersionUpgrade"] = true
		}
		return object{"spec": map[string]any{"forProvider": fp}, "status": map[string]any{"atProvider": map[string]any{"engineVersionActual": runs}}}
	}
	group := func(family string) object {
		return object{"metadata": map[string]any{"annotations": map[string]any{"crossplane.io/external-name": "db-" + family}}, "spec": map[string]any{"forProvider": map[string]any{"family": family}}}
	}
	cases := map[string]struct {
		reason   string
		instance object
		group    object
		want     string
	}{
		"Same": {
			reason:   "An instance that asks for the major it runs is not an engine change.",
			instance: instance("16", "16.4", false), group: group("postgres16"),
		},
		"Major": {
			reason:   "A major upgrade with the flag and a group of the new family is carried out.",
			instance: instance("17", "16.4", true), group: group("postgres17"),
		},
		"NoFlag": {
			reason:   "A major upgrade without AllowMajorVersionUpgrade is refused, as RDS does.",
			instance: instance("17", "16.4", false), group: group("postgres17"),
			want: "InvalidParameterCombination: The AllowMajorVersionUpgrade flag must be present when upgrading to a new major version.",
		},
		"OldFamily": {
			reason:   "A major upgrade on the old family's parameter group is refused, as RDS does.",
			instance: instance("17", "16.4", true), group: group("postgres16"),
			want: "InvalidParameterCombination: The parameter group db-postgres16 with DBParameterGroupFamily postgres16 cannot be used for this instance. Use a parameter group with DBParameterGroupFamily postgres17.",
		},
		"NoGroup": {
			reason:   "A major upgrade whose selector finds no group is refused.",
			instance: instance("17", "16.4", true),
			want:     "InvalidParameterCombination: The parameter group  with DBParameterGroupFamily  cannot be used for this instance. Use a parameter group with DBParameterGroupFamily postgres17.",
		},
		"Downgrade": {
			reason:   "RDS never downgrades a major version.",
			instance: instance("15", "16.4", true), group: group("postgres15"),
			want: "InvalidParameterCombination: cannot upgrade postgres from 16 to 15: downgrades are not supported",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rdsRefusal(tc.instance, tc.group)); diff != "" {
				t.Errorf("%s\nrdsRefusal(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
