package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seed-6471616d/function-cluster-platform/internal/fntest"
	"github.com/seed-6471616d/function-cluster-platform/internal/overlay"
)

// errEngineRefused is an engine change the simulated RDS refuses.
var errEngineRefused = errors.New("the simulated RDS refuses the modification")

// rdsKind is the namespaced RDS instance kind, and rdsParameterGroup its
// parameter groups'.
var (
	rdsKind           = kindRef{"rds.aws.m.upbound.io/v1beta1", "Instance"}
	rdsParameterGroup = kindRef{"rds.aws.m.upbound.io/v1beta1", "ParameterGroup"}
)

// rdsRefusal is why RDS refuses to modify an instance that asks for
// another major version than it runs, or "": ModifyDBInstance to a new
// major version needs AllowMajorVersionUpgrade, and a custom parameter
// group of the new version's family ("Upgrading the PostgreSQL DB engine
// for Amazon RDS", Amazon RDS User Guide; the InvalidParameterCombination
// errors it returns). group is the parameter group the instance's
// selector picks (nil when none is found); a version lower than the one
// it runs is refused too.
func rdsRefusal(instance, group object) string {
	asked, runs := rdsMajor(str(instance, "spec", "forProvider", "engineVersion")), rdsMajor(str(instance, "status", "atProvider", "engineVersionActual"))
	if asked == "" || runs == "" || asked == runs {
		return ""
	}
	if len(asked) < len(runs) || len(asked) == len(runs) && asked < runs {
		return fmt.Sprintf("InvalidParameterCombination: cannot upgrade postgres from %s to %s: downgrades are not supported", runs, asked)
	}
	if at(instance, "spec", "forProvider", "allowMajorVersionUpgrade") != true {
		return "InvalidParameterCombination: The AllowMajorVersionUpgrade flag must be present when upgrading to a new major version."
	}
	family := str(group, "spec", "forProvider", "family")
	if want := "postgres" + asked; family != want {
		return fmt.Sprintf("InvalidParameterCombination: The parameter group %s with DBParameterGroupFamily %s cannot be used for this instance. Use a parameter group with DBParameterGroupFamily %s.", str(group, "metadata", "annotations", "crossplane.io/external-name"), family, want)
	}
	return ""
}

// rdsMajor is the major version of an RDS PostgreSQL version: "16" of
// "16.4".
func rdsMajor(v string) string {
	major, _, _ := strings.Cut(v, ".")
	return major
}

// checkEngine is the simulated RDS's check of a ready instance's
// modification: the parameter group its selector picks is found as the
// provider would resolve it (by the selector's labels, among the
// instance's composite's resources); a refusal is written to its Synced
// condition, counted, and returned.
func (c *cloud) checkEngine(kr kindRef, o object) error {
	if kr.kind != rdsKind.kind || !strings.HasPrefix(kr.apiVersion, "rds.aws.") {
		return nil
	}
	var group object
	if label := str(o, "spec", "forProvider", "parameterGroupNameSelector", "matchLabels", "platform.example.org/resource"); label != "" {
		groups, err := c.k.list(rdsParameterGroup.apiVersion, rdsParameterGroup.kind, str(o, "metadata", "namespace"),
			"platform.example.org/resource="+label+",crossplane.io/composite="+str(o, "metadata", "labels", "crossplane.io/composite"))
		if err != nil {
			return err
		}
		if len(groups) > 0 {
			group = groups[0]
		}
	}
	why := rdsRefusal(o, group)
	if why == "" {
		return nil
	}
	c.engineRefused.Add(1)
	conds := []any{
		map[string]any{"type": "Synced", "status": "False", "reason": "ReconcileError", "message": why, "lastTransitionTime": "2026-01-01T00:00:00Z"},
		map[string]any{"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-01T00:00:00Z"},
	}
	if err := c.k.patchStatus(kr.apiVersion, kr.kind, str(o, "metadata", "namespace"), str(o, "metadata", "name"), map[string]any{"conditions": conds}); err != nil && !errors.Is(err, errNotFound) {
		return err
	}
	return fmt.Errorf("%w %s: %s", errEngineRefused, str(o, "metadata", "name"), why)
}

// exampleXR is an example XR as onCluster applies it: unprotected.
func (s *scenarios) exampleXR(example string) object {
	xr := fntest.MustLoad(filepath.Join(s.examples, example))[0]
	unprotect(xr)
	return xr
}

