package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// xrOf is an XR of kind in namespace ns ("" for a legacy cluster-scoped
// one) named name, labelled with wave, whose status says release renders
// it (none when ""), Ready and Synced as given, at its generation; selects
// the release selected (none when "").
func xrOf(kind, ns, name, wave, release, selected string, ready, synced bool) map[string]any {
	status := func(b bool) string {
		if b {
			return "True"
		}
		return "False"
	}
	meta := map[string]any{"name": name, "generation": int64(2), "labels": map[string]any{Label: wave, "cloud": "gcp"}}
	spec := map[string]any{}
	if ns != "" {
		meta["namespace"] = ns
	}
	if selected != "" {
		sel := map[string]any{"matchLabels": map[string]any{LabelRelease: selected}}
		if ns != "" {
			spec["crossplane"] = map[string]any{"compositionRevisionSelector": sel}
		} else {
			spec["compositionRevisionSelector"] = sel
		}
	}
	st := map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "status": status(ready), "reason": "Available", "observedGeneration": int64(2), "lastTransitionTime": "2026-12-01T10:00:00Z"},
		map[string]any{"type": "Synced", "status": status(synced), "reason": map[bool]string{true: "ReconcileSuccess", false: "ReconcileError"}[synced], "observedGeneration": int64(2)},
	}}
	if release != "" {
		st["platformRelease"] = release
	}
	return map[string]any{"apiVersion": "platform.example.org/v1alpha1", "kind": kind, "metadata": meta, "spec": spec, "status": st}
}

// ours says the fleet controller wrote an XR's selection, unless the test
// annotates it as its owner's (tenant).
func ours(o map[string]any) bool {
	ann, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	return ann["selected-by"] != "tenant"
}

// manual gives namespaced XR o the composition update policy Manual.
func manual(o map[string]any) map[string]any {
	spec := o["spec"].(map[string]any)
	c, _ := spec["crossplane"].(map[string]any)
	if c == nil {
		c = map[string]any{}
		spec["crossplane"] = c
	}
	c["compositionUpdatePolicy"] = "Manual"
	return o
}

// byTenant annotates o's selection as its owner's.
func byTenant(o map[string]any) map[string]any {
	o["metadata"].(map[string]any)["annotations"] = map[string]any{"selected-by": "tenant"}
	return o
}

// claimAPIVersion is the apiVersion of the test's claims.
const claimAPIVersion = "legacy.platform.example.org/v1alpha1"

