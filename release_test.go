package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/preview"
	"github.com/seed-6471616d/function-cluster-platform/internal/response"
	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// releaseFleet writes a fleet of six Clusters (three clouds, namespaced and
// legacy) and returns its folder.
func releaseFleet(t *testing.T) string {
	t.Helper()
	_, fleet := fleetDir(t)
	for i, fixture := range []func(...func(xpsim.Object)) xpsim.Object{fntest.GCPXR, fntest.AWSXR, fntest.AzureXR} {
		cloud := []string{"gcp", "aws", "azure"}[i]
		writeYAML(t, filepath.Join(fleet, cloud+".yaml"), fixture(fntest.Set("metadata.name", cloud)))
		writeYAML(t, filepath.Join(fleet, cloud+"-legacy.yaml"), fixture(fntest.Set("metadata.name", cloud+"-legacy"), fntest.Legacy))
	}
	return fleet
}

// releaseOf is a new release: the in-process function, whose responses
// change is given to rewrite for the XR of the request (by name).
func releaseOf(change func(name string, rsp *fnv1.RunFunctionResponse)) preview.Runner {
	run := runner()
	return func(req *fnv1.RunFunctionRequest) *fnv1.RunFunctionResponse {
		rsp := run(req)
		name, _ := req.GetObserved().GetComposite().GetResource().AsMap()["metadata"].(map[string]any)["name"].(string)
		change(name, rsp)
		return rsp
	}
}

// setDesired sets a field of every desired resource of kind under
// apiVersion's group.
func setDesired(rsp *fnv1.RunFunctionResponse, group, kind, path string, v any) {
	for _, r := range rsp.GetDesired().GetResources() {
		o := r.GetResource().AsMap()
		if o["kind"] != kind || !strings.Contains(fmt.Sprint(o["apiVersion"]), group) {
			continue
		}
		fntest.Set(path, v)(o)
		r.Resource, _ = structpb.NewStruct(o)
	}
}

