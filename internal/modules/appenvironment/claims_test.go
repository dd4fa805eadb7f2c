package appenvironment_test

import (
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	appenvironmentrun "github.com/seed-6471616d/function-cluster-platform/internal/modules/appenvironment"
)

// wikiClaims are the claims of appXR's environment: its namespace on
// prod-cluster in namespace platform, its bucket and its Ingress's host.
var wikiClaims = []string{"bucket=acme-wiki-uploads", "host=wiki.prod.example.com", "namespace=/platform/prod-cluster/wiki"}

// readsSiblings checks whether the function asked for the other
// AppEnvironments of the namespace.
func readsSiblings(want bool) fntest.Check {
	return func(t *testing.T, rsp *fnv1.RunFunctionResponse) {
		t.Helper()
		if got := rsp.GetRequirements().GetResources()[appenvironmentrun.RequirementSiblings] != nil; got != want {
			t.Errorf("asks for its siblings (%s): %t, want %t", appenvironmentrun.RequirementSiblings, got, want)
		}
	}
}

// claimsAre checks status.claims.
func claimsAre(names []string, confirmed bool) fntest.Check {
	return fntest.Status("claims", map[string]any{"names": fntest.FromStrings(names), "confirmed": confirmed})
}

// holding is an XR whose status says it holds names, confirmed or not.
func holding(names []string, confirmed bool) func(fntest.Object) {
	return fntest.Set("status.claims", map[string]any{"names": fntest.FromStrings(names), "confirmed": confirmed})
}

func TestClaims(t *testing.T) {
	older := fntest.Set("metadata.creationTimestamp", "2026-01-01T00:00:00Z")
	younger := fntest.Set("metadata.creationTimestamp", "2026-09-01T00:00:00Z")
	me := fntest.Set("metadata.creationTimestamp", "2026-06-01T00:00:00Z")
	// other is another environment of the namespace, named other, in
	// namespace other on the same Cluster, with the wiki's host.
	other := func(mutate ...func(fntest.Object)) fntest.Object {
		m := append([]func(fntest.Object){fntest.Set("metadata.name", "other"), fntest.Set("spec.parameters.namespace", "other"),
			fntest.Set("spec.parameters.bucket.name", "acme-other-uploads")}, mutate...)
		return appXR("gcp", m...)
	}
	withSiblings := func(sibs ...fntest.Object) map[string][]fntest.Object {
		e := required(appXR("gcp"))
		e[appenvironmentrun.RequirementSiblings] = sibs
		return e
	}
	hostTaken := `spec.parameters.ingress.host: Forbidden: host "wiki.prod.example.com" is AppEnvironment "other"'s`
	scenarios := map[string]fntest.Scenario{
		"ReadsSiblingsUntilConfirmed": {
			Reason: "A new environment reads its siblings, writes its claims, checks them once more on the next reconcile (a sibling created in the same instant is seen by then), and from then on no longer asks for its siblings: Crossplane v2.4 would re-run it on every change of every one of them.",
			XR:     appXR("gcp", me),
			Extra:  withSiblings(other(older, fntest.Set("spec.parameters.ingress.host", "other.prod.example.com"))),
			Status: true,
			Steps: []fntest.Step{
				{Name: "first", Check: fntest.All(readsSiblings(true), claimsAre(wikiClaims, false))},
				{Name: "second", Check: fntest.All(readsSiblings(true), claimsAre(wikiClaims, true))},
				{Name: "third", Check: fntest.All(readsSiblings(false), claimsAre(wikiClaims, true))},
				{Name: "converge", Converge: true, Check: fntest.All(fntest.IsReady(true), readsSiblings(false), claimsAre(wikiClaims, true))},
			},
		},
		"NewHostChecksAgain": {
			Reason: "A host the environment does not hold yet is checked against its siblings again, twice, before it stops reading them; one a sibling holds is refused, naming it.",
			XR:     appXR("gcp", me, holding(wikiClaims, true)),
			Extra:  withSiblings(other(younger, fntest.Set("spec.parameters.ingress.host", "shop.prod.example.com"), holding([]string{"host=shop.prod.example.com"}, true))),
			Status: true,
			Steps: []fntest.Step{
				{Name: "settled", Check: fntest.All(readsSiblings(false), claimsAre(wikiClaims, true))},
				{Name: "a new host", Spec: fntest.Edit("spec.parameters.ingress.host", "docs.prod.example.com"), Check: fntest.All(readsSiblings(true),
					claimsAre([]string{"bucket=acme-wiki-uploads", "host=docs.prod.example.com", "namespace=/platform/prod-cluster/wiki"}, false))},
				{Name: "confirmed", Check: readsSiblings(true)},
				{Name: "settled again", Check: readsSiblings(false)},
				{Name: "the sibling's host", Spec: fntest.Edit("spec.parameters.ingress.host", "shop.prod.example.com"),
					Fatal: `spec.parameters.ingress.host: Forbidden: host "shop.prod.example.com" is AppEnvironment "other"'s`, Check: readsSiblings(true)},
			},
		},
		"HeldBeatsOlder": {
			Reason: "An environment that holds its host keeps it when an older sibling's spec changes to it: age decides only between two that both hold, or both only ask for, a name.",
			XR:     appXR("gcp", me, holding(wikiClaims, false)),
			Extra:  withSiblings(other(older)),
			Steps:  []fntest.Step{{Name: "checked", Check: fntest.All(readsSiblings(true), claimsAre(wikiClaims, true))}},
		},
		"HolderBeatsYounger": {
			Reason: "An older environment that asks for a host a younger sibling holds is refused, naming the holder: it would take over its records and certificates.",
			XR:     appXR("gcp", older),
			Extra:  withSiblings(other(younger, holding([]string{"host=wiki.prod.example.com"}, true))),
			Steps:  []fntest.Step{{Name: "refused", Fatal: hostTaken}},
		},
		"BothHoldOlderWins": {
			Reason: "Two environments that both wrote a host to their status (each checked before it saw the other) are told apart by age on the confirming check: the younger is refused.",
			XR:     appXR("gcp", me, holding(wikiClaims, false)),
			Extra:  withSiblings(other(older, holding([]string{"host=wiki.prod.example.com"}, false))),
			Steps:  []fntest.Step{{Name: "refused", Fatal: hostTaken}},
		},
		"NamespaceHeld": {
			Reason: "A namespace of the Cluster a younger sibling holds is refused to an older environment, naming the holder.",
			XR:     appXR("gcp", older),
			Extra: withSiblings(other(younger, fntest.Set("spec.parameters.namespace", "wiki"), fntest.Set("spec.parameters.ingress.host", "other.prod.example.com"),
				holding([]string{"namespace=/platform/prod-cluster/wiki"}, true))),
			Steps: []fntest.Step{{Name: "refused", Fatal: `metadata.name: Forbidden: namespace "wiki" of Cluster "prod-cluster" belongs to AppEnvironment "other"`}},
		},
		"ClusterAbsentKeepsClaims": {
			Reason: "While its Cluster is not there, the environment checks nothing and keeps the claims its status holds.",
			XR:     appXR("gcp", me, holding(wikiClaims, true)),
			Steps:  []fntest.Step{{Name: "waiting", Check: fntest.All(readsSiblings(false), claimsAre(wikiClaims, true), fntest.IsReady(false))}},
		},
	}
	fntest.RunAll(t, "AppEnvironment claims", run, envs, scenarios)
}
