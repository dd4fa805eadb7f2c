// Package simulate stands in for the providers: it turns a desired composed
// resource into what a provider would report once the resource is ready, with
// a generated name, Synced and Ready conditions, and plausible outputs in
// status.atProvider (cluster endpoint and CA, OIDC issuer, name servers).
//
// Convergence tests, the observed-resource files of the examples and the
// end-to-end cloud simulator all use it.
package simulate

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// Name returns the name Crossplane would give a composed resource: its
// metadata.name if it has one, else its generateName and a suffix derived
// from the composition-resource name, so that it is stable across runs.
func Name(desired map[string]any, crname string) string {
	meta, _ := desired["metadata"].(map[string]any)
	if n, _ := meta["name"].(string); n != "" {
		return n
	}
	prefix, _ := meta["generateName"].(string)
	return prefix + suffix(crname)
}

func suffix(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	v := h.Sum32()
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[v%uint32(len(alphabet))]
		v /= uint32(len(alphabet))
	}
	return string(b)
}

// Observe returns the observed state of a ready desired resource. It does
// not modify desired.
func Observe(desired map[string]any, crname string) map[string]any {
	obs := overlay.DeepCopy(desired)
	meta, _ := obs["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obs["metadata"] = meta
	}
	meta["name"] = Name(desired, crname)
	delete(meta, "generateName")
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann["crossplane.io/composition-resource-name"] = crname

	if status := Status(obs); status != nil {
		obs["status"] = status
	}
	return obs
}

// Status returns the status a provider writes once the resource, which
// must have its name, is ready: the parameters and outputs in
// status.atProvider, and Synced and Ready conditions. It returns nil for
// kinds without status, such as ProviderConfigs and Usages.
func Status(o map[string]any) map[string]any {
	name, _ := o["metadata"].(map[string]any)["name"].(string)
	status := map[string]any{}
	spec, _ := o["spec"].(map[string]any)
	if fp, ok := spec["forProvider"].(map[string]any); ok {
		at := overlay.DeepCopy(fp)
		at["id"] = identifier(o, name)
		for k, v := range outputs(o, name) {
			at[k] = v
		}
		status["atProvider"] = at
	}
	for k, v := range composite(o, name) {
		status[k] = v
	}
	if !conditionless(o) {
		status["conditions"] = []any{
			condition("Synced", "ReconcileSuccess"),
			condition("Ready", "Available"),
		}
	}
	if len(status) == 0 {
		return nil
	}
	return status
}

// Patch is the version a cloud runs for a requested one: a minor such as
// "1.33" runs its fifth patch, "1.33.5" followed by the cloud's build
// suffix (GKE's "-gke.1200000"); a version with a patch runs as it is.
func Patch(v, build string) string {
	if strings.Count(v, ".") != 1 {
		return v
	}
	return v + ".5" + build
}

// forProvider is an object's spec.forProvider.
func forProvider(o map[string]any) map[string]any {
	spec, _ := o["spec"].(map[string]any)
	fp, _ := spec["forProvider"].(map[string]any)
	return fp
}

