// Package phase sums a CPU profile of converged calls by phase of the
// call: decoding the request, the environment, planning, rendering,
// comparison with observed state, encoding and the rest, as
// docs/performance.md reports them. Each sample goes to the innermost
// phase on its stack. The same buckets serve the in-process profile of
// BenchmarkRunFunction (go run ./cmd/loadgen -profile) and the profile
// make bench takes of the running function, where what no phase claims is
// split further into gRPC's own work around the call, the background GC
// and the rest of the runtime.
package phase

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// A Bucket is a phase, or a part of what no phase claims: its name and
// the functions (package-qualified names, as in a profile) whose samples
// are its.
type Bucket struct {
	Name  string
	Funcs *regexp.Regexp
}

// Phases of a converged call, in the order of the call. A sample belongs to
// the phase of the innermost frame on its stack that one of them matches.
var Phases = []Bucket{
	{"decoding the request", regexp.MustCompile(`proto\.Unmarshal$|wire\.Request$|proto\.UnmarshalOptions\.Unmarshal$|serve\.codec\.Unmarshal$|wire\.\(\*decoder\)\.`)},
	{"XR decode and validation", regexp.MustCompile(`xr\.Decode$|xr\.Validate$|xr\.RequireLocation$|main\.input$`)},
	{"the environment (resolve, decode, settings)", regexp.MustCompile(`envcfg\.Resolve$|envcfg\.\(\*Env\)\.|cluster\.SettingsOf$|engine\.cloudName$|engine\.TenancyOf$|envcfg\.Section`)},
	{"planning (model, cloud rules, gate, upgrade, budget, estimate)", regexp.MustCompile(`model/cluster\.Build$|engine\.\(\*Call\)\.Check$|modules/cluster\.gate$|modules/cluster\.upgrade$|modules/cluster\.evaluateBudget$|\(\*Plan\)\.Estimate$|registry\.\(\*Cloud\)\.CheckAll$|modules/cluster\.keepEgress$`)},
	{"overlays", regexp.MustCompile(`registry\.applyOverlays$`)},
	{"comparison with observed (replacement-only fields, rotations, versions)", regexp.MustCompile(`registry\.checkReplacements$|registry\.\(\*Cloud\)\.rotate$|lifecycle\.CompareOverlaid$|currentGenerations$`)},
	{"secret scan of the rendered objects", regexp.MustCompile(`registry\.checkSecrets$`)},
	{"Usages", regexp.MustCompile(`registry\.withUsages$`)},
	{"rendering the kinds (clouds' builders, envelope, names)", regexp.MustCompile(`registry\.\(\*Cloud\)\.renderComponent$|registry\.\(\*Cloud\)\.Render$|registry\.checkKeys$|registry\.importOnly$|registry\.checkCloudNames$`)},
	{"deciding and writing the desired state (maps to Structs)", regexp.MustCompile(`engine\.decide$|engine\.\(\*State\)\.write$|engine\.\(\*Call\)\.Render$`)},
	{"status, outputs, conditions, events", regexp.MustCompile(`engine\.\(\*State\)\.Outputs$|modules/cluster\.status$|engine\.\(\*Call\)\.Finish$|engine\.\(\*State\)\.Conditions$|response\.SetConditions$|response\.Warn$|modules/cluster\.rotations$|budgetCondition$|upgradingCondition$|announceStep$|connectionDetails$|modules/cluster\.Run$|engine\.Begin$`)},
	{"size check", regexp.MustCompile(`response\.CheckSize$`)},
	{"encoding the response", regexp.MustCompile(`proto\.Marshal$|encoding/proto\.\(\*codecV2\)\.Marshal$`)},
}