// TestPreviewRelease renders a fleet with the current release and with a
// new one through preview --fleet --release --json, the new release being
// the function with some of its responses rewritten, and checks that the
// report names every XR whose render differs, and only those: each field
// old → new, the change the cloud could make only by replacement, the new
// release's Fatal.
func TestPreviewRelease(t *testing.T) {
	fleet := releaseFleet(t)
	type want struct {
		differs  []string
		changed  map[string][]string
		replaces map[string]int
		fatal    []string
	}
	cases := map[string]struct {
		reason string
		change func(name string, rsp *fnv1.RunFunctionResponse)
		want   want
	}{
		"SameRelease": {
			reason: "A release that renders every XR the same differs nowhere.",
			change: func(string, *fnv1.RunFunctionResponse) {},
		},
		"InPlaceChange": {
			reason: "A release that raises the EKS node groups' maxUnavailable changes the two AWS Clusters' node groups, in place, and nothing else.",
			change: func(name string, rsp *fnv1.RunFunctionResponse) {
				setDesired(rsp, "eks.aws", "NodeGroup", "spec.forProvider.updateConfig.maxUnavailable", 2.0)
			},
			want: want{
				differs: []string{"Cluster team-edge/aws", "XCluster aws-legacy"},
				changed: map[string][]string{
					"Cluster team-edge/aws": {"spec.forProvider.updateConfig.maxUnavailable: 1 -> 2"},
					"XCluster aws-legacy":   {"spec.forProvider.updateConfig.maxUnavailable: 1 -> 2"},
				},
			},
		},
		"ReplacementAndFatal": {
			reason: "A release that moves one GKE cluster to another region changes a field its provider replaces the cluster for (reported as such), and one that refuses Azure is a Fatal on both Azure Clusters; the others are the same.",
			change: func(name string, rsp *fnv1.RunFunctionResponse) {
				switch {
				case name == "gcp-legacy":
					setDesired(rsp, "container.gcp", "Cluster", "spec.forProvider.location", "europe-west1")
				case strings.HasPrefix(name, "azure"):
					response.Fatal(rsp, fmt.Errorf("this release does not serve Azure"))
				}
			},
			want: want{
				differs:  []string{"Cluster team-edge/azure", "XCluster azure-legacy", "XCluster gcp-legacy"},
				changed:  map[string][]string{"XCluster gcp-legacy": {"spec.forProvider.location: europe-west4 -> europe-west1"}},
				replaces: map[string]int{"XCluster gcp-legacy": 1},
				fatal:    []string{"Cluster team-edge/azure", "XCluster azure-legacy"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := &PreviewCmd{Fleet: fleet, Env: []string{"examples/envconfigs"}, Required: []string{"examples/spend"}, JSON: true, out: &out, progress: &bytes.Buffer{}, next: releaseOf(tc.change)}
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			var report preview.ReleaseReport
			if err := json.Unmarshal(out.Bytes(), &report); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, out.String())
			}
			got := want{changed: map[string][]string{}, replaces: map[string]int{}}
			for _, im := range report.XRs {
				if im.Refused != "" {
					t.Errorf("%s: the current release refuses it: %s", im.XR, im.Refused)
				}
				if im.Differs {
					got.differs = append(got.differs, im.XR)
				}
				for _, c := range im.Changed {
					for _, f := range c.Fields {
						if !slices.Contains(got.changed[im.XR], f.String()) {
							got.changed[im.XR] = append(got.changed[im.XR], f.String())
						}
					}
					if len(c.Replaces) > 0 {
						got.replaces[im.XR] += len(c.Replaces)
					}
				}
				if im.Fatal != "" {
					got.fatal = append(got.fatal, im.XR)
				}
				if len(im.Added)+len(im.Dropped)+len(im.Removed) > 0 {
					t.Errorf("%s: added %v, dropped %v, removed %v: the releases render the same resources", im.XR, im.Added, im.Dropped, im.Removed)
				}
			}
			slices.Sort(got.differs)
			slices.Sort(got.fatal)
			if len(got.changed) == 0 {
				got.changed = nil
			}
			if len(got.replaces) == 0 {
				got.replaces = nil
			}
			if report.Total.XRs != 6 || report.Total.Differ != len(tc.want.differs) {
				t.Errorf("%s\ntotal %+v, want 6 XRs, %d differ", tc.reason, report.Total, len(tc.want.differs))
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\npreview --fleet --release: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPreviewReleaseRemote previews a release served at an address, as a
// running function of another version would be, against the same function
// in process: nothing differs, over gRPC as in process.
func TestPreviewReleaseRemote(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, NewFunction(logging.NewNopLogger(), response.Options{TTLConverging: 15 * time.Second, TTLReady: 5 * time.Minute}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	var out bytes.Buffer
	cmd := &PreviewCmd{Fleet: releaseFleet(t), Env: []string{"examples/envconfigs"}, Required: []string{"examples/spend"}, Release: lis.Addr().String(), out: &out, progress: &bytes.Buffer{}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "TOTAL (6 XRs, 0 differ)") {
		t.Errorf("preview --fleet --release=%s: want 6 XRs, none differing:\n%s", lis.Addr(), out.String())
	}
	for _, bad := range []string{"cannot run the function", "differs"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("preview --fleet --release=%s says %q:\n%s", lis.Addr(), bad, out.String())
		}
	}
}

// TestPreviewReleaseRefused names what is wrong with a release preview's
// flags.
func TestPreviewReleaseRefused(t *testing.T) {
	cases := map[string]struct {
		reason  string
		release string
		envNew  []string
		want    string
	}{
		"NotABinaryNorAnAddress": {
			reason:  "A release that is neither a file nor host:port is named.",
			release: "function-cluster-platform:v1.2.3",
			want:    `cannot use release "function-cluster-platform:v1.2.3": neither a function binary nor a host:port address`,
		},
		"Unreachable": {
			reason:  "An address nothing listens on is refused before any XR is rendered.",
			release: "127.0.0.1:1",
			want:    "cannot reach the function at 127.0.0.1:1: dial tcp 127.0.0.1:1: connect: connection refused",
		},
		"WithEnvNew": {
			reason:  "A release and an environment change are two changes: preview one at a time.",
			release: "127.0.0.1:1",
			envNew:  []string{"examples/envconfigs"},
			want:    "--release and --release-compositions preview a new release under the same environment: leave out --env-new (preview one change at a time)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := &PreviewCmd{Fleet: t.TempDir(), Env: []string{"examples/envconfigs"}, EnvNew: tc.envNew, Release: tc.release, out: &bytes.Buffer{}, progress: &bytes.Buffer{}}
			err := cmd.Run()
			if diff := cmp.Diff(tc.want, fmt.Sprint(err)); diff != "" {
				t.Errorf("%s\nRun(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestPreviewReleaseUnreachable: a release whose calls fail (a function
// that answers none) makes the preview fail, rather than report every XR
// refused by it.
func TestPreviewReleaseUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	fnv1.RegisterFunctionRunnerServiceServer(srv, fnv1.UnimplementedFunctionRunnerServiceServer{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	var out bytes.Buffer
	cmd := &PreviewCmd{Fleet: releaseFleet(t), Env: []string{"examples/envconfigs"}, Required: []string{"examples/spend"}, Release: lis.Addr().String(), out: &out, progress: &bytes.Buffer{}}
	err = cmd.Run()
	if want := "cannot preview the release: cannot run the function at " + lis.Addr().String(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Run() = %v, want an error starting %q", err, want)
	}
	if out.Len() > 0 {
		t.Errorf("a failed preview printed a report:\n%s", out.String())
	}
}