// initial is a node count the object sets at creation, in
// spec.initProvider (the nodes a new pool starts with).
func initial(o map[string]any, path ...string) any {
	spec, _ := o["spec"].(map[string]any)
	cur := spec["initProvider"]
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// conditionless reports kinds that have no status conditions.
func conditionless(o map[string]any) bool {
	k, _ := o["kind"].(string)
	av, _ := o["apiVersion"].(string)
	return k == "ProviderConfig" || k == "ClusterProviderConfig" ||
		(strings.HasPrefix(av, "protection.crossplane.io/") && (k == "Usage" || k == "ClusterUsage"))
}

func condition(typ, reason string) map[string]any {
	return map[string]any{
		"type":               typ,
		"status":             "True",
		"reason":             reason,
		"lastTransitionTime": "2026-01-01T00:00:00Z",
	}
}

// groupKind returns "group/Kind" with the namespaced .m. infix removed, so
// that one table serves both scopes.
func groupKind(o map[string]any) string {
	av, _ := o["apiVersion"].(string)
	k, _ := o["kind"].(string)
	g := av
	if i := strings.LastIndex(av, "/"); i >= 0 {
		g = av[:i]
	}
	return strings.Replace(g, ".m.", ".", 1) + "/" + k
}

// fakeCA is a recognisable placeholder for a cluster CA bundle.
var fakeCA = base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nsimulated\n-----END CERTIFICATE-----\n"))

// outputs returns the observed-only fields of the kinds whose outputs the
// function reads.
func outputs(o map[string]any, name string) map[string]any {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	n := h.Sum32()
	ip := fmt.Sprintf("34.%d.%d.%d", 64+n%64, (n>>8)%256, 1+(n>>16)%254)
	switch groupKind(o) {
	case "container.gcp.upbound.io/Cluster":
		mv, _ := forProvider(o)["minMasterVersion"].(string)
		v := Patch(mv, "-gke.1200000")
		return map[string]any{
			"masterVersion": v,
			"nodeVersion":   v,
			"endpoint":      ip,
			"masterAuth":    map[string]any{"clusterCaCertificate": fakeCA},
			"selfLink":      "https://container.googleapis.com/v1/" + name,
		}
	case "dns.gcp.upbound.io/ManagedZone":
		return map[string]any{"nameServers": nameServers("ns-cloud-a%d.googledomains.com.", 4)}
	case "eks.aws.upbound.io/Cluster":
		spec, _ := o["spec"].(map[string]any)
		fp, _ := spec["forProvider"].(map[string]any)
		region, _ := fp["region"].(string)
		vpc, _ := overlay.DeepCopyValue(fp["vpcConfig"]).(map[string]any)
		if vpc == nil {
			vpc = map[string]any{}
		}
		// The security group EKS creates for the control plane and the
		// managed node groups.
		vpc["clusterSecurityGroupId"] = fmt.Sprintf("sg-%08x%09x", n, n)
		vpc["vpcId"] = fmt.Sprintf("vpc-%08x%09x", n>>1, n)
		return map[string]any{
			"vpcConfig":            vpc,
			"endpoint":             "https://" + strings.ToUpper(fmt.Sprintf("%08x", n)) + ".gr7." + region + ".eks.amazonaws.com",
			"certificateAuthority": []any{map[string]any{"data": fakeCA}},
			"identity":             []any{map[string]any{"oidc": []any{map[string]any{"issuer": fmt.Sprintf("https://oidc.eks.%s.amazonaws.com/id/%08X", region, n)}}}},
			"arn":                  "arn:aws:eks:" + region + ":" + AWSAccount + ":cluster/" + external(o, name),
		}
	case "eks.aws.upbound.io/NodeGroup":
		// EKS reports the nodes the group runs: the initial count.
		sc, _ := overlay.DeepCopyValue(forProvider(o)["scalingConfig"]).(map[string]any)
		if sc == nil {
			sc = map[string]any{}
		}
		sc["desiredSize"] = initial(o, "scalingConfig", "desiredSize")
		return map[string]any{"scalingConfig": sc}
	case "container.gcp.upbound.io/NodePool":
		return map[string]any{"nodeCount": initial(o, "initialNodeCount")}
	case "containerservice.azure.upbound.io/KubernetesClusterNodePool":
		return map[string]any{"nodeCount": initial(o, "nodeCount")}
	case "route53.aws.upbound.io/Zone":
		return map[string]any{"nameServers": nameServers("ns-%d.awsdns-00.org.", 4), "zoneId": fmt.Sprintf("Z%08X", n)}
	case "iam.aws.upbound.io/Role":
		return map[string]any{"arn": "arn:aws:iam::123456789012:role/" + name}
	case "containerservice.azure.upbound.io/KubernetesCluster":
		fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
		loc, _ := fp["location"].(string)
		kv, _ := fp["kubernetesVersion"].(string)
		return map[string]any{
			"currentKubernetesVersion": Patch(kv, ""),
			"fqdn":                     fmt.Sprintf("%s-%08x.hcp.%s.azmk8s.io", external(o, name), n, loc),
			"privateFqdn":              fmt.Sprintf("%s-%08x.privatelink.%s.azmk8s.io", external(o, name), n, loc),
			"oidcIssuerUrl":            fmt.Sprintf("https://%s.oic.prod-aks.azure.com/%s/%08x-2222-4000-8000-%012x/", loc, AzureTenant, n, n),
		}
	case "managedidentity.azure.upbound.io/UserAssignedIdentity":
		return map[string]any{
			"principalId": fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n),
			"clientId":    fmt.Sprintf("%08x-1111-4000-8000-%012x", n, n),
			"tenantId":    AzureTenant,
		}
	case "network.azure.upbound.io/DNSZone":
		return map[string]any{"nameServers": nameServers("ns%d-01.azure-dns.com.", 4)}
	case "sql.gcp.upbound.io/DatabaseInstance":
		fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
		project, _ := fp["project"].(string)
		region, _ := fp["region"].(string)
		return map[string]any{
			"privateIpAddress": fmt.Sprintf("10.%d.%d.%d", 64+n%32, (n>>8)%256, 2+(n>>16)%250),
			"connectionName":   project + ":" + region + ":" + external(o, name),
			"selfLink":         "https://sqladmin.googleapis.com/sql/v1beta4/projects/" + project + "/instances/" + external(o, name),
		}
	case "rds.aws.upbound.io/Instance":
		fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
		region, _ := fp["region"].(string)
		// A major version runs its fourth minor; a minor runs as asked.
		version, _ := fp["engineVersion"].(string)
		if !strings.Contains(version, ".") {
			version += ".4"
		}
		address := fmt.Sprintf("%s.c%08x.%s.rds.amazonaws.com", external(o, name), n, region)
		return map[string]any{
			"address":             address,
			"endpoint":            address + ":5432",
			"engineVersionActual": version,
			"arn":                 "arn:aws:rds:" + region + ":123456789012:db:" + external(o, name),
		}
	case "dbforpostgresql.azure.upbound.io/FlexibleServer":
		return map[string]any{"fqdn": external(o, name) + ".postgres.database.azure.com"}
	case "storage.gcp.upbound.io/Bucket":
		return map[string]any{"url": "gs://" + external(o, name), "selfLink": "https://www.googleapis.com/storage/v1/b/" + external(o, name)}
	case "s3.aws.upbound.io/Bucket":
		fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
		region, _ := fp["region"].(string)
		return map[string]any{
			"arn":                      "arn:aws:s3:::" + external(o, name),
			"bucketRegionalDomainName": external(o, name) + ".s3." + region + ".amazonaws.com",
		}
	case "storage.azure.upbound.io/Account":
		return map[string]any{
			"primaryBlobEndpoint": "https://" + external(o, name) + ".blob.core.windows.net/",
			"primaryWebEndpoint":  "https://" + external(o, name) + ".z13.web.core.windows.net/",
			"primaryWebHost":      external(o, name) + ".z13.web.core.windows.net",
		}
	case "acm.aws.upbound.io/Certificate":
		domain, _ := forProvider(o)["domainName"].(string)
		return map[string]any{
			"arn":    fmt.Sprintf("arn:aws:acm:us-east-1:%s:certificate/%08x-0000-4000-8000-%012x", AWSAccount, n, n),
			"status": "ISSUED",
			"domainValidationOptions": []any{map[string]any{
				"domainName":          domain,
				"resourceRecordName":  fmt.Sprintf("_%08x.%s.", n, domain),
				"resourceRecordType":  "CNAME",
				"resourceRecordValue": fmt.Sprintf("_%08x.abcdefghij.acm-validations.aws.", n>>1),
			}},
		}
	case "cloudfront.aws.upbound.io/Distribution":
		id := fmt.Sprintf("E%08X", n)
		return map[string]any{
			"id":           id,
			"arn":          "arn:aws:cloudfront::" + AWSAccount + ":distribution/" + id,
			"domainName":   fmt.Sprintf("d%08x.cloudfront.net", n),
			"hostedZoneId": "Z2FDTNDATAQYW2",
			"status":       "Deployed",
		}
	case "compute.gcp.upbound.io/GlobalAddress":
		return map[string]any{"address": ip}
	case "compute.gcp.upbound.io/ManagedSSLCertificate":
		return map[string]any{"certificateId": float64(n), "expireTime": "2027-03-01T00:00:00.000-08:00"}
	case "cdn.azure.upbound.io/FrontdoorEndpoint":
		return map[string]any{"hostName": fmt.Sprintf("%s-%08x.z01.azurefd.net", external(o, name), n)}
	case "cdn.azure.upbound.io/FrontdoorCustomDomain":
		return map[string]any{"validationToken": fmt.Sprintf("_%08x%08x", n, n>>3), "expirationDate": "2027-03-01T00:00:00Z"}
	}
	return nil
}

