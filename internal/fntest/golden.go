package fntest

import (
	"encoding/json"
	"os"
	"path/filepath"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
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
