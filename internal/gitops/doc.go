// Package gitops holds the tests that keep the GitOps front door in
// examples/gitops honest: the Backstage form agrees with the XRD, the Argo
// CD Applications sync in the right order from paths that exist, and what
// the template scaffolds renders.
package gitops