// composite returns what the function writes into the status of an XR of
// ours composed by another (an AppEnvironment's Database): where to
// connect, and where the password is.
func composite(o map[string]any, name string) map[string]any {
	switch groupKind(o) {
	case "platform.example.org/Database", "legacy.platform.example.org/XDatabase":
		h := fnv.New32a()
		_, _ = h.Write([]byte(name))
		n := h.Sum32()
		ns, _ := o["metadata"].(map[string]any)["namespace"].(string)
		if ns == "" {
			ns = "crossplane-system"
		}
		return map[string]any{
			"host":             fmt.Sprintf("10.%d.%d.%d", 64+n%32, (n>>8)%256, 2+(n>>16)%250),
			"port":             5432,
			"username":         "dbadmin",
			"connectionSecret": name + "-connection",
			"passwordSecret":   map[string]any{"name": name + "-password", "namespace": ns, "key": "password"},
		}
	}
	return nil
}

// The examples' AWS account, Azure subscription and Azure tenant.
const (
	AWSAccount        = "123456789012"
	AzureSubscription = "00000000-0000-0000-0000-000000000000"
	AzureTenant       = "72f988bf-0000-4000-8000-000000000001"
)

// azureTypes are the ARM resource types of the Azure kinds we compose.
var azureTypes = map[string]string{
	"network.azure.upbound.io/VirtualNetwork":                      "Microsoft.Network/virtualNetworks",
	"network.azure.upbound.io/PublicIP":                            "Microsoft.Network/publicIPAddresses",
	"network.azure.upbound.io/NATGateway":                          "Microsoft.Network/natGateways",
	"network.azure.upbound.io/DNSZone":                             "Microsoft.Network/dnszones",
	"network.azure.upbound.io/PrivateDNSZone":                      "Microsoft.Network/privateDnsZones",
	"network.azure.upbound.io/PrivateDNSZoneVirtualNetworkLink":    "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
	"network.azure.upbound.io/DNSNSRecord":                         "Microsoft.Network/dnszones/NS",
	"managedidentity.azure.upbound.io/UserAssignedIdentity":        "Microsoft.ManagedIdentity/userAssignedIdentities",
	"managedidentity.azure.upbound.io/FederatedIdentityCredential": "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
	"containerservice.azure.upbound.io/KubernetesCluster":          "Microsoft.ContainerService/managedClusters",
	"containerservice.azure.upbound.io/KubernetesClusterNodePool":  "Microsoft.ContainerService/managedClusters/agentPools",
	"storage.azure.upbound.io/Account":                             "Microsoft.Storage/storageAccounts",
	"dbforpostgresql.azure.upbound.io/FlexibleServer":              "Microsoft.DBforPostgreSQL/flexibleServers",
	"dbforpostgresql.azure.upbound.io/FlexibleServerDatabase":      "Microsoft.DBforPostgreSQL/flexibleServers/databases",
	"authorization.azure.upbound.io/RoleAssignment":                "Microsoft.Authorization/roleAssignments",
	"network.azure.upbound.io/DNSTXTRecord":                        "Microsoft.Network/dnszones/TXT",
	"network.azure.upbound.io/DNSCNAMERecord":                      "Microsoft.Network/dnszones/CNAME",
	"network.azure.upbound.io/DNSARecord":                          "Microsoft.Network/dnszones/A",
	"cdn.azure.upbound.io/FrontdoorProfile":                        "Microsoft.Cdn/profiles",
	"cdn.azure.upbound.io/FrontdoorEndpoint":                       "Microsoft.Cdn/profiles/afdEndpoints",
	"cdn.azure.upbound.io/FrontdoorOriginGroup":                    "Microsoft.Cdn/profiles/originGroups",
	"cdn.azure.upbound.io/FrontdoorOrigin":                         "Microsoft.Cdn/profiles/originGroups/origins",
	"cdn.azure.upbound.io/FrontdoorRoute":                          "Microsoft.Cdn/profiles/afdEndpoints/routes",
	"cdn.azure.upbound.io/FrontdoorCustomDomain":                   "Microsoft.Cdn/profiles/customDomains",
	"cdn.azure.upbound.io/FrontdoorCustomDomainAssociation":        "Microsoft.Cdn/profiles/associations",
}