// claimFor is the claim named name in namespace ns of legacy XR o, whose
// composition revision selector (under spec, as a legacy XR's) selects
// the release selected (none when ""); o is labelled as its claim's XR,
// and the claim's resourceRef names it.
func claimFor(o map[string]any, ns, name, selected string) map[string]any {
	meta := o["metadata"].(map[string]any)
	labels := meta["labels"].(map[string]any)
	labels[LabelClaimName], labels[LabelClaimNamespace] = name, ns
	spec := map[string]any{"resourceRef": map[string]any{"apiVersion": o["apiVersion"], "kind": o["kind"], "name": meta["name"]}}
	if selected != "" {
		spec["compositionRevisionSelector"] = map[string]any{"matchLabels": map[string]any{LabelRelease: selected}}
	}
	return map[string]any{"apiVersion": claimAPIVersion, "kind": strings.TrimPrefix(o["kind"].(string), "X"),
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
}

// claimsOf finds an XR's claim among claims by the XR's claim labels, as
// the fleet controller does; nil when none.
func claimsOf(claims ...map[string]any) func(map[string]any) map[string]any {
	return func(o map[string]any) map[string]any {
		labels := o["metadata"].(map[string]any)["labels"].(map[string]any)
		for _, c := range claims {
			meta := c["metadata"].(map[string]any)
			if meta["name"] == labels[LabelClaimName] && meta["namespace"] == labels[LabelClaimNamespace] {
				return c
			}
		}
		return nil
	}
}

// manualClaim gives claim c the composition update policy Manual.
func manualClaim(c map[string]any) map[string]any {
	c["spec"].(map[string]any)["compositionUpdatePolicy"] = "Manual"
	return c
}

func TestReleaseMemberOf(t *testing.T) {
	// legacy is a legacy XDatabase of a claim in team-a, Ready on r1,
	// selecting r3 itself: the claim's copy, never read.
	legacy := func() map[string]any { return xrOf("XDatabase", "", "db-x7k2p", "canary", "r1", "r3", true, true) }
	// onClaim is legacy()'s Member, of its claim in team-a, asking for
	// asks, as change changes it (when not nil).
	onClaim := func(asks string, change func(*Member)) Member {
		m := Member{Name: "db-x7k2p", Namespace: "team-a", Cloud: "gcp", Kind: "XDatabase", Wave: "canary", Runs: Target{Release: "r1"}, Asks: Target{Release: asks}, Ready: true}
		if change != nil {
			change(&m)
		}
		return m
	}
	pinned := func(m *Member) { m.Pinned = true }
	cases := map[string]struct {
		reason string
		obj    map[string]any
		claim  func(xr map[string]any) map[string]any
		owned  func(map[string]any) bool
		want   Member
	}{
		"Namespaced": {
			reason: "A namespaced XR runs the release its status names and asks for the one its spec.crossplane selector selects, which the controller wrote.",
			obj:    xrOf("Database", "team-a", "db", "staging", "r1", "r2", true, true),
			owned:  ours,
			want: Member{Name: "db", Namespace: "team-a", Cloud: "gcp", Kind: "Database", Wave: "staging",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Ready: true},
		},
		"Legacy": {
			reason: "A legacy XR's selector is spec.compositionRevisionSelector.",
			obj:    xrOf("XCluster", "", "c", "canary", "r1", "r2", true, true),
			owned:  ours,
			want: Member{Name: "c", Cloud: "gcp", Kind: "XCluster", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Ready: true},
		},
		"NotOurs": {
			reason: "A selection the controller did not write (its owner's, the XRD default's) is not the rollout's: the XR asks for what it runs.",
			obj:    xrOf("Cluster", "team-a", "c", "production", "r1", "r2", true, true),
			owned:  func(map[string]any) bool { return false },
			want: Member{Name: "c", Namespace: "team-a", Cloud: "gcp", Kind: "Cluster", Wave: "production",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r1"}, Ready: true},
		},
		"Claim": {
			reason: "A claim's XR asks for what its claim's selector selects, which the controller wrote (Crossplane applies the claim's over the XR's): not the XR's own. It counts in its claim's namespace.",
			obj:    legacy(),
			claim:  func(o map[string]any) map[string]any { return claimFor(o, "team-a", "db", "r2") },
			owned:  ours,
			want:   onClaim("r2", nil),
		},
		"ClaimNotOurs": {
			reason: "A selection on the claim the controller did not write (its owner's) is not the rollout's: the XR asks for what it runs.",
			obj:    legacy(),
			claim:  func(o map[string]any) map[string]any { return byTenant(claimFor(o, "team-a", "db", "r2")) },
			owned:  ours,
			want:   onClaim("r1", nil),
		},
		"ClaimSelectsNothing": {
			reason: "A claim that selects no release: the XR asks for what it runs, whatever its own selector says.",
			obj:    legacy(),
			claim:  func(o map[string]any) map[string]any { return claimFor(o, "team-a", "db", "") },
			owned:  ours,
			want:   onClaim("r1", nil),
		},
		"ClaimManual": {
			reason: "A claim whose update policy is Manual pins its XR's release: Crossplane applies the policy over the XR's.",
			obj:    legacy(),
			claim:  func(o map[string]any) map[string]any { return manualClaim(claimFor(o, "team-a", "db", "r2")) },
			owned:  ours,
			want:   onClaim("r2", pinned),
		},
		"ClaimPaused": {
			reason: "A paused claim syncs nothing to its XR: pinned.",
			obj:    legacy(),
			claim: func(o map[string]any) map[string]any {
				c := claimFor(o, "team-a", "db", "")
				c["metadata"].(map[string]any)["annotations"] = map[string]any{AnnotationPaused: "true"}
				return c
			},
			want: onClaim("r1", pinned),
		},
		"ClaimDeleting": {
			reason: "A claim being deleted deletes its XR: the XR is deleting.",
			obj:    legacy(),
			claim: func(o map[string]any) map[string]any {
				c := claimFor(o, "team-a", "db", "")
				c["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-01T10:00:00Z"
				return c
			},
			want: onClaim("r1", func(m *Member) { m.Deleting = true }),
		},
		"Paused": {
			reason: "A paused XR never reconciles: pinned.",
			obj: func() map[string]any {
				o := xrOf("Database", "team-a", "db", "canary", "r1", "", true, true)
				o["metadata"].(map[string]any)["annotations"] = map[string]any{AnnotationPaused: "true"}
				return o
			}(),
			want: Member{Name: "db", Namespace: "team-a", Cloud: "gcp", Kind: "Database", Wave: "canary", Pinned: true,
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r1"}, Ready: true},
		},
		"ReadySinceItsRelease": {
			reason: "A Ready XR's soak counts from its PlatformRelease condition's transition: when its release first rendered it.",
			obj: func() map[string]any {
				o := xrOf("Database", "team-a", "db", "canary", "r2", "r2", true, true)
				st := o["status"].(map[string]any)
				st["conditions"] = append(st["conditions"].([]any), map[string]any{"type": ConditionPlatformRelease, "status": "True", "reason": "Rendered", "lastTransitionTime": "2026-12-01T11:00:00Z"})
				return o
			}(),
			owned: ours,
			want: Member{Name: "db", Namespace: "team-a", Cloud: "gcp", Kind: "Database", Wave: "canary",
				Runs: Target{Release: "r2"}, Asks: Target{Release: "r2"}, Ready: true, ReadySince: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)},
		},
		"NotSynced": {
			reason: "Ready without Synced proves nothing: the release cannot render it (a Fatal), so it failed.",
			obj:    xrOf("AppEnvironment", "team-a", "app", "canary", "r1", "r2", true, false),
			owned:  ours,
			want: Member{Name: "app", Namespace: "team-a", Cloud: "gcp", Kind: "AppEnvironment", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r2"}, Failed: true, Reason: "ReconcileError"},
		},
		"Pinned": {
			reason: "An XR whose update policy is Manual pins its revision.",
			obj: func() map[string]any {
				o := xrOf("Cluster", "team-a", "c", "canary", "r1", "", true, true)
				o["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
				return o
			}(),
			want: Member{Name: "c", Namespace: "team-a", Cloud: "gcp", Kind: "Cluster", Wave: "canary",
				Runs: Target{Release: "r1"}, Asks: Target{Release: "r1"}, Ready: true, Pinned: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var claim map[string]any
			if tc.claim != nil {
				claim = tc.claim(tc.obj)
			}
			if diff := cmp.Diff(tc.want, ReleaseMemberOf(tc.obj, claim, tc.owned)); diff != "" {
				t.Errorf("%s\nReleaseMemberOf(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// releaseWaves are a canary in namespace platform, staging and production
// (which requires approvals).
var releaseWaves = []Wave{{Name: "canary", Namespaces: []string{"platform"}}, {Name: "staging"}, {Name: "production", RequiresApproval: true, Approved: []string{"release=r2"}}}

func TestMoves(t *testing.T) {
	forward := Release{Target: "r2", From: "r1"}
	type move struct{ Verdict, Select string }
	// claimed is a legacy XDatabase of wave, Ready on r1, and its claim,
	// claim(xr).
	claimed := func(wave string, claim func(xr map[string]any) map[string]any) []map[string]any {
		o := xrOf("XDatabase", "", "db-x7k2p", wave, "r1", "", true, true)
		return []map[string]any{o, claim(o)}
	}
	cases := map[string]struct {
		reason string
		waves  []Wave
		rel    Release
		// xrs are the XRs, and the claims of those of a claim (claimFor),
		// which Moves finds among them.
		xrs  []map[string]any
		want map[string]move
	}{
		"Start": {
			reason: "Nothing runs the new release: the canary moves (its selector selects it), every later XR keeps what it runs, and a new XR that no release rendered yet is given the release the fleet moves from.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "new", "production", "", "", false, false),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Adopt", "r2"},
				"Database team-a/db":        {"Hold", "r1"},
				"AppEnvironment team-b/app": {"Hold", "r1"},
				"AppEnvironment team-b/new": {"Hold", "r1"},
			},
		},
		"CanaryProves": {
			reason: "The canary runs the new release Ready and Synced: staging moves; production waits for staging.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Keep", "r2"},
				"Database team-a/db":        {"Adopt", "r2"},
				"AppEnvironment team-b/app": {"Hold", "r1"},
			},
		},
		"CanaryFails": {
			reason: "The new release cannot render the canary (Synced False): the later waves halt and keep what they run; the canary keeps the release, for its owner to see why.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Keep", "r2"},
				"Database team-a/db":      {"Halt", "r1"},
			},
		},
		"CanaryRefusedByAFatal": {
			reason: "As Crossplane leaves a canary the new release refuses with a Fatal: Synced False at the generation the controller's selection made, Ready still of the one before. The later waves halt, not wait for a reconcile that has happened.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				func() map[string]any {
					o := xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false)
					o["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)["observedGeneration"] = int64(1)
					return o
				}(),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Keep", "r2"},
				"Database team-a/db":      {"Halt", "r1"},
			},
		},
		"TenantJumpsAhead": {
			reason: "A tenant selects the new release on its production XR: not the controller's selection, so the XR asks for what it runs, is held, and its selection is written back.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true),
				byTenant(xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r2", true, true)),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Adopt", "r2"},
				"AppEnvironment team-b/app": {"Hold", "r1"},
			},
		},
		"TenantPinsStaging": {
			reason: "A tenant pins the only staging XR (Manual): staging has no XR that follows the rollout, so production holds (an empty wave proves nothing).",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				manual(xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true)),
				xrOf("AppEnvironment", "team-b", "app", "production", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Keep", "r2"},
				"Database team-a/db":        {"Pinned", ""},
				"AppEnvironment team-b/app": {"Hold", "r1"},
			},
		},
		"EmptyWave": {
			reason: "A canary wave with no XR proves nothing: the later waves hold.",
			waves:  releaseWaves, rel: forward,
			xrs:  []map[string]any{xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true)},
			want: map[string]move{"Database team-a/db": {"Hold", "r1"}},
		},
		"Pinned": {
			reason: "An XR that pins its revision is not moved, and holds nothing.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				func() map[string]any {
					o := xrOf("Cluster", "platform", "pinned", "canary", "r1", "", true, true)
					o["spec"].(map[string]any)["crossplane"] = map[string]any{"compositionUpdatePolicy": "Manual"}
					return o
				}(),
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/pinned": {"Pinned", ""},
				"Cluster platform/canary": {"Keep", "r2"},
				"Database team-a/db":      {"Adopt", "r2"},
			},
		},
		"RollbackStartsAtTheEnd": {
			reason: "A rollback to r1 moves production first; staging and the canary hold until the later waves are moved back.",
			waves:  releaseWaves, rel: Release{Target: "r1", From: "r2", Rollback: true},
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r2", "r2", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r2", "r2", false, true),
			},
			want: map[string]move{
				"Cluster platform/canary":   {"Hold", "r2"},
				"Database team-a/db":        {"Hold", "r2"},
				"AppEnvironment team-b/app": {"Adopt", "r1"},
			},
		},
		"RollbackNotHeldByWhatItUndoes": {
			reason: "A production XR that r1 cannot render (Synced False) once moved back does not hold staging's rollback: it asks for r1.",
			waves:  releaseWaves, rel: Release{Target: "r1", From: "r2", Rollback: true},
			xrs: []map[string]any{
				xrOf("Database", "team-a", "db", "staging", "r2", "r2", true, true),
				xrOf("AppEnvironment", "team-b", "app", "production", "r2", "r1", true, false),
			},
			want: map[string]move{
				"Database team-a/db":        {"Adopt", "r1"},
				"AppEnvironment team-b/app": {"Keep", "r1"},
			},
		},
		"HeldKeepsItsStep": {
			reason: "An XR the controller moved to r2 that no longer may move (the target changed to r3 meanwhile) keeps r2: a step under way is never taken back.",
			waves:  releaseWaves, rel: Release{Target: "r3", From: "r2"},
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Database", "team-a", "db", "staging", "r1", "r2", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Adopt", "r3"},
				"Database team-a/db":      {"Hold", "r2"},
			},
		},
		"RollbackOfAHalt": {
			reason: "A rollback of a halted rollout (only the canary moved, and failed) moves the canary back at once: the later waves run r1 already.",
			waves:  releaseWaves, rel: Release{Target: "r1", From: "r2", Rollback: true},
			xrs: []map[string]any{
				xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
				xrOf("Database", "team-a", "db", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"Cluster platform/canary": {"Adopt", "r1"},
				"Database team-a/db":      {"Keep", "r1"},
			},
		},
		"ClaimMoves": {
			reason: "A claim's XR of the canary moves: the claim's selector is written (Claim names it), not the XR's; staging holds until it runs the release.",
			waves:  releaseWaves, rel: forward,
			xrs: append(claimed("canary", func(o map[string]any) map[string]any { return claimFor(o, "platform", "db", "r1") }),
				xrOf("Cluster", "team-a", "c", "staging", "r1", "r1", true, true)),
			want: map[string]move{
				"XDatabase platform/db-x7k2p (Database platform/db)": {"Adopt", "r2"},
				"Cluster team-a/c": {"Hold", "r1"},
			},
		},
		"ClaimProves": {
			reason: "A claim's XR that runs the release Ready and Synced proves it for its wave, and keeps its claim's selection.",
			waves:  releaseWaves, rel: forward,
			xrs: append(claimed("canary", func(o map[string]any) map[string]any {
				o["status"].(map[string]any)["platformRelease"] = "r2"
				return claimFor(o, "platform", "db", "r2")
			}), xrOf("Cluster", "team-a", "c", "staging", "r1", "r1", true, true)),
			want: map[string]move{
				"XDatabase platform/db-x7k2p (Database platform/db)": {"Keep", "r2"},
				"Cluster team-a/c": {"Adopt", "r2"},
			},
		},
		"ClaimPinnedByManual": {
			reason: "A claim whose update policy is Manual pins its XR: not written, and it counts for no wave, so the canary is empty and staging holds.",
			waves:  releaseWaves, rel: forward,
			xrs: append(claimed("canary", func(o map[string]any) map[string]any { return manualClaim(claimFor(o, "platform", "db", "r1")) }),
				xrOf("Cluster", "team-a", "c", "staging", "r1", "r1", true, true)),
			want: map[string]move{
				"XDatabase platform/db-x7k2p (Database platform/db)": {"Pinned", ""},
				"Cluster team-a/c": {"Hold", "r1"},
			},
		},
		"TenantSelectsOnTheClaim": {
			reason: "A tenant selects the new release on the claim of its production XR: not the controller's selection, so the XR asks for what it runs, is held, and r1 is written back to the claim.",
			waves:  releaseWaves, rel: forward,
			xrs: append(claimed("production", func(o map[string]any) map[string]any { return byTenant(claimFor(o, "team-b", "db", "r2")) }),
				xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true)),
			want: map[string]move{
				"Cluster platform/canary":                        {"Adopt", "r2"},
				"XDatabase team-b/db-x7k2p (Database team-b/db)": {"Hold", "r1"},
			},
		},
		"ClaimNotFound": {
			reason: "A claim's XR whose claim is not found (or not bound to it) is written nothing, neither claim nor XR, and holds: it counts in its wave as its status says, so staging waits for it though the other canary proved the release.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{
				func() map[string]any {
					o := xrOf("XDatabase", "", "db-x7k2p", "canary", "r1", "", true, true)
					claimFor(o, "platform", "db", "")
					return o
				}(),
				xrOf("Cluster", "platform", "canary", "canary", "r2", "r2", true, true),
				xrOf("Cluster", "team-a", "c", "staging", "r1", "r1", true, true),
			},
			want: map[string]move{
				"XDatabase platform/db-x7k2p": {"Hold", ""},
				"Cluster platform/canary":     {"Keep", "r2"},
				"Cluster team-a/c":            {"Hold", "r1"},
			},
		},
		"NamespacedXRsHaveNoClaims": {
			reason: "A namespaced XR labelled with a claim's name has no claim (Crossplane v2's namespaced XRs have none): its own selector is written.",
			waves:  releaseWaves, rel: forward,
			xrs: []map[string]any{func() map[string]any {
				o := xrOf("Cluster", "platform", "canary", "canary", "r1", "", true, true)
				o["metadata"].(map[string]any)["labels"].(map[string]any)[LabelClaimName] = "canary"
				return o
			}()},
			want: map[string]move{"Cluster platform/canary": {"Adopt", "r2"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var xrs, claims []map[string]any
			for _, o := range tc.xrs {
				if o["apiVersion"] == claimAPIVersion {
					claims = append(claims, o)
				} else {
					xrs = append(xrs, o)
				}
			}
			got := map[string]move{}
			for _, mv := range Moves(tc.waves, tc.rel, xrs, claimsOf(claims...), ours, time.Time{}) {
				key := mv.Member.Key()
				if mv.Claim != (Ref{}) {
					key += " (" + mv.Claim.String() + ")"
				}
				got[key] = move{string(mv.Decision.Verdict), mv.Select}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nMoves(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestReleaseMessages(t *testing.T) {
	xrs := []map[string]any{
		xrOf("Cluster", "platform", "canary", "canary", "r1", "r2", true, false),
		xrOf("Database", "platform", "db", "staging", "r1", "r1", true, true),
	}
	got := map[string]string{}
	// An XR of a claim that is not found, and one of a claim that pins it.
	unbound := xrOf("XDatabase", "", "lost-x7k2p", "production", "r1", "", true, true)
	claimFor(unbound, "team-a", "lost", "")
	pinned := xrOf("XDatabase", "", "db-x7k2p", "production", "r1", "", true, true)
	xrs = append(xrs, unbound, pinned)
	for _, mv := range Moves(releaseWaves, Release{Target: "r2", From: "r1"}, xrs, claimsOf(manualClaim(claimFor(pinned, "team-a", "db", ""))), ours, time.Time{}) {
		got[mv.Member.Key()] = mv.Decision.Message
	}
	want := map[string]string{
		"Cluster platform/canary":     "wave canary: runs or moves to release=r2",
		"Database platform/db":        "wave staging halted: XR Cluster platform/canary (gcp, wave canary): ReconcileError failed on its way to release=r2",
		"XDatabase team-a/lost-x7k2p": "its claim team-a/lost is not found, or not bound to it: Crossplane applies a claim's selector over its XR's, so the controller writes neither until it reads the claim",
		"XDatabase team-a/db-x7k2p":   "its owner pins its release (a composition update policy of Manual, or paused reconciles, on the XR or its claim): the rollout does not move it",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Moves(...) messages: -want, +got:\n%s", diff)
	}
}

func TestReleaseValidate(t *testing.T) {
	waves := []Wave{{Name: "canary"}}
	cases := map[string]struct {
		reason string
		rel    Release
		waves  []Wave
		want   []string
	}{
		"Good":     {reason: "A target and where it moves from, over waves.", rel: Release{Target: "r2", From: "r1"}, waves: waves},
		"NoWaves":  {reason: "Without waves every XR would move at once: refused.", rel: Release{Target: "r2", From: "r1"}, want: []string{"environment.rollout.waves: Required value: a release moves over the rollout's waves: without them every XR would move at once"}},
		"NoTarget": {reason: "A release rollout needs a target.", rel: Release{From: "r1"}, waves: waves, want: []string{"environment.rollout.release.target: Required value: the release the fleet moves to: the value of the label platform.example.org/release on its Compositions"}},
		"NoFrom":   {reason: "A release rollout needs what it moves from: what an XR that selects none waits on.", rel: Release{Target: "r2"}, waves: waves, want: []string{"environment.rollout.release.from: Required value: the release the fleet moves from: what an XR that selects no release yet is given while the waves hold it"}},
		"Same":     {reason: "From and target are two releases.", rel: Release{Target: "r1", From: "r1"}, waves: waves, want: []string{`environment.rollout.release.from: Invalid value: "r1": the release the fleet moves from cannot be the one it moves to`}},
		"BadLabel": {reason: "A release is a label value.", rel: Release{Target: "r 2", From: "r1"}, waves: waves, want: []string{`environment.rollout.release.target: Invalid value: "r 2": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range tc.rel.Validate(field.NewPath("environment", "rollout"), tc.waves) {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nValidate: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
