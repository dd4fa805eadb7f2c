// Command replacegen writes each cloud's tables of replacement-only fields
// (internal/clouds/<cloud>/zz_replacements.go): for every kind the cloud
// composes from a Terraform resource, every attribute the resource's schema
// forces a new resource for (SDKv2 ForceNew, a Framework RequiresReplace),
// and every attribute its custom diff replaces on a condition
// (ForceNewIfChange, ForceNewIf, diff.ForceNew), by its spec.forProvider
// path as upjet converts it, checked against the kind's CRD.
//
// It works in two steps, so that CI needs no provider source:
//
//	go run ./cmd/replacegen -extract -google=<git dir> -azurerm=<git dir> [-aws=<git dir> -aws-rev=HEAD]
//	    read the Terraform providers' source at the pinned tags (or at
//	    -<provider>-rev) from git directories (mirrors, no work tree) into
//	    the schema extract cmd/replacegen/schema/<cloud>.tsv; a cloud
//	    whose mirror is not given keeps its extract; -<provider>=oracle
//	    takes every row of the cloud from the oracle extract; a partial
//	    tree's SOURCES.tsv names the upstream commit of each of its files,
//	    which its rows cite instead of the tag
//	go run ./cmd/replacegen [-crds=../shared/crds]
//	    write the Go tables from the extract and the provider CRDs
//	go run ./cmd/replacegen -check
//	    fail if a Go table differs from what the extract gives
//
// A resource whose source cannot be read takes its rows from the oracle
// extract internal/modules/testdata/replacements/<cloud>.tsv, and says so
// in the extract's origin column and in the generated file.
package main

import (
	"flag"
	"fmt"
	"os"

	_ "github.com/seed-6471616d/function-cluster-platform/internal/clouds"
)

func main() {
	extract := flag.Bool("extract", false, "read the providers' source into the schema extract instead of writing the Go tables")
	check := flag.Bool("check", false, "fail if a generated Go table is out of date instead of writing it")
	crds := flag.String("crds", "../shared/crds", "the provider CRDs")
	oracle := flag.String("oracle", "internal/modules/testdata/replacements", "the checked-in extracts that map kinds to Terraform resources, and the rows of resources whose source cannot be read")
	mirrors, revs := map[string]*string{}, map[string]*string{}
	for _, p := range providers {
		mirrors[p.cloud] = flag.String(p.flag, "", "git directory of "+p.module+" (for -extract), or oracle to take the oracle extract's rows")
		revs[p.cloud] = flag.String(p.flag+"-rev", "", "revision of -"+p.flag+" to read (default "+p.tag+"); a partial tree with a "+manifestFile+" names each file's upstream commit")
	}
	flag.Parse()
	var err error
	if *extract {
		err = runExtract(*oracle, mirrors, revs)
	} else {
		err = runTables(*crds, *check)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "replacegen:", err)
		os.Exit(1)
	}
}

// provider is a cloud's Terraform provider at the release its upjet
// provider wraps.
type provider struct {
	cloud, flag, module, tag string
	// release names the provider and the upjet provider that wraps it.
	release string
	// upjet is the upjet provider release that wraps tag.
	upjet string
	// interceptors wrap every SDKv2 resource's custom diff.
	interceptors []interceptor
}

// providers are the clouds' Terraform providers, at the versions the CRDs
// in ../shared/crds were built with.
var providers = []provider{
	{
		cloud: "aws", flag: "aws", module: "github.com/hashicorp/terraform-provider-aws", tag: "v6.34.0",
		release: "terraform-provider-aws v6.34.0 (provider-upjet-aws v2.6.0)", upjet: "provider-upjet-aws v2.6.0",
		// Every regional resource's region: ForceNew unless it moves between
		// unset and the provider's region.
		interceptors: []interceptor{{dir: "internal/provider/sdkv2", fn: "forceNewIfRegionChanges"}},
	},
	{cloud: "azure", flag: "azurerm", module: "github.com/hashicorp/terraform-provider-azurerm", tag: "v4.80.0", release: "terraform-provider-azurerm v4.80.0 (provider-upjet-azure v2.7.0)", upjet: "provider-upjet-azure v2.7.0"},
	{cloud: "gcp", flag: "google", module: "github.com/hashicorp/terraform-provider-google", tag: "v7.39.0", release: "terraform-provider-google v7.39.0 (provider-upjet-gcp v3.0.0)", upjet: "provider-upjet-gcp v3.0.0"},
}
