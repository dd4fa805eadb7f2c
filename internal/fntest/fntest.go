// Package fntest is the function's test kit, for tests only: golden files,
// fixtures (XRs that are not the examples, what XRs read of the example
// Clusters), scenario tables of reconciles and the invariant checked after
// each, and the oracle of replacement-only fields. It drives the function
// through package xpsim, the stand-in for Crossplane's side of the protocol
// that the binary ships, and hands on the names of xpsim that tests call,
// so that a test needs fntest alone.
package fntest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/xpsim"
)

// Object is an unstructured Kubernetes object (xpsim.Object).
type Object = xpsim.Object

// Runner runs one function call (xpsim.Runner).
type Runner = xpsim.Runner

// Request is the input of one function call (xpsim.Request).
type Request = xpsim.Request

// The names of xpsim that tests call: Crossplane's side of a reconcile.
var (
	Load             = xpsim.Load
	Desired          = xpsim.Desired
	Fatal            = xpsim.Fatal
	ObserveAll       = xpsim.ObserveAll
	Connections      = xpsim.Connections
	Converge         = xpsim.Converge
	AllReady         = xpsim.AllReady
	ClaimComposite   = xpsim.ClaimComposite
	MergeEnvironment = xpsim.MergeEnvironment
)

// MustLoad is xpsim.Load that panics, for test tables.
func MustLoad(paths ...string) []Object {
	objs, err := xpsim.Load(paths...)
	if err != nil {
		panic(err)
	}
	return objs
}

// Kinds lists "name kind apiVersion" for each desired resource, sorted, for
// compact inventory assertions.
func Kinds(objs map[string]Object) []string {
	out := make([]string, 0, len(objs))
	for name, o := range objs {
		out = append(out, strings.Join([]string{name, fmt.Sprint(o["kind"]), fmt.Sprint(o["apiVersion"])}, " "))
	}
	sort.Strings(out)
	return out
}
