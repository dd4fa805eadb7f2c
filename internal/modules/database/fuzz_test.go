package database_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// oneStep are the major versions each cloud upgrades a PostgreSQL server
// to in place from each, as the clouds document them (Cloud SQL's and
// Flexible Server's in-place major version upgrade): the test's own table,
// not the function's. RDS upgrades a minor (rdsOneStep).
var oneStep = map[string]map[int][]int{
	"gcp":   {14: {15, 16, 17}, 15: {16, 17}, 16: {17}},
	"azure": {14: {15, 16, 17}, 15: {16, 17}, 16: {17}},
}

// rdsOneStep are the minors RDS upgrades each minor the simulated
// instances run to, of another major version, as "Choosing a major
// version for an RDS for PostgreSQL upgrade" lists them: the test's own
// rows (the simulated RDS runs the fourth minor of a major version asked
// for alone), not the function's table. A minor without a row is upgraded
// to no other major version.
var rdsOneStep = map[string][]string{
	"14.4": {"15.2", "15.3"},
	"16.4": {"17.1", "17.2", "17.3", "17.4", "17.5"},
}

// reaches are the major versions a cloud upgrades a server that runs
// version (in full) to in one step.
func reaches(cloud, version string) []int {
	if cloud != "aws" {
		return oneStep[cloud][versionNumber(version)]
	}
	var out []int
	for _, t := range rdsOneStep[version] {
		out = append(out, versionNumber(t))
	}
	return out
}

// startVersion is the version each cloud's fuzzed Database is converged
// at: on AWS one whose simulated minor RDS lists targets for.
var startVersion = map[string]string{"gcp": "15", "aws": "14", "azure": "15"}

// versionOf reads a major version of the instance, desired or observed.
func versionOf(o fntest.Object, where string) int { return versionNumber(fullVersionOf(o, where)) }

// fullVersionOf reads a version of the instance as its cloud has it
// ("16.4", "POSTGRES_16").
func fullVersionOf(o fntest.Object, where string) string {
	m := o
	for _, k := range strings.Split(where, ".") {
		next, _ := m[k].(map[string]any)
		if next == nil {
			v, _ := m[k].(string)
			return v
		}
		m = next
	}
	return ""
}

// versionNumber is the major version of a version as a cloud has it.
func versionNumber(v string) int {
	v = strings.TrimPrefix(v, "POSTGRES_")
	v, _, _ = strings.Cut(v, ".")
	n, _ := strconv.Atoi(v)
	return n
}

// versionPaths are where each cloud's instance asks for and reports its
// version.
var versionPaths = map[string][2]string{
	"gcp":   {"spec.forProvider.databaseVersion", "status.atProvider.databaseVersion"},
	"aws":   {"spec.forProvider.engineVersion", "status.atProvider.engineVersionActual"},
	"azure": {"spec.forProvider.version", "status.atProvider.version"},
}

