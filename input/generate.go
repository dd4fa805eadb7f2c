//go:build generate

// Package input generates the Input type's deepcopy functions and its CRD,
// which the xpkg package carries in package/input.
package input

//go:generate go run -modfile=../tools/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen paths=./v1beta1 object crd:crdVersions=v1 output:artifacts:config=../package/input
