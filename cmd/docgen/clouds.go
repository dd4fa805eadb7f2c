package main

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// kindKey identifies a composed kind: apiVersion (for a namespaced XR) and
// kind.
type kindKey struct{ apiVersion, kind string }

func keyOf(k *registry.ResourceKind) kindKey { return kindKey{apiVersion: k.Namespaced, kind: k.Kind} }

// composed is what one Component kind composes on one cloud in the example
// stacks: each concrete kind and how many resources of it.
type composed struct {
	kinds []*registry.ResourceKind
	count map[kindKey]int
}

// CloudsPage renders what every cloud composes: per module and Component
// kind, the concrete kinds of the example stacks; then every kind the cloud
// lists, with its apiVersions for both XR scopes.
func CloudsPage(stacks []Stack, graph *Graph) []byte {
	var b bytes.Buffer
	b.WriteString(generatedNotice("the cloud registrations (internal/clouds/*) and the example stacks they render (examples/<cloud>)"))
	b.WriteString("# What each cloud composes\n\n")
	b.WriteString("Look up here which managed resources a Cluster, Database or AppEnvironment becomes on each cloud: the concrete kinds and apiVersions every Component kind of the cloud-agnostic model is implemented with.\n\n")
	b.WriteString("For each cloud, the first table is what the example stacks (`examples/<cloud>/cluster.yaml`, `database.yaml` and `appenvironment.yaml`) compose, rendered through the registry against their converged observed resources, with the number of resources of each kind. Inputs the examples do not use compose more: the second table lists every kind the cloud registers, with its apiVersion for each XR scope. Usages, which the registry adds only where deletion order matters, are left out.\n\n")
	b.WriteString("The resource graph of the model, across modules and clouds, is in the top-level README (`make generate` writes it between its `graph` markers).\n\n")
	byCloud := map[string][]Stack{}
	for _, st := range stacks {
		byCloud[st.Cloud] = append(byCloud[st.Cloud], st)
	}
	for _, name := range graph.Clouds {
		c, _ := registry.Lookup(name)
		fmt.Fprintf(&b, "## %s\n\n", name)
		b.WriteString("| Module | Component kind | Composes (kind, apiVersion for a namespaced XR, resources in the example) |\n|---|---|---|\n")
		uses := map[kindKey][]string{}
		for _, m := range graph.Modules {
			per := map[component.Kind]*composed{}
			for _, st := range byCloud[name] {
				if st.Module != m.Name {
					continue
				}
				for _, rd := range st.Rendered {
					if rd.UsageBy != "" || rd.Kind == nil {
						continue
					}
					ck := st.Components[rd.Component]
					p := per[ck]
					if p == nil {
						p = &composed{count: map[kindKey]int{}}
						per[ck] = p
					}
					k := keyOf(rd.Kind)
					if p.count[k] == 0 {
						p.kinds = append(p.kinds, rd.Kind)
					}
					p.count[k]++
					use := fmt.Sprintf("%s/%s", m.Name, ck)
					if !slices.Contains(uses[k], use) {
						uses[k] = append(uses[k], use)
					}
				}
			}
			for _, ck := range m.AllKinds() {
				p := per[ck]
				if p == nil {
					fmt.Fprintf(&b, "| %s | %s | not in the example |\n", m.Name, ck)
					continue
				}
				items := make([]string, 0, len(p.kinds))
				for _, k := range p.kinds {
					items = append(items, fmt.Sprintf("`%s` (`%s`) ×%d", k.Kind, k.Namespaced, p.count[keyOf(k)]))
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", m.Name, ck, strings.Join(items, "<br>"))
			}
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "Every kind %s registers (`registry.Cloud.Kinds`):\n\n", name)
		b.WriteString("| Kind | apiVersion (namespaced XR) | apiVersion (legacy XR) | Provider config | Composed in the examples by |\n|---|---|---|---|---|\n")
		kinds := slices.Clone(c.Kinds)
		slices.SortStableFunc(kinds, func(a, b *registry.ResourceKind) int {
			return strings.Compare(a.Namespaced+" "+a.Kind, b.Namespaced+" "+b.Kind)
		})
		for _, k := range kinds {
			legacy := k.Cluster
			if legacy == "" {
				legacy = "—"
			} else {
				legacy = "`" + legacy + "`"
				if n := k.Name(xr.ClusterScoped); n != k.Kind {
					legacy += " kind `" + n + "`"
				}
			}
			ns := "—"
			if k.Namespaced != "" {
				ns = "`" + k.Namespaced + "`"
			}
			provider := k.Provider
			if provider == "" {
				provider = "—"
			}
			by := "—"
			if u := uses[keyOf(k)]; len(u) > 0 {
				by = strings.Join(u, ", ")
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Kind, ns, legacy, provider, by)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}

// IndexPage renders docs/reference/README.md: a link to every page.
func IndexPage(xrds []PageRef, others []PageRef) []byte {
	var b bytes.Buffer
	b.WriteString(generatedNotice("the XRDs, the environment's Go types and the cloud registrations"))
	b.WriteString("# Reference\n\n")
	b.WriteString("Find here the page that answers what a field, a key or a composed resource is: generated from the code by `make generate` (`go run ./cmd/docgen`), so it says what the function does; `make check-generated` fails when a page is out of date.\n\n")
	b.WriteString("## XR kinds\n\n")
	for _, p := range xrds {
		fmt.Fprintf(&b, "- [%s](%s): %s\n", p.Title, p.File, p.What)
	}
	b.WriteString("\n## The platform\n\n")
	for _, p := range others {
		fmt.Fprintf(&b, "- [%s](%s): %s\n", p.Title, p.File, p.What)
	}
	return b.Bytes()
}

// GraphPage is docs/reference/graph.md: the whole resource graph.
func GraphPage(graph string) []byte {
	var b bytes.Buffer
	b.WriteString(generatedNotice("the example stacks rendered through the registry"))
	b.WriteString("# The resource graph\n\n")
	b.WriteString("See what every module composes, in what order, and how the modules use each other: each box is a Component kind of the cloud-agnostic model, which each cloud implements ([what each cloud composes](clouds.md)).\n\n")
	b.WriteString(MermaidBlock(graph))
	return b.Bytes()
}

// A PageRef is a page of the index.
type PageRef struct {
	// Title is the link's text, File the page's file in the reference
	// folder and What what the page answers.
	Title, File, What string
}

// moduleOf is the name of the module that serves an XR kind, or "".
func moduleOf(kind string) string {
	m, ok := modules.ForKind(kind)
	if !ok {
		return ""
	}
	return m.Name
}

// sortedKeys are a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