// FuzzEngineLifecycle changes a converged Database's version at random,
// the providers acting on some reconciles, not acting on others, refusing
// the change on others (the spec applied, the cloud unchanged, Synced
// False) and still at work on it on others (the spec applied, the cloud
// unchanged), and checks after every reconcile that the instance is
// never asked for a version below the one it runs, nor one its cloud
// cannot reach from it in one step (a step already under way excepted),
// that a target the cloud can reach is never refused, and on AWS that a
// new major comes with allowMajorVersionUpgrade, a parameter group of its
// family, and a minor RDS lists as a target of the one that runs.
func FuzzEngineLifecycle(f *testing.F) {
	f.Add(uint8(1), []byte{17, 1, 15, 0, 17, 1, 14, 1})
	f.Add(uint8(0), []byte{14, 1, 17, 0, 16, 0, 17, 1})
	f.Add(uint8(2), []byte{17, 0, 15, 1, 16, 1})
	f.Add(uint8(0), []byte{17, 3, 15, 3, 16, 2, 14, 1})
	clouds := []string{"gcp", "aws", "azure"}
	f.Fuzz(func(t *testing.T, cloudIdx uint8, seq []byte) {
		if len(seq) > 16 {
			t.Skip("at most eight changes")
		}
		cloud := clouds[int(cloudIdx)%len(clouds)]
		paths := versionPaths[cloud]
		w := &fntest.World{XR: dbXR(cloud, withVersion(startVersion[cloud])), Envs: envs}
		rsp, observed, _, err := fntest.Converge(run, w.Request(), 30)
		if err != nil || fntest.Fatal(rsp) != "" {
			t.Fatalf("cannot converge: %v %s", err, fntest.Fatal(rsp))
		}
		w.Observed = observed
		for i := 0; i+1 < len(seq); i += 2 {
			target, provider := 14+int(seq[i])%4, seq[i+1]%4
			fntest.Set("spec.parameters.version", strconv.Itoa(target))(w.XR)
			req, err := w.Request().Proto()
			if err != nil {
				t.Fatal(err)
			}
			rsp := run(req)
			obs := w.Observed["instance"]
			runs, running := versionOf(obs, paths[1]), fullVersionOf(obs, paths[1])
			if msg := fntest.Fatal(rsp); msg != "" {
				if target >= runs && (target == runs || contains(reaches(cloud, running), target)) {
					t.Errorf("%s: the instance runs %d, and %d, which its cloud reaches, is refused: %s", cloud, runs, target, msg)
				}
				continue
			}
			inst := fntest.Desired(rsp)["instance"]
			asked := versionOf(inst, paths[0])
			before := versionOf(obs, paths[0])
			underWay := before > runs && !refusedNow(obs)
			switch {
			case asked < runs:
				t.Errorf("%s: the instance runs %d and is asked for %d: a downgrade", cloud, runs, asked)
			case asked != runs && (!underWay || asked != before) && !contains(reaches(cloud, running), asked):
				t.Errorf("%s: the instance runs %d and is asked for %d, which its cloud cannot reach in one step", cloud, runs, asked)
			case underWay && asked != before:
				t.Errorf("%s: a step to %d under way was taken back to %d", cloud, before, asked)
			case cloud == "aws" && asked != runs && !underWay && !slices.Contains(rdsOneStep[running], fullVersionOf(inst, paths[0])):
				t.Errorf("aws: the instance runs %s and is asked for %s, which RDS does not list as a target of it", running, fullVersionOf(inst, paths[0]))
			}
			if cloud == "aws" && asked != runs {
				checkRDSMajor(t, rsp, inst, asked)
			}
			switch provider {
			case 1:
				w.Observed = fntest.ObserveAll(rsp, w.Observed)
			case 2, 3:
				// The spec is applied; the cloud refuses it (2), or is
				// still at work on it (3): it runs what it ran.
				applied := overlay.DeepCopy(w.Observed["instance"])
				applied["spec"] = overlay.DeepCopyValue(inst["spec"])
				synced := map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"}
				if provider == 2 {
					synced = map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "update failed: refused by the cloud"}
				}
				applied["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": "True", "reason": "Available"}, synced}
				w.Observed["instance"] = applied
			}
		}
	})
}

// checkRDSMajor checks what RDS needs to carry out a major upgrade.
func checkRDSMajor(t *testing.T, rsp *fnv1.RunFunctionResponse, inst fntest.Object, asked int) {
	t.Helper()
	fp := inst["spec"].(map[string]any)["forProvider"].(map[string]any)
	if fp["allowMajorVersionUpgrade"] != true {
		t.Errorf("aws: the instance is asked for %d without allowMajorVersionUpgrade", asked)
	}
	group := fp["parameterGroupNameSelector"].(map[string]any)["matchLabels"].(map[string]any)["platform.example.org/resource"]
	want := "parameter-group-postgres" + strconv.Itoa(asked)
	if group != want {
		t.Errorf("aws: the instance is asked for %d on parameter group %v, want %s", asked, group, want)
	}
	if fntest.Desired(rsp)[want] == nil {
		t.Errorf("aws: parameter group %s is not desired", want)
	}
}

// refusedNow reports whether the observed instance's provider fails to
// apply its spec.
func refusedNow(o fntest.Object) bool {
	st, _ := o["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Synced" && m["status"] == "False" {
			return true
		}
	}
	return false
}

func contains(l []int, v int) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}
