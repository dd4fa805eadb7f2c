package names

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTag(t *testing.T) {
	cases := map[string]struct {
		reason    string
		namespace string
		want      string
	}{
		"Platform": {reason: "A namespace's tag is fixed: it is part of every name its XRs already run with.", namespace: "platform", want: Tag("platform")},
		"Other":    {reason: "Another namespace has another tag.", namespace: "tenant-x", want: Tag("tenant-x")},
	}
	seen := map[string]string{}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Tag(tc.namespace)
			if len(got) != TagLen {
				t.Errorf("%s\nTag(%q) = %q, want %d characters", tc.reason, tc.namespace, got, TagLen)
			}
			for _, c := range got {
				if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
					t.Errorf("%s\nTag(%q) = %q has %q, outside [a-z0-9]", tc.reason, tc.namespace, got, c)
				}
			}
			if other, ok := seen[got]; ok {
				t.Errorf("%s\nTag(%q) = Tag(%q) = %q", tc.reason, tc.namespace, other, got)
			}
			seen[got] = tc.namespace
		})
	}
	// Fixed values: a change of the derivation would rename what runs.
	if diff := cmp.Diff("5kbe0", Tag("tenant-x")); diff != "" {
		t.Errorf("Tag(tenant-x) changed, which would rename every tenant-x resource: -want, +got:\n%s", diff)
	}
}

func TestTenant(t *testing.T) {
	type args struct {
		namespace, name string
		max             int
	}
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Short": {
			reason: "A name that fits with the tag gets the namespace's tag.",
			args:   args{namespace: "tenant-x", name: "shop", max: MaxBase},
			want:   "shop-5kbe0",
		},
		"Long": {
			reason: "A name too long for the tag keeps a prefix and a long hash of namespace and name, within max.",
			args:   args{namespace: "tenant-x", name: "a-very-long-application-environment-name", max: MaxBase},
			want:   Tenant("tenant-x", "a-very-long-application-environment-name", MaxBase),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Tenant(tc.args.namespace, tc.args.name, tc.args.max)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nTenant(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(got) > tc.args.max {
				t.Errorf("%s\nTenant(...) = %q is longer than %d", tc.reason, got, tc.args.max)
			}
		})
	}
}

// TestTenantKeepsNamespacesApart is the property the derivation is for: the
// same names in different namespaces, and names chosen to look like
// another namespace's, never derive the same cloud name.
func TestTenantKeepsNamespacesApart(t *testing.T) {
	namespaces := []string{"platform", "tenant-x", "team-a", "team-a-dev", "a", "a-b"}
	xrs := []string{"shop", "www", "shop-gcp0", "b-c", "c", "a-very-long-application-environment-name", "a-very-long-application-environment-nam2"}
	seen := map[string]string{}
	for _, ns := range namespaces {
		for _, n := range xrs {
			// Names that embed another namespace's tag, too.
			for _, name := range []string{n, n + "-" + Tag("platform"), n + "-" + Tag("tenant-x")} {
				if len(name) > MaxBase {
					name = name[:MaxBase]
				}
				got := Tenant(ns, name, MaxBase)
				key := ns + "/" + name
				if other, ok := seen[got]; ok && other != key {
					t.Errorf("Tenant gives %s and %s the same cloud name %q", other, key, got)
				}
				seen[got] = key
			}
		}
	}
}

