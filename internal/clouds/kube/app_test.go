package kube

import (
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/go-cmp/cmp"
)

// TestAvailableQuery evaluates the readiness query of the backend's Object
// the way provider-kubernetes does (a CEL environment with one variable,
// object, of any type, and a bool result), which accepts no optional
// syntax.
func TestAvailableQuery(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("object", cel.AnyType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(availableQuery)
	if iss.Err() != nil {
		t.Fatalf("provider-kubernetes cannot compile the query: %v", iss.Err())
	}
	if ast.OutputType() != cel.BoolType {
		t.Fatalf("the query returns %v, not bool", ast.OutputType())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason string
		object map[string]any
		want   bool
	}{
		"NoStatus": {
			reason: "A Deployment just created has no status.",
			object: map[string]any{"spec": map[string]any{}},
		},
		"NoConditions": {
			reason: "A Deployment may have a status without conditions.",
			object: map[string]any{"status": map[string]any{"replicas": 1}},
		},
		"Progressing": {
			reason: "A Deployment that is not available yet is not ready.",
			object: map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Available", "status": "False"},
				map[string]any{"type": "Progressing", "status": "True"},
			}}},
		},
		"Available": {
			reason: "A Deployment with minimum availability is ready.",
			object: map[string]any{"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Progressing", "status": "True"},
				map[string]any{"type": "Available", "status": "True"},
			}}},
			want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, _, err := prg.Eval(map[string]any{"object": tc.object})
			if err != nil {
				t.Fatalf("%s\ncannot evaluate: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, out.Value()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
