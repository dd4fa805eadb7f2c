package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/component"
	"github.com/seed-6471616d/function-cluster-platform/internal/modules"
	"github.com/seed-6471616d/function-cluster-platform/internal/registry"
	"github.com/seed-6471616d/function-cluster-platform/internal/xr"
)

// An Edge is a dependency between two Component kinds: a resource of a
// Component of kind From waits for a resource of another Component, of kind
// To, to be ready before it is composed.
type Edge struct {
	// From waits for To.
	From, To component.Kind
}

// A Link joins a Component kind and another module: the Component composes
// the module's XR (Nested), or the module's XRs read the Component's
// resources of the Cluster they name (clusterRef).
type Link struct {
	// Kind is the Component kind.
	Kind component.Kind
	// Module is the other module's name.
	Module string
	// Nested is set when Kind composes Module's XR; otherwise Module's
	// XRs name the Cluster whose resources of Kind they read.
	Nested bool
}

// Graph is the resource graph of every module, cloud-agnostic: the
// Component kinds of each module, the dependency edges between them and
// the links between modules, each with the clouds where the example
// stacks render it.
type Graph struct {
	// Modules are the function's modules, in modules.All order.
	Modules []modules.Module
	// Edges are the dependency edges, with the clouds they were rendered on.
	Edges map[Edge][]string
	// Links are the links between modules, with the clouds.
	Links map[Link][]string
	// Rendered are the Component kinds some example stack renders.
	Rendered map[component.Kind]bool
	// Clouds are the registered clouds, sorted.
	Clouds []string
}

// xrGroup is the API group of the function's own XRs.
var xrGroup, _, _ = strings.Cut(xr.ClusterAPIVersion, "/")

// NestedModule returns the module whose XR a composed kind is, when it is
// one of the function's XR kinds.
func NestedModule(k *registry.ResourceKind) (modules.Module, bool) {
	if k == nil || !strings.HasPrefix(k.Namespaced, xrGroup+"/") {
		return modules.Module{}, false
	}
	return modules.ForKind(k.Kind)
}

// BuildGraph derives the graph from rendered example stacks and the
// clusterRef readers' registrations.
func BuildGraph(stacks []Stack) (*Graph, error) {
	g := &Graph{
		Modules:  modules.All,
		Edges:    map[Edge][]string{},
		Links:    map[Link][]string{},
		Rendered: map[component.Kind]bool{},
		Clouds:   registry.Clouds(),
	}
	add := func(m map[Edge][]string, e Edge, cloud string) {
		if !slices.Contains(m[e], cloud) {
			m[e] = append(m[e], cloud)
		}
	}
	addLink := func(l Link, cloud string) {
		if !slices.Contains(g.Links[l], cloud) {
			g.Links[l] = append(g.Links[l], cloud)
		}
	}
	clusters := map[string]*Stack{}
	for i := range stacks {
		st := &stacks[i]
		if st.Module == modules.All[0].Name {
			clusters[st.Cloud] = st
		}
		byName := map[string]*registry.Rendered{}
		for _, rd := range st.Rendered {
			byName[rd.Name] = rd
		}
		for _, rd := range st.Rendered {
			if rd.UsageBy != "" {
				continue // the registry's, not a Component's
			}
			from, ok := st.Components[rd.Component]
			if !ok {
				return nil, fmt.Errorf("cannot graph %s: composed resource %q names component %q, which the plan does not have", st.Example, rd.Name, rd.Component)
			}
			g.Rendered[from] = true
			if m, ok := NestedModule(rd.Kind); ok {
				addLink(Link{Kind: from, Module: m.Name, Nested: true}, st.Cloud)
			}
			for _, d := range rd.DependsOn {
				dep, ok := byName[d]
				if !ok {
					return nil, fmt.Errorf("cannot graph %s: composed resource %q depends on %q, which is not rendered", st.Example, rd.Name, d)
				}
				if dep.Component == rd.Component {
					continue
				}
				add(g.Edges, Edge{From: from, To: st.Components[dep.Component]}, st.Cloud)
			}
		}
	}
	for _, m := range modules.All {
		if m.Clusters == nil {
			continue
		}
		for _, cloud := range g.Clouds {
			st, ok := clusters[cloud]
			if !ok {
				return nil, fmt.Errorf("cannot graph what module %s reads of a Cluster on %s: no Cluster example was rendered there", m.Name, cloud)
			}
			for _, read := range m.Clusters.ReadsOf(cloud) {
				kind, ok := componentOf(st, read.Resource)
				if !ok {
					return nil, fmt.Errorf("cannot graph what module %s reads of a Cluster on %s: the example Cluster renders no %q", m.Name, cloud, read.Resource)
				}
				addLink(Link{Kind: kind, Module: m.Name}, cloud)
			}
		}
	}
	for _, cs := range g.Edges {
		slices.Sort(cs)
	}
	for _, cs := range g.Links {
		slices.Sort(cs)
	}
	return g, nil
}

// componentOf is the Component kind of a stack's composed resource.
func componentOf(st *Stack, resource string) (component.Kind, bool) {
	for _, rd := range st.Rendered {
		if rd.Name == resource {
			k, ok := st.Components[rd.Component]
			return k, ok
		}
	}
	return "", false
}

// nodeID is a Mermaid node ID: alphanumeric.
func nodeID(k component.Kind) string { return "k" + alnum(string(k)) }

// moduleID is the Mermaid ID of a module's subgraph or node.
func moduleID(name string) string { return "module" + alnum(name) }

func alnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// label is an arrow's label: what the arrow is, if it is not a dependency,
// and the clouds whose example stacks have it, when not every cloud's do.
func (g *Graph) label(clouds []string, what string) string {
	partial := !slices.Equal(clouds, g.Clouds)
	switch {
	case what != "" && partial:
		return `|"` + what + " (" + strings.Join(clouds, ", ") + `)"|`
	case what != "":
		return `|"` + what + `"|`
	case partial:
		return `|"` + strings.Join(clouds, ", ") + `"|`
	}
	return ""
}

// Of is the part of the graph inside one module: its Component kinds and
// the edges between them, without the links to other modules. The README
// shows the Cluster module's; docs/reference/graph.md shows them all.
func (g *Graph) Of(module string) *Graph {
	out := &Graph{Edges: map[Edge][]string{}, Links: map[Link][]string{}, Rendered: g.Rendered, Clouds: g.Clouds}
	in := map[component.Kind]bool{}
	for _, m := range g.Modules {
		if m.Name == module {
			out.Modules = []modules.Module{m}
			for _, k := range m.AllKinds() {
				in[k] = true
			}
		}
	}
	for e, clouds := range g.Edges {
		if in[e.From] && in[e.To] {
			out.Edges[e] = clouds
		}
	}
	return out
}

// MermaidTitle says how to read the diagram.
const MermaidTitle = "Component kinds per module. An arrow runs from what is composed first to what waits for it; a label names the clouds whose example stacks have it, when not all do"

// Mermaid renders the graph as a Mermaid flowchart: a subgraph per module
// holding its Component kinds, solid arrows for dependencies (labelled
// with the clouds where only some clouds have them), dotted arrows for
// nested XRs and for what a module reads of the Cluster it names.
func (g *Graph) Mermaid() string {
	var b strings.Builder
	// One module's graph (the README's) is drawn bare: the text around
	// it says how to read it.
	single := len(g.Modules) == 1
	if !single {
		b.WriteString("---\ntitle: \"" + MermaidTitle + "\"\n---\n")
	}
	b.WriteString("flowchart LR\n")
	// ref names a node in an edge; drawn bare, a node is labelled where
	// it first appears.
	labelled := map[component.Kind]bool{}
	ref := func(k component.Kind) string {
		if !single || labelled[k] {
			return nodeID(k)
		}
		labelled[k] = true
		return fmt.Sprintf("%s[\"%s\"]", nodeID(k), k)
	}
	for _, m := range g.Modules {
		if single {
			continue
		}
		title := fmt.Sprintf("%s (module %s)", m.XRKinds[0], m.Name)
		if len(m.AllKinds()) == 0 {
			fmt.Fprintf(&b, "  %s[\"%s XR: composes no Component kinds of the clouds\"]\n", moduleID(m.Name), m.XRKinds[0])
			continue
		}
		fmt.Fprintf(&b, "  subgraph %s[\"%s\"]\n", moduleID(m.Name), title)
		for _, k := range m.AllKinds() {
			fmt.Fprintf(&b, "    %s[\"%s\"]\n", nodeID(k), k)
		}
		b.WriteString("  end\n")
	}
	for _, e := range sortedEdges(g.Edges) {
		to := ref(e.To)
		fmt.Fprintf(&b, "  %s -->%s %s\n", to, g.label(g.Edges[e], ""), ref(e.From))
	}
	for _, m := range g.Modules {
		for _, k := range m.AllKinds() {
			if single && !labelled[k] {
				fmt.Fprintf(&b, "  %s\n", ref(k))
			}
		}
	}
	for _, l := range sortedLinks(g.Links) {
		if l.Nested {
			fmt.Fprintf(&b, "  %s -.->%s %s\n", nodeID(l.Kind), g.label(g.Links[l], "nested XR"), moduleID(l.Module))
			continue
		}
		fmt.Fprintf(&b, "  %s -.->%s %s\n", nodeID(l.Kind), g.label(g.Links[l], "clusterRef"), moduleID(l.Module))
	}
	var unrendered []string
	for _, m := range g.Modules {
		for _, k := range m.AllKinds() {
			if !g.Rendered[k] {
				unrendered = append(unrendered, nodeID(k))
			}
		}
	}
	if len(unrendered) > 0 {
		b.WriteString("  classDef unrendered stroke-dasharray: 4 4\n")
		fmt.Fprintf(&b, "  class %s unrendered\n", strings.Join(unrendered, ","))
	}
	return b.String()
}

// kindOrder is each Component kind's position in modules.All.
func kindOrder() map[component.Kind]int {
	out := map[component.Kind]int{}
	for _, m := range modules.All {
		for _, k := range m.AllKinds() {
			if _, ok := out[k]; !ok {
				out[k] = len(out)
			}
		}
	}
	return out
}

func sortedEdges(m map[Edge][]string) []Edge {
	order := kindOrder()
	es := slices.Collect(maps.Keys(m))
	slices.SortFunc(es, func(a, b Edge) int {
		if c := order[a.To] - order[b.To]; c != 0 {
			return c
		}
		if c := order[a.From] - order[b.From]; c != 0 {
			return c
		}
		return strings.Compare(string(a.To)+" "+string(a.From), string(b.To)+" "+string(b.From))
	})
	return es
}

func sortedLinks(m map[Link][]string) []Link {
	order := kindOrder()
	ls := slices.Collect(maps.Keys(m))
	slices.SortFunc(ls, func(a, b Link) int {
		if a.Nested != b.Nested {
			if a.Nested {
				return -1
			}
			return 1
		}
		if c := order[a.Kind] - order[b.Kind]; c != 0 {
			return c
		}
		return strings.Compare(string(a.Kind)+" "+a.Module, string(b.Kind)+" "+b.Module)
	})
	return ls
}