// engineUpgrade raises a Ready Database's PostgreSQL by one major version
// on the real control plane and waits until the server runs it, as the
// XR's status reports, with the Upgrading condition back to UpToDate. On
// AWS the simulated RDS refuses a modification without
// allowMajorVersionUpgrade or on a parameter group of the old family
// (rdsRefusal): none may be refused, and the old family's group is
// removed once the instance runs the new version.
func (s *scenarios) engineUpgrade(example string) func(live object) error {
	return func(live object) error {
		xr := s.exampleXR(example)
		name, ns := str(xr, "metadata", "name"), str(xr, "metadata", "namespace")
		par := xr["spec"].(map[string]any)["parameters"].(map[string]any)
		from, _ := par["version"].(string)
		n, err := strconv.Atoi(from)
		if err != nil {
			return fmt.Errorf("%s: version %q is no major version: %w", example, from, err)
		}
		to := strconv.Itoa(n + 1)
		refusedBefore := s.c.engineRefused.Load()
		par["version"] = to
		if err := s.k.apply(xr); err != nil {
			return err
		}
		took, err := s.waitFor(example+" upgraded to PostgreSQL "+to, func() (bool, error) {
			live, err = s.k.get(xr["apiVersion"].(string), xr["kind"].(string), ns, name)
			if err != nil {
				return false, err
			}
			st, reason, msg := condition(live, "Upgrading")
			runs := rdsMajor(strings.TrimPrefix(str(live, "status", "engineVersion"), "POSTGRES_"))
			ready, _, _ := condition(live, "Ready")
			return runs == to && st == "False" && reason == "UpToDate" && ready == "True", fmt.Errorf("status.engineVersion %q, Upgrading %s/%s: %s", str(live, "status", "engineVersion"), st, reason, msg)
		})
		if err != nil {
			return err
		}
		refused := s.c.engineRefused.Load() - refusedBefore
		if refused > 0 {
			return fmt.Errorf("%s: the simulated RDS refused %d modifications during the upgrade", example, refused)
		}
		extra := ""
		if cloudOf(example) == "aws" {
			if _, err := s.waitFor("the old parameter group removed", func() (bool, error) {
				groups, err := s.k.list(rdsParameterGroup.apiVersion, rdsParameterGroup.kind, ns, "crossplane.io/composite="+name)
				if err != nil {
					return false, err
				}
				var families []string
				for _, g := range groups {
					families = append(families, str(g, "spec", "forProvider", "family"))
				}
				return len(groups) == 1 && families[0] == "postgres"+to, fmt.Errorf("parameter groups of families %v", families)
			}); err != nil {
				return err
			}
			extra = fmt.Sprintf(", the postgres%s parameter group retired, no modification refused by the simulated RDS", from)
		}
		fmt.Printf("  %s: PostgreSQL %s -> %s in %.1f s%s\n", example, from, to, took.Seconds(), extra)
		return nil
	}
}

// namespaceRename renames a Ready AppEnvironment's namespace on the real
// control plane: the function refuses it with a Fatal naming
// spec.parameters.namespace, which Crossplane reports on the XR, and
// nothing the XR composed is deleted; restoring the namespace makes the
// XR Synced again.
func (s *scenarios) namespaceRename(example string) func(live object) error {
	return func(live object) error {
		xr := s.exampleXR(example)
		name, ns := str(xr, "metadata", "name"), str(xr, "metadata", "namespace")
		apiVersion, kind := xr["apiVersion"].(string), xr["kind"].(string)
		refs := resourceRefs(live)
		renamed := overlay.DeepCopy(xr)
		par := renamed["spec"].(map[string]any)["parameters"].(map[string]any)
		was := str(live, "status", "namespace")
		par["namespace"] = was + "-renamed"
		if err := s.k.apply(renamed); err != nil {
			return err
		}
		took, err := s.waitFor(example+" rename refused", func() (bool, error) {
			live, err := s.k.get(apiVersion, kind, ns, name)
			if err != nil {
				return false, err
			}
			st, reason, msg := condition(live, "Synced")
			return st == "False" && strings.Contains(msg, "spec.parameters.namespace"), fmt.Errorf("condition Synced is %s/%s: %s", st, reason, msg)
		})
		if err != nil {
			return err
		}
		for _, r := range refs {
			o, err := s.k.get(r.apiVersion, r.kind, ns, r.name)
			if err != nil {
				return fmt.Errorf("%s: after the refused rename, %s %s is gone: %w", example, r.kind, r.name, err)
			}
			if str(o, "metadata", "deletionTimestamp") != "" {
				return fmt.Errorf("%s: after the refused rename, %s %s is being deleted", example, r.kind, r.name)
			}
		}
		if err := s.k.apply(xr); err != nil {
			return err
		}
		if _, err := s.waitFor(example+" Synced again", func() (bool, error) {
			live, err := s.k.get(apiVersion, kind, ns, name)
			if err != nil {
				return false, err
			}
			st, reason, msg := condition(live, "Synced")
			return st == "True", fmt.Errorf("condition Synced is %s/%s: %s", st, reason, msg)
		}); err != nil {
			return err
		}
		fmt.Printf("  %s: namespace %s -> %s-renamed refused (Fatal naming spec.parameters.namespace) in %.1f s, all %d composed resources kept, restored\n", example, was, was, took.Seconds(), len(refs))
		return nil
	}
}
