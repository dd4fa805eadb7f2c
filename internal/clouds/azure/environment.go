package azure

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/seed-6471616d/function-cluster-platform/internal/clouds/kube"
	"github.com/seed-6471616d/function-cluster-platform/internal/clusterref"
	"github.com/seed-6471616d/function-cluster-platform/internal/model/appenvironment"
	"github.com/seed-6471616d/function-cluster-platform/internal/names"
	"github.com/seed-6471616d/function-cluster-platform/internal/object"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// Kinds of an application environment on Azure.
var (
	storageAccountKind = registry.Upjet(Name, "storage", "Account", "v1beta2", "spec.forProvider.location", "spec.forProvider.accountTier", "spec.forProvider.accountReplicationType").Replaces(
		inGroupReplaces("azurerm_storage_account", "internal/services/storage/storage_account_resource.go:103"),
		terraform.Refuse("accountTier", "azurerm_storage_account.account_tier", "internal/services/storage/storage_account_resource.go:114-117"),
		terraform.Refuse("accountKind", "azurerm_storage_account.account_kind (but from Storage or to StorageV2)", "internal/services/storage/storage_account_resource.go:1103-1113"),
		terraform.Refuse("accountReplicationType", "azurerm_storage_account.account_replication_type (between the LRS and ZRS families)", "internal/services/storage/storage_account_resource.go:1183-1197"),
		terraform.Refuse("isHnsEnabled", "azurerm_storage_account.is_hns_enabled", "internal/services/storage/storage_account_resource.go:319-323"))
	containerKind = registry.Upjet(Name, "storage", "Container", "v1beta1").Replaces(
		terraform.Refuse("storageAccountIdSelector", "azurerm_storage_container.storage_account_id", "internal/services/storage/storage_container_resource.go:146-164"),
		terraform.Refuse("storageAccountNameSelector", "azurerm_storage_container.storage_account_name", "internal/services/storage/storage_container_resource.go"))
	federationKind = registry.Upjet(Name, "managedidentity", "FederatedIdentityCredential", "v1beta1", "spec.forProvider.issuer", "spec.forProvider.subject", "spec.forProvider.audience").WithGuarded(registry.WhyIdentity, "spec.forProvider.issuer", "spec.forProvider.subject", "spec.forProvider.audience", "spec.forProvider.parentId", "spec.forProvider.parentIdSelector", "spec.forProvider.parentIdRef", "spec.initProvider.issuer", "spec.initProvider.subject").Replaces(
		inGroupReplaces("azurerm_federated_identity_credential", "internal/services/managedidentity/federated_identity_credential_resource.go"),
		terraform.Refuse("parentIdSelector", "azurerm_federated_identity_credential.parent_id", "internal/services/managedidentity/federated_identity_credential_resource.go:88-96"))
)

// Composition-resource names of an application environment on Azure.
const (
	rAppResourceGroup = "resource-group"
	rAppIdentity      = "identity"
	rAppFederation    = "identity-federation"
	rAppBucket        = "bucket"
	rAppContainer     = "bucket-container"
	rAppBucketAccess  = "bucket-access"
)

// Workload identity on AKS.
const (
	// tokenAudience is the audience of the tokens AKS's workload identity
	// exchanges for Entra ID tokens.
	tokenAudience = "api://AzureADTokenExchange" //nolint:gosec // an audience, not a credential
	// annotationClientID tells the workload identity webhook which
	// identity a ServiceAccount acts as.
	annotationClientID = "azure.workload.identity/client-id"
	// roleBlobContributor lets the backend read and write blobs.
	roleBlobContributor = "Storage Blob Data Contributor"
)

// reContainer is Azure's rule for blob container names, and reAccount
// for storage account names.
var (
	reContainer = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	reAccount   = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
)

func init() {
	kube.ImplementApp(Cloud)
	registry.Implement(Cloud, appIdentity)
	registry.Implement(Cloud, appBucket)
	registry.Check(Cloud, checkAppBucket)
	// The AKS cluster, whose OIDC issuer the backend's identity trusts.
	clusterref.ForAppEnvironment.Reads(Name, clusterref.Read{Resource: rCluster, Kind: clusterKind})
}

func appTags(a *appenvironment.App) map[string]any {
	return map[string]any{"environment": a.Name, "cluster": a.Cluster.CloudName, "managed-by": "crossplane"}
}

// accountName is the storage account's name of a bucket of an environment
// (tenant: of a tenant's derived cloud name): its name without '-', fitted
// into 24 characters (names.Cut). The environment's bucket is the
// account's one blob container, named as the bucket; the front end's is
// the account's static website.
func accountName(bucket string, tenant bool) string {
	return names.Cut(tenant, strings.ReplaceAll(bucket, "-", ""), maxAccountName)
}

// validAccount reports whether Azure accepts the storage account's name of
// a bucket (accountName): 3 to 24 lower-case letters and digits.
func validAccount(bucket string, tenant bool) bool {
	return reAccount.MatchString(accountName(bucket, tenant))
}