func TestTenancyHost(t *testing.T) {
	ten := &Tenancy{
		Namespaces: map[string]Grant{
			"platform": {Hosts: []string{"prod.example.com", "*.prod.example.com"}},
			"shop":     {Hosts: []string{"*.shop.prod.example.com", "shop.prod.example.com"}},
			"twin-a":   {Hosts: []string{"*.twin.example.com"}},
			"twin-b":   {Hosts: []string{"*.twin.example.com"}},
		},
		Default: &Grant{Hosts: []string{"*.{namespace}.apps.example.com"}},
	}
	type args struct{ namespace, host string }
	cases := map[string]struct {
		reason string
		t      *Tenancy
		args   args
		want   Refusal
	}{
		"Granted":            {reason: "A host under a namespace's domain is its own.", t: ten, args: args{"platform", "www.prod.example.com"}, want: Assigned},
		"GrantedApex":        {reason: "An exact host is granted.", t: ten, args: args{"platform", "prod.example.com"}, want: Assigned},
		"TrailingDot":        {reason: "A DNS name's trailing dot and case do not matter.", t: ten, args: args{"platform", "WWW.prod.example.com."}, want: Assigned},
		"CloserGrantWins":    {reason: "A host under a closer grant of another namespace is that namespace's, even within a wider grant.", t: ten, args: args{"platform", "api.shop.prod.example.com"}, want: OtherNamespace},
		"CloserGrantOwner":   {reason: "The namespace with the closer grant may use it.", t: ten, args: args{"shop", "api.shop.prod.example.com"}, want: Assigned},
		"ExactBeatsWildcard": {reason: "An exact host is closer than a wildcard of the same domain.", t: ten, args: args{"platform", "shop.prod.example.com"}, want: OtherNamespace},
		"NotGranted":         {reason: "A host outside every grant of the namespace is not assigned.", t: ten, args: args{"shop", "www.prod.example.com"}, want: NotAssigned},
		"Elsewhere":          {reason: "A host nobody has is not assigned.", t: ten, args: args{"shop", "evil.example.org"}, want: NotAssigned},
		"Tie":                {reason: "Two namespaces granted the same domain: neither may use it.", t: ten, args: args{"twin-a", "x.twin.example.com"}, want: OtherNamespace},
		"DefaultOwn":         {reason: "The default grant gives a namespace its own subdomain.", t: ten, args: args{"team-a", "www.team-a.apps.example.com"}, want: Assigned},
		"DefaultOther":       {reason: "Another namespace's subdomain of the default grant is not this one's.", t: ten, args: args{"team-a", "www.team-b.apps.example.com"}, want: NotAssigned},
		"DefaultDeeper":      {reason: "A subdomain of the namespace's own subdomain is its own.", t: ten, args: args{"team-a", "x.y.team-a.apps.example.com"}, want: Assigned},
		"NoTenancy":          {reason: "Without a tenancy key no host is assigned.", t: nil, args: args{"team-a", "www.example.com"}, want: NotAssigned},
		"SuffixLookalike":    {reason: "A domain that merely ends like a granted one is not under it.", t: ten, args: args{"platform", "evilprod.example.com"}, want: NotAssigned},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.t.Host(tc.args.namespace, tc.args.host)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nHost(%q, %q): -want, +got:\n%s", tc.reason, tc.args.namespace, tc.args.host, diff)
			}
		})
	}
}

func TestTenancyName(t *testing.T) {
	ten := &Tenancy{
		Namespaces: map[string]Grant{
			"platform": {Names: []string{"*"}},
			"shop":     {Names: []string{"shop-*", "legacy-assets"}},
			"team-c":   {Names: []string{"legacy-azure"}},
		},
		Default: &Grant{Names: []string{"{namespace}-*"}},
	}
	type args struct{ namespace, name string }
	cases := map[string]struct {
		reason string
		args   args
		want   Refusal
	}{
		"Everything":        {reason: "A namespace granted every name may choose one nobody else has.", args: args{"platform", "media"}, want: Assigned},
		"CloserPrefix":      {reason: "A name under another namespace's longer prefix is that namespace's.", args: args{"platform", "shop-media"}, want: OtherNamespace},
		"OwnPrefix":         {reason: "A name under the namespace's own prefix is its own.", args: args{"shop", "shop-media"}, want: Assigned},
		"Exact":             {reason: "An exact name is granted.", args: args{"shop", "legacy-assets"}, want: Assigned},
		"DefaultOwn":        {reason: "The default gives a namespace the names that begin with it.", args: args{"team-a", "team-a-media"}, want: Assigned},
		"DefaultLongerTwin": {reason: "A name that begins with a longer namespace's prefix is that namespace's.", args: args{"team-a", "team-a-dev-media"}, want: OtherNamespace},
		"DefaultNotMine":    {reason: "Another namespace's names are not this one's.", args: args{"team-a", "team-b-media"}, want: NotAssigned},
		"HyphensDropped":    {reason: "A name that a cloud without '-' (an Azure storage account) names as another namespace's is that namespace's.", args: args{"platform", "legacy-a-zure"}, want: OtherNamespace},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ten.Name(tc.args.namespace, tc.args.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nName(%q, %q): -want, +got:\n%s", tc.reason, tc.args.namespace, tc.args.name, diff)
			}
		})
	}
}

