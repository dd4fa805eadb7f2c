package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// portalRBAC returns the ClusterRoles and Roles of the portal's install
// manifest as they are, and its bindings bound to user instead of the
// ServiceAccount, for an API server where the portal runs as that user:
// the shipped rules, nothing added.
func portalRBAC(path, user string) ([]byte, error) {
	objs, err := xpsim.Load(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	var out bytes.Buffer
	for _, o := range objs {
		switch o["kind"] {
		case "ClusterRole", "Role":
		case "ClusterRoleBinding", "RoleBinding":
			subjects, _ := o["subjects"].([]any)
			if len(subjects) != 1 || str(subjects[0].(map[string]any), "kind") != "ServiceAccount" {
				return nil, fmt.Errorf("%s %s: want one ServiceAccount subject, got %v", o["kind"], str(o, "metadata", "name"), subjects)
			}
			o["subjects"] = []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}}
		default:
			continue
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("cannot write %s %s: %w", o["kind"], str(o, "metadata", "name"), err)
		}
		out.WriteString("---\n")
		out.Write(b)
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s has no roles", path)
	}
	return out.Bytes(), nil
}

// readTokens reads the API server's token file: each user's token.
func readTokens(path string) (map[string]string, error) {
	f, err := os.Open(path) //nolint:gosec // the token file run.sh wrote
	if err != nil {
		return nil, fmt.Errorf("cannot read the token file: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("cannot parse the token file %s: %w", path, err)
	}
	out := map[string]string{}
	for _, row := range rows {
		if len(row) >= 2 {
			out[row[1]] = row[0]
		}
	}
	return out, nil
}
