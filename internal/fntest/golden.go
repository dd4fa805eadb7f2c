package fntest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// ResponseYAML renders a response as stable YAML, for golden files.
func ResponseYAML(rsp *fnv1.RunFunctionResponse) ([]byte, error) {
	j, err := protojson.Marshal(rsp)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	return yaml.Marshal(v)
}

// Golden compares got with the golden file at path, or writes it when
// update is set. It returns the golden content.
func Golden(path string, got []byte, update bool) ([]byte, error) {
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			return nil, err
		}
		return got, nil
	}
	return os.ReadFile(path) //nolint:gosec // golden path chosen by the test
}

// GoldenExample renders an example XR twice, first render (nothing
// observed) and converged (the example's observed-resource file at
// observedPath), and compares each whole response with the reviewed golden
// file testdata/golden/<example>.<stage>.yaml; a Fatal fails the stage.
// base is the request without observed resources. With update it first
// regenerates the observed-resource file by converging the example, then
// rewrites the golden files.
func GoldenExample(t *testing.T, run Runner, example string, base Request, observedPath string, update bool) {
	t.Helper()
	if update {
		_, observed, _, err := Converge(run, base, 20)
		if err != nil {
			t.Fatalf("%s: %v", example, err)
		}
		b, err := xpsim.YAML(observed)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Golden(observedPath, b, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, stage := range []string{"first-render", "converged"} {
		t.Run(example+"/"+stage, func(t *testing.T) {
			req := base
			req.Observed = map[string]Object{}
			if stage == "converged" {
				req.Observed = ObservedFile(observedPath)
			}
			pr, err := req.Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(pr)
			if msg := Fatal(rsp); msg != "" {
				t.Fatalf("%s %s: Fatal: %s", example, stage, msg)
			}
			got, err := ResponseYAML(rsp)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Golden(filepath.Join("testdata", "golden", example+"."+stage+".yaml"), got, update)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s %s: -golden +got (review, then rerun TestGolden with -update):\n%s", example, stage, diff)
			}
		})
	}
}