// identifier is the ID a provider reports in status.atProvider.id: an ARM
// resource ID on Azure (in the resource group the resource names, else the
// composite's "<name>-rg"), the external name elsewhere.
func identifier(o map[string]any, name string) string {
	gk := groupKind(o)
	if !strings.Contains(gk, ".azure.upbound.io/") {
		return external(o, name)
	}
	sub := "/subscriptions/" + AzureSubscription
	if gk == "azure.upbound.io/ResourceGroup" {
		return sub + "/resourceGroups/" + external(o, name)
	}
	fp, _ := o["spec"].(map[string]any)["forProvider"].(map[string]any)
	rg, _ := fp["resourceGroupName"].(string)
	if rg == "" {
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]any)
		xr, _ := labels["crossplane.io/composite"].(string)
		rg = cmp.Or(xr, "platform") + "-rg"
	}
	typ := cmp.Or(azureTypes[gk], "Microsoft.Resources/"+strings.ToLower(gk[strings.Index(gk, "/")+1:])+"s")
	return sub + "/resourceGroups/" + rg + "/providers/" + typ + "/" + external(o, name)
}

// external is a resource's external name, or its name.
func external(o map[string]any, name string) string {
	meta, _ := o["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ext, _ := ann["crossplane.io/external-name"].(string); ext != "" {
		return ext
	}
	return name
}

func nameServers(format string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}

// ConnectionDetails returns the connection details a provider would publish
// for a ready resource: a kubeconfig for resources that write one, and the
// CA certificate where the provider publishes it separately.
func ConnectionDetails(desired map[string]any) map[string][]byte {
	spec, _ := desired["spec"].(map[string]any)
	if _, ok := spec["writeConnectionSecretToRef"]; !ok {
		return nil
	}
	switch groupKind(desired) {
	case "container.gcp.upbound.io/Cluster", "eks.aws.upbound.io/ClusterAuth":
		return map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\n")}
	case "containerservice.azure.upbound.io/KubernetesCluster":
		return map[string][]byte{
			"kubeconfig":                      []byte("apiVersion: v1\nkind: Config\n"),
			"kubeconfig.clustercacertificate": []byte("-----BEGIN CERTIFICATE-----\nsimulated\n-----END CERTIFICATE-----\n"),
		}
	}
	// What else providers publish (database endpoints, passwords) the
	// function never reads.
	return nil
}
