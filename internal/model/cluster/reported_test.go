package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

func TestAwaitLocation(t *testing.T) {
	type want struct {
		await string
		err   string
	}
	cases := map[string]struct {
		reason   string
		location string
		want     want
	}{
		"Known": {
			reason:   "Once the Cluster's location is known, nothing waits for it.",
			location: "us-central1",
		},
		"Unknown": {
			reason: "An unknown location is waited for, naming the Cluster and both of its fields that would give it; where it cannot be waited for, the error names clusterRef and what to set.",
			want: want{
				await: `Cluster "prod" names no location in spec.parameters.location and has not reported the one its environment gives it in status.location yet (the Cluster's own conditions say whether it renders)`,
				err:   `spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" has no location: it names none in spec.parameters.location and reports none in status.location; set the Cluster's spec.parameters.location or its environment's location`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &Reported{Ref: "prod", Location: tc.location}
			got := want{await: c.AwaitLocation()}
			if got.await != "" {
				// What an XR that cannot wait reports instead.
				got.err = c.LocationRequired().Error()
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nAwaitLocation(), LocationRequired(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	c := &Reported{Ref: "prod", XR: &xr.Cluster{Composite: xr.Composite{Cloud: "aws", PlaneID: "111111111111"}}}
	cases := map[string]struct {
		reason string
		x      xr.Composite
		want   []string
	}{
		"Same": {
			reason: "A Cluster on the XR's cloud and plane is accepted.",
			x:      xr.Composite{Cloud: "aws", PlaneID: "111111111111"},
		},
		"Elsewhere": {
			reason: "Another cloud and another account are both named, on clusterRef.",
			x:      xr.Composite{Cloud: "gcp", PlaneID: "my-project"},
			want: []string{
				`spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" runs on cloud "aws", this Widget on "gcp": a widget lives of its own cloud`,
				`spec.parameters.clusterRef.name: Invalid value: "prod": Cluster "prod" is in "111111111111" (planeId), this Widget in "my-project": a widget lives of its own project, account or subscription`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, err := range c.Check(&tc.x, "Widget", "a widget lives") {
				got = append(got, err.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nCheck(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
