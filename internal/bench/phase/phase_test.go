package phase

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// cpuProfile is a CPU profile with one sample of cpu ns per stack, each
// stack innermost first.
func cpuProfile(stacks [][]string, cpu int64) *profile.Profile {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}}
	fns := map[string]*profile.Function{}
	for _, stack := range stacks {
		s := &profile.Sample{Value: []int64{1, cpu}}
		for _, name := range stack {
			if fns[name] == nil {
				fns[name] = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				p.Function = append(p.Function, fns[name])
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fns[name]}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

const mod = "github.com/seed-6471616d/function-cluster-platform/internal/"

func TestOf(t *testing.T) {
	type args struct {
		stacks [][]string
		root   *regexp.Regexp
	}
	cases := map[string]struct {
		reason string
		args   args
		want   map[string]time.Duration // bucket: CPU, the others zero
	}{
		"InnermostPhase": {
			reason: "A sample goes to the innermost phase on its stack: decoding the observed state inside the server's codec, a size check inside the engine.",
			args: args{stacks: [][]string{
				{"runtime.mallocgc", mod + "object.(*Batch).Struct", mod + "wire.(*decoder).structOf", mod + "wire.Request", mod + "serve.codec.Unmarshal", "google.golang.org/grpc.(*Server).processUnaryRPC"},
				{"google.golang.org/protobuf/proto.Size", mod + "response.CheckSize", mod + "engine.(*Call).Finish", "main.(*Function).RunFunction"},
			}},
			want: map[string]time.Duration{"decoding the request": 10, "size check": 10},
		},
		"Encoding": {
			reason: "gRPC's codec marshalling the response is encoding, not gRPC around the call.",
			args: args{stacks: [][]string{
				{"google.golang.org/protobuf/internal/impl.(*MessageInfo).marshal", "google.golang.org/protobuf/proto.MarshalOptions.MarshalAppend", "google.golang.org/grpc/encoding/proto.(*codecV2).Marshal", "google.golang.org/grpc.encode"},
			}},
			want: map[string]time.Duration{"encoding the response": 10},
		},
		"Around": {
			reason: "What no phase claims goes to gRPC's transport, the background GC or the rest.",
			args: args{stacks: [][]string{
				{"syscall.Syscall", "google.golang.org/grpc/internal/transport.(*loopyWriter).run"},
				{"golang.org/x/net/http2.(*Framer).ReadFrame", "google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams"},
				{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
				{"runtime.futex", "runtime.schedule"},
				{"runtime.nanotime1", "runtime.mallocgc", "runtime.newobject"},
			}},
			want: map[string]time.Duration{"gRPC and HTTP/2 around the call (transport, framing, reads and writes)": 20, "GC in the background (mark workers, sweeper, scavenger)": 10, "scheduler (switching goroutines, polling the network)": 10, Other: 10},
		},
		"Root": {
			reason: "With a root, samples without it on their stack are left out: in a benchmark binary, the floors'.",
			args: args{
				stacks: [][]string{
					{"google.golang.org/protobuf/proto.Unmarshal", mod + "bench.unmarshal", mod + "bench.roundTrip", mod + "bench.BenchmarkRunFunction.func2"},
					{mod + "wire.Request", mod + "bench.roundTrip", mod + "bench.BenchmarkRunFunction.func1"},
				},
				root: regexp.MustCompile(`BenchmarkRunFunction\.func1$`),
			},
			want: map[string]time.Duration{"decoding the request": 10},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Of(cpuProfile(tc.args.stacks, 10), tc.args.root)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]time.Duration{}
			var total time.Duration
			for _, b := range s.Buckets {
				if b.CPU != 0 {
					got[b.Name] = b.CPU
				}
				total += b.CPU
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nOf(...): -want, +got:\n%s", tc.reason, diff)
			}
			if total != s.Total {
				t.Errorf("%s\nOf(...): buckets add up to %v, total %v", tc.reason, total, s.Total)
			}
		})
	}
}

func TestOfRefusesNoCPU(t *testing.T) {
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}}}
	if _, err := Of(p, nil); err == nil {
		t.Error("Of(a heap profile): no error, want it refused")
	}
}

func TestTop(t *testing.T) {
	p := cpuProfile([][]string{{"a", "main.main"}, {"b", "main.main"}, {"a", "x"}}, 10)
	want := []Sum{{Name: "a", CPU: 20}, {Name: "b", CPU: 10}}
	if diff := cmp.Diff(want, Top(p, 2)); diff != "" {
		t.Errorf("Top(p, 2): -want, +got:\n%s", diff)
	}
}

func TestTable(t *testing.T) {
	s, err := Of(cpuProfile([][]string{{"x", "github.com/x/internal/wire.Request"}, {"y", "runtime.schedule"}}, 2_000_000), nil)
	if err != nil {
		t.Fatal(err)
	}
	table := s.Table(2)
	for _, want := range []string{"decoding the request", "1.00 ms/call  50.0%", "whole profile", "2.00 ms/call 100.0%"} {
		if !strings.Contains(table, want) {
			t.Errorf("Table(2): no %q in\n%s", want, table)
		}
	}
}
