package object

import "testing"

func TestIsReference(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   bool
	}{
		"Ref":           {reason: "A reference to one resource.", name: "vpcIdRef", want: true},
		"Refs":          {reason: "References to several.", name: "subnetIdRefs", want: true},
		"Selector":      {reason: "A selector.", name: "networkSelector", want: true},
		"Selectors":     {reason: "Selectors.", name: "policySelectors", want: true},
		"SecretKeyRef":  {reason: "A Secret's key selector is a reference too.", name: "secretKeyRef", want: true},
		"Bare":          {reason: "A field named ref or selector alone.", name: "selector", want: true},
		"Field":         {reason: "The field a reference fills is not itself one.", name: "vpcId", want: false},
		"Lowercase":     {reason: "A word ending in refs is no reference.", name: "preferences", want: false},
		"AfterCapital":  {reason: "A reference follows a lower-case letter or a digit (an acronym is not its base).", name: "IDRef", want: false},
		"SuffixAlone":   {reason: "Ref alone names nothing.", name: "Ref", want: false},
		"EmptyName":     {reason: "No name.", name: "", want: false},
		"DigitBeforeIt": {reason: "A digit may end the base.", name: "subnet2Ref", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsReference(tc.name); got != tc.want {
				t.Errorf("%s\nIsReference(%q) = %t, want %t", tc.reason, tc.name, got, tc.want)
			}
		})
	}
}
