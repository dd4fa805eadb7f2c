package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestRulingName(t *testing.T) {
	long := strings.Repeat("a", 250)
	cases := map[string]struct {
		reason string
		ref    Ref
		want   string
	}{
		"Namespaced": {reason: "A Cluster's ruling is named by its kind, namespace and name.", ref: Ref{Kind: "Cluster", Namespace: "team-a", Name: "prod"}, want: "cluster.team-a.prod"},
		"Legacy":     {reason: "A legacy XCluster has no namespace.", ref: Ref{Kind: "XCluster", Name: "prod-x7k2q"}, want: "xcluster.prod-x7k2q"},
		"NoClash": {reason: "A namespace has no dot, so namespace a-b name c and namespace a name b-c differ; the dot after the namespace keeps a.b-c apart from a-b.c.",
			ref: Ref{Kind: "Cluster", Namespace: "a", Name: "b.c"}, want: "cluster.a.b.c"},
		"TooLong": {reason: "A name longer than an object's may be is hashed: h. and 40 hex digits (want empty: the form is checked).", ref: Ref{Kind: "Cluster", Namespace: "team-a", Name: long}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := RulingName(tc.ref)
			if tc.want == "" {
				// The hash itself is not the point: its form is.
				if !strings.HasPrefix(got, "h.") || len(got) != 42 {
					t.Errorf("%s\nRulingName(...) = %q, want h. and 40 hex digits", tc.reason, got)
				}
			} else if got != tc.want {
				t.Errorf("%s\nRulingName(...) = %q, want %q", tc.reason, got, tc.want)
			}
			if msgs := validation.IsDNS1123Subdomain(got); len(msgs) > 0 {
				t.Errorf("%s\nRulingName(...) = %q is no object name: %v", tc.reason, got, msgs)
			}
		})
	}
	if RulingName(Ref{Kind: "Cluster", Namespace: "a-b", Name: "c"}) == RulingName(Ref{Kind: "Cluster", Namespace: "a", Name: "b-c"}) {
		t.Error("two Clusters share a ruling's name")
	}
}

func TestReadRuling(t *testing.T) {
	r := Ruling{Cluster: Ref{Kind: "Cluster", Namespace: "team-a", Name: "prod"}, Wave: "production", Target: "1.34", Verdict: Halt,
		Message: "halted", Failed: &Member{Name: "s1", Namespace: "team-a", Cloud: "gcp", Reason: "refused"}, Until: time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)}
	legacy := Ruling{Cluster: Ref{Kind: "XCluster", Name: "p-x7k2q"}, Wave: "staging", Target: "1.34", Verdict: Adopt, Message: "adopt"}
	cases := map[string]struct {
		reason string
		obj    map[string]any
		want   Ruling
		err    string
	}{
		"RoundTrip":       {reason: "What the controller writes is read back whole.", obj: r.Object("crossplane-system"), want: r},
		"LegacyRoundTrip": {reason: "A legacy XCluster's ruling too.", obj: legacy.Object("crossplane-system"), want: legacy},
		"Forged": {reason: "A ConfigMap without the controller's label is refused.", obj: func() map[string]any {
			o := r.Object("x")
			delete(o["metadata"].(map[string]any), "labels")
			return o
		}(), err: "did not write it"},
		"UnknownVerdict": {reason: "A verdict the function does not know is refused, not guessed.", obj: func() map[string]any {
			o := r.Object("x")
			o["data"].(map[string]any)["verdict"] = "Yolo"
			return o
		}(), err: "cannot read its verdict"},
		"NoTarget": {reason: "A ruling on no target is refused.", obj: func() map[string]any {
			o := r.Object("x")
			delete(o["data"].(map[string]any), "target")
			return o
		}(), err: "names no target"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ReadRuling(tc.obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("%s\nReadRuling(...): want an error with %q, got %v", tc.reason, tc.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nReadRuling(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nReadRuling(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