func TestRefusalWhy(t *testing.T) {
	cases := map[string]struct {
		reason string
		r      Refusal
		want   string
	}{
		"Assigned":       {reason: "Nothing is said of an assigned host.", r: Assigned, want: ""},
		"NotAssigned":    {reason: "A host not assigned says where the platform team assigns it.", r: NotAssigned, want: `host "www.prod.example.com" is not assigned to namespace "tenant-x": hosts and chosen cloud names are global, so the platform team assigns them to namespaces (environment key tenancy.namespaces.tenant-x.hosts)`},
		"OtherNamespace": {reason: "Another namespace's host is refused without naming that namespace.", r: OtherNamespace, want: `host "www.prod.example.com" is assigned to another namespace: hosts and chosen cloud names are global, and one namespace's may not be used by another's XRs`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.r.Why(`host "www.prod.example.com"`, "tenant-x", "hosts")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nWhy: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLooksDerived(t *testing.T) {
	cases := map[string]struct {
		reason string
		name   string
		want   bool
	}{
		"Derived":      {reason: "A tenant's derived name.", name: Tenant("tenant-x", "wiki", MaxBase), want: true},
		"Bare":         {reason: "A plain name.", name: "prod-cluster", want: false},
		"FiveLetters":  {reason: "A last part of five letters is a word, not a tag (a tag starts with a digit).", name: "app-cache", want: false},
		"FleetSuffix":  {reason: "A short suffix such as the fleet's.", name: "shop-gcp0", want: false},
		"DigitNotTag":  {reason: "A digit then a letter outside the tag's alphabet.", name: "db-1lite", want: false},
		"TooShort":     {reason: "Nothing before the tag.", name: "-1abcd", want: false},
		"DigitAndTag":  {reason: "Ends like a tag: refused in a namespace of bare names.", name: "shop-2abcd", want: true},
		"YearAndMonth": {reason: "A date-like suffix of the tag's form is refused too: the rule cannot tell.", name: "report-2024a", want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := LooksDerived(tc.name); got != tc.want {
				t.Errorf("%s\nLooksDerived(%q) = %t, want %t", tc.reason, tc.name, got, tc.want)
			}
		})
	}
}

func TestJoinFor(t *testing.T) {
	type args struct {
		tenant bool
		max    int
		parts  []string
	}
	long := "payments-processing-service-eu-1abcd"
	cases := map[string]struct {
		reason string
		args   args
		want   string
	}{
		"Fits": {
			reason: "A name within max is the parts joined, whatever the kind of cloud name.",
			args:   args{tenant: true, max: 30, parts: []string{"shop-5kbe0", "nodes"}},
			want:   "shop-5kbe0-nodes",
		},
		"BareKeepsShorten": {
			reason: "A bare cloud name's long names stay as Shorten made them: what runs keeps its names.",
			args:   args{tenant: false, max: 30, parts: []string{long, "nodes"}},
			want:   Shorten(long+"-nodes", 30),
		},
		"TenantLongHash": {
			reason: "A tenant's long name keeps a prefix and a 50-bit hash of the whole.",
			args:   args{tenant: true, max: 30, parts: []string{long, "nodes"}},
			want:   "payments-processing-" + hash(long+"-nodes", longHashLen),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := JoinFor(tc.args.tenant, tc.args.max, tc.args.parts...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nJoinFor(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(got) > tc.args.max {
				t.Errorf("%s\nJoinFor(...) = %q is longer than %d", tc.reason, got, tc.args.max)
			}
		})
	}
}

// TestJoinForResistsChosenCollisions is the attack JoinFor is for: a
// tenant tries names that share the prefix a long name is cut to until
// two shortened names are equal. With Shorten's 24-bit hash a few thousand
// tries find such a pair (the birthday bound); JoinFor keeps them apart.
func TestJoinForResistsChosenCollisions(t *testing.T) {
	seen := map[string]string{}
	var a, b string
	for i := 0; i < 1<<16 && a == ""; i++ {
		s := fmt.Sprintf("payments-processing-service-%05d", i)
		short := Shorten(s+"-nodes", 30)
		if other, ok := seen[short]; ok {
			a, b = other, s
		}
		seen[short] = s
	}
	if a == "" {
		t.Fatal("no two names of 65,536 collide under Shorten: the test shows nothing")
	}
	if Join(30, a, "nodes") != Join(30, b, "nodes") {
		t.Fatalf("%q and %q were found to collide under Shorten, yet Join tells them apart", a, b)
	}
	if x, y := JoinFor(true, 30, a, "nodes"), JoinFor(true, 30, b, "nodes"); x == y {
		t.Errorf("JoinFor gives %q and %q the same name %q", a, b, x)
	}
}
