//go:build tools

// Package tools pins the build tools of the project: the crossplane CLI
// (render, beta validate, xpkg build) and controller-gen. It is a module of
// its own so that their dependencies stay out of the function's module.
package tools

import (
	_ "github.com/crossplane/crossplane/v2/cmd/crank"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