// Around is what no phase claims in a running server, each matched
// anywhere on the stack, in this order; Other is the rest.
var Around = []Bucket{
	{"gRPC and HTTP/2 around the call (transport, framing, reads and writes)", regexp.MustCompile(`^google\.golang\.org/grpc|^golang\.org/x/net/http2`)},
	{"GC in the background (mark workers, sweeper, scavenger)", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$`)},
	{"scheduler (switching goroutines, polling the network)", regexp.MustCompile(`^runtime\.(mcall|schedule|findRunnable|sysmon)$`)},
	// A stack deeper than the profiler records loses its outer frames,
	// and with them its phase: protobuf sizing or encoding deeply nested
	// Structs.
	{"protobuf, stack cut before its phase (sizing, encoding nested Structs)", regexp.MustCompile(`^google\.golang\.org/protobuf/`)},
}

// Other is the bucket of a sample no phase and nothing of Around claims:
// the rest of the runtime (GC assists outside a phase, the profiler), a
// benchmark's loop.
const Other = "other: runtime, GC assists outside a phase, benchmark loop"

// A Sum is the CPU of one bucket.
type Sum struct {
	Name string
	CPU  time.Duration
}

// A Summary is a profile's CPU by bucket: Phases' first, in their order,
// then Around's and Other.
type Summary struct {
	Buckets []Sum
	Total   time.Duration
}

// Of sums the CPU samples of p by bucket, counting only the samples with
// a frame that root matches (all when root is nil): in a benchmark binary,
// the function's own loop, leaving out the floors'.
func Of(p *profile.Profile, root *regexp.Regexp) (Summary, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return Summary{}, fmt.Errorf("cannot sum the profile by phase: no cpu sample type in %v", p.SampleType)
	}
	if u := p.SampleType[idx].Unit; u != "nanoseconds" {
		return Summary{}, fmt.Errorf("cannot sum the profile by phase: cpu in %s, want nanoseconds", u)
	}
	buckets := slices.Concat(Phases, Around)
	s := Summary{Buckets: make([]Sum, len(buckets)+1)}
	for i, b := range buckets {
		s.Buckets[i].Name = b.Name
	}
	s.Buckets[len(buckets)].Name = Other
	for _, sample := range p.Sample {
		var frames []string // innermost first
		for _, loc := range sample.Location {
			for _, line := range loc.Line { // inlined first, as the stack reads
				if line.Function != nil {
					frames = append(frames, line.Function.Name)
				}
			}
		}
		if root != nil && !slices.ContainsFunc(frames, root.MatchString) {
			continue
		}
		cpu := time.Duration(sample.Value[idx])
		s.Total += cpu
		s.Buckets[bucket(frames)].CPU += cpu
	}
	return s, nil
}

// bucket is the index in Summary.Buckets of a stack's bucket.
func bucket(frames []string) int {
	for _, f := range frames {
		if i := slices.IndexFunc(Phases, func(b Bucket) bool { return b.Funcs.MatchString(f) }); i >= 0 {
			return i
		}
	}
	for i, b := range Around {
		if slices.ContainsFunc(frames, b.Funcs.MatchString) {
			return len(Phases) + i
		}
	}
	return len(Phases) + len(Around)
}

// Table is the summary as a table, each bucket in ms per call (calls is
// how many calls the profile saw; 0 gives seconds instead) and in percent
// of the total.
func (s Summary) Table(calls int64) string {
	var w strings.Builder
	for _, b := range append(s.Buckets, Sum{Name: "whole profile", CPU: s.Total}) {
		pct := 0.0
		if s.Total > 0 {
			pct = 100 * float64(b.CPU) / float64(s.Total)
		}
		if calls > 0 {
			fmt.Fprintf(&w, "  %-75s %6.2f ms/call %5.1f%%\n", b.Name, float64(b.CPU)/float64(time.Millisecond)/float64(calls), pct)
			continue
		}
		fmt.Fprintf(&w, "  %-75s %8.3f s %5.1f%%\n", b.Name, b.CPU.Seconds(), pct)
	}
	return w.String()
}

// Top is the n functions of p with the most CPU of their own (flat), with
// that CPU, most first.
func Top(p *profile.Profile, n int) []Sum {
	idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" })
	if idx < 0 {
		return nil
	}
	flat := map[string]time.Duration{}
	for _, sample := range p.Sample {
		if len(sample.Location) == 0 || len(sample.Location[0].Line) == 0 || sample.Location[0].Line[0].Function == nil {
			continue
		}
		flat[sample.Location[0].Line[0].Function.Name] += time.Duration(sample.Value[idx])
	}
	top := make([]Sum, 0, len(flat))
	for name, cpu := range flat {
		top = append(top, Sum{Name: name, CPU: cpu})
	}
	slices.SortFunc(top, func(a, b Sum) int { return cmp.Or(cmp.Compare(b.CPU, a.CPU), cmp.Compare(a.Name, b.Name)) })
	return top[:min(n, len(top))]
}