// appIdentity renders the environment's resource group, the backend's
// user-assigned identity, its federation with the AKS cluster's OIDC issuer
// for the backend's ServiceAccount (workload identity: no secret exists),
// and the ServiceAccount, annotated with the identity's client ID. The
// federation waits for the issuer, the ServiceAccount for the client ID.
func appIdentity(ctx *registry.Context, id appenvironment.Identity) ([]*registry.Resource, error) {
	name := id.Name + "-backend"
	fed := &registry.Resource{Name: rAppFederation, Kind: federationKind, ExternalName: name, DependsOn: []string{rAppIdentity}}
	if issuer := object.String(id.Cluster.Observed[rCluster], "status", "atProvider", "oidcIssuerUrl"); issuer == "" {
		clusterref.Await(id.Cluster, fed, "AKS cluster to report its OIDC issuer")
	} else {
		fed.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"resourceGroupNameSelector": ctx.Selector(rAppResourceGroup),
			"parentIdSelector":          ctx.Selector(rAppIdentity),
			"audience":                  []any{tokenAudience},
			"issuer":                    issuer,
			"subject":                   "system:serviceaccount:" + id.Namespace + ":" + appenvironment.ServiceAccount,
		}}}
	}
	sa := kube.ServiceAccount(ctx, id.App, nil, rAppFederation)
	if client := object.String(ctx.Observed(rAppIdentity), "status", "atProvider", "clientId"); client == "" {
		sa = &registry.Resource{Name: sa.Name, Kind: sa.Kind, Pending: "waits for the client ID of " + rAppIdentity}
	} else {
		sa = kube.ServiceAccount(ctx, id.App, map[string]any{annotationClientID: client}, rAppFederation)
	}
	return []*registry.Resource{
		{
			Name:         rAppResourceGroup,
			Kind:         resourceGroupKind,
			ExternalName: id.Name + "-app-rg",
			Body:         object.Object{"spec": map[string]any{"forProvider": map[string]any{"location": id.Location, "tags": appTags(id.App)}}},
		},
		{
			Name:         rAppIdentity,
			Kind:         identityKind,
			ExternalName: name,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"resourceGroupNameSelector": ctx.Selector(rAppResourceGroup),
				"location":                  id.Location,
				"name":                      name,
				"tags":                      appTags(id.App),
			}}},
			DependsOn: []string{rAppResourceGroup},
		},
		fed,
		sa,
	}, nil
}

// appBucket renders the bucket as a blob container of its name in a
// storage account of its own (TLS 1.2, HTTPS only, blobs public only when
// public, a static website when asked for), and the role that lets the backend's identity read and write
// that container's blobs, and nothing else. The role assignment takes the
// identity's principal ID and the account's ID as values, so it waits until
// both are observed.
func appBucket(ctx *registry.Context, b appenvironment.Bucket) ([]*registry.Resource, error) {
	fp := map[string]any{
		"resourceGroupNameSelector":  ctx.Selector(rAppResourceGroup),
		"location":                   b.Location,
		"accountKind":                "StorageV2",
		"accountTier":                "Standard",
		"accountReplicationType":     "ZRS",
		"minTlsVersion":              "TLS1_2",
		"httpsTrafficOnlyEnabled":    true,
		"allowNestedItemsToBePublic": b.Public,
		"tags":                       appTags(b.App),
	}
	if b.Website {
		fp["staticWebsite"] = map[string]any{"indexDocument": "index.html", "error404Document": "404.html"}
	}
	access := "private"
	if b.Public {
		access = "blob"
	}
	ra := &registry.Resource{Name: rAppBucketAccess, Kind: roleAssignKind, DependsOn: []string{rAppContainer, rAppIdentity}}
	principal := object.String(ctx.Observed(rAppIdentity), "status", "atProvider", "principalId")
	account := object.String(ctx.Observed(rAppBucket), "status", "atProvider", "id")
	switch {
	case principal == "":
		ra.Pending = "waits for the principal ID of " + rAppIdentity
	case account == "":
		ra.Pending = "waits for the ID of " + rAppBucket
	default:
		ra.Body = object.Object{"spec": map[string]any{"forProvider": map[string]any{
			"principalId":                  principal,
			"principalType":                "ServicePrincipal",
			"scope":                        account + "/blobServices/default/containers/" + b.Name,
			"roleDefinitionName":           roleBlobContributor,
			"skipServicePrincipalAadCheck": true,
			"description":                  "The backend of environment " + b.App.Name + " reads and writes its blobs",
		}}}
	}
	return []*registry.Resource{
		{
			Name:         rAppBucket,
			Kind:         storageAccountKind,
			ExternalName: accountName(b.Name, b.Tenant),
			Orphan:       b.Orphan,
			Body:         object.Object{"spec": map[string]any{"forProvider": fp}},
			DependsOn:    []string{rAppResourceGroup},
			Outputs: func(obs *structpb.Struct, _ map[string][]byte, o *registry.Outputs) {
				if ep := object.String(obs, "status", "atProvider", "primaryBlobEndpoint"); ep != "" {
					o.BucketURL = strings.TrimSuffix(ep, "/") + "/" + b.Name
				}
			},
		},
		{
			Name:         rAppContainer,
			Kind:         containerKind,
			ExternalName: b.Name,
			Orphan:       b.Orphan,
			Body: object.Object{"spec": map[string]any{"forProvider": map[string]any{
				"storageAccountIdSelector": ctx.Selector(rAppBucket),
				"containerAccessType":      access,
			}}},
			DependsOn: []string{rAppBucket},
		},
		ra,
	}, nil
}

// checkAppBucket refuses bucket names Azure refuses, as a container's and
// (without '-') as a storage account's.
func checkAppBucket(_ *registry.Context, b appenvironment.Bucket) field.ErrorList {
	p := xr.ParametersPath("bucket", "name")
	if !b.Named {
		p = field.NewPath("metadata", "name")
	}
	switch {
	case !reContainer.MatchString(b.Name) || strings.Contains(b.Name, "--"):
		return field.ErrorList{field.Invalid(p, b.Name, "an Azure blob container name has 3 to 63 lower-case letters, digits and single '-', starting and ending with a letter or digit")}
	case !validAccount(b.Name, b.Tenant):
		return field.ErrorList{field.Invalid(p, b.Name, fmt.Sprintf("its storage account's name, %q (without '-', at most 24 characters), needs at least 3 letters or digits", accountName(b.Name, b.Tenant)))}
	}
	return nil
}
