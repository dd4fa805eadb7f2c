// Package clouds links every cloud layer into the function. A cloud is one
// package under this folder that registers itself with the registry from
// its init function; adding a cloud means adding its package and one import
// line here.
package clouds

import (
	// Cloud layers.
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds/aws"
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds/azure"
	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds/gcp"
)
