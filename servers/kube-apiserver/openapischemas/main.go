// Command openapischemas prints the OpenAPI v3 schemas the built-in apiserver serves for
// a group (crates/apiserver/proto/openapi/), taken from the document kube-apiserver serves for it: the
// schemas of the kinds the built-in apiserver has in that group (and their lists), with
// every schema they refer to, unchanged. kubectl explain reads them.
//
//	go run ./openapischemas core > ../../crates/apiserver/proto/openapi/api__v1.json
//	go run ./openapischemas apps > ../../crates/apiserver/proto/openapi/apis__apps__v1.json
//	go run ./openapischemas coordination > ../../crates/apiserver/proto/openapi/apis__coordination.k8s.io__v1.json
//	go run ./openapischemas events > ../../crates/apiserver/proto/openapi/apis__events.k8s.io__v1.json
//	go run ./openapischemas others > ../../crates/apiserver/proto/openapi/other-groups.json
//
// `others` is every kind of the other group versions kube-apiserver serves by default
// (batch/v1, networking.k8s.io/v1, rbac.authorization.k8s.io/v1...): the schemas a
// sample of one of them (a Job, an Ingress, a Role) is patched and applied by, as
// kube-apiserver merges it.
//
// The documents come from k8s.io/kubernetes at the version go.mod pins
// (api/openapi-spec/v3), found through `go list`.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// What the built-in apiserver serves, by group: the document's file and the schemas of
// its kinds.
var groups = map[string]struct {
	file  string
	roots []string
}{
	"core": {"api__v1_openapi.json", []string{
		"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodList",
		"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.ConfigMapList",
		"io.k8s.api.core.v1.Secret", "io.k8s.api.core.v1.SecretList",
		"io.k8s.api.core.v1.Node", "io.k8s.api.core.v1.NodeList",
		"io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.NamespaceList",
		"io.k8s.api.core.v1.Event", "io.k8s.api.core.v1.EventList",
		"io.k8s.api.core.v1.Service", "io.k8s.api.core.v1.ServiceList",
		"io.k8s.api.core.v1.ServiceAccount", "io.k8s.api.core.v1.ServiceAccountList",
	}},
	"apps": {"apis__apps__v1_openapi.json", []string{
		"io.k8s.api.apps.v1.Deployment", "io.k8s.api.apps.v1.DeploymentList",
		"io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.apps.v1.ReplicaSetList",
		"io.k8s.api.apps.v1.StatefulSet", "io.k8s.api.apps.v1.StatefulSetList",
		"io.k8s.api.apps.v1.DaemonSet", "io.k8s.api.apps.v1.DaemonSetList",
		"io.k8s.api.autoscaling.v1.Scale",
	}},
	// What programs write beside their work (leader election, event recorders).
	"coordination": {"apis__coordination.k8s.io__v1_openapi.json", []string{
		"io.k8s.api.coordination.v1.Lease", "io.k8s.api.coordination.v1.LeaseList",
	}},
	"events": {"apis__events.k8s.io__v1_openapi.json", []string{
		"io.k8s.api.events.v1.Event", "io.k8s.api.events.v1.EventList",
	}},
}

// The documents of the other group versions kube-apiserver serves by default: every kind
// in each is a root of `others`.
var others = []string{
	"apis__admissionregistration.k8s.io__v1_openapi.json",
	"apis__autoscaling__v1_openapi.json",
	"apis__autoscaling__v2_openapi.json",
	"apis__batch__v1_openapi.json",
	"apis__certificates.k8s.io__v1_openapi.json",
	"apis__discovery.k8s.io__v1_openapi.json",
	"apis__flowcontrol.apiserver.k8s.io__v1_openapi.json",
	"apis__networking.k8s.io__v1_openapi.json",
	"apis__node.k8s.io__v1_openapi.json",
	"apis__policy__v1_openapi.json",
	"apis__rbac.authorization.k8s.io__v1_openapi.json",
	"apis__resource.k8s.io__v1_openapi.json",
	"apis__scheduling.k8s.io__v1_openapi.json",
	"apis__storage.k8s.io__v1_openapi.json",
}

var reference = regexp.MustCompile(`"#/components/schemas/([^"]+)"`)

// A schema of a kind (or of a list of one): what the document's paths serve.
var kinds = regexp.MustCompile(`"x-kubernetes-group-version-kind"`)

// read returns the schemas of the document at path, by name.
func read(path string) (map[string]json.RawMessage, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var document struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(text, &document); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return document.Components.Schemas, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: openapischemas core|apps|coordination|events|others")
	}
	dir, err := exec.Command("go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		return fmt.Errorf("go list k8s.io/kubernetes: %w", err)
	}
	specs := filepath.Join(strings.TrimSpace(string(dir)), "api", "openapi-spec", "v3")
	all := map[string]json.RawMessage{}
	var roots []string
	if os.Args[1] == "others" {
		for _, file := range others {
			schemas, err := read(filepath.Join(specs, file))
			if err != nil {
				return err
			}
			for name, schema := range schemas {
				all[name] = schema
				if kinds.Match(schema) {
					roots = append(roots, name)
				}
			}
		}
	} else {
		group, ok := groups[os.Args[1]]
		if !ok {
			return fmt.Errorf("no group %q (core, apps, coordination, events or others)", os.Args[1])
		}
		if all, err = read(filepath.Join(specs, group.file)); err != nil {
			return err
		}
		roots = group.roots
	}
	path := specs
	kept := map[string]json.RawMessage{}
	pending := append([]string(nil), roots...)
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, done := kept[name]; done {
			continue
		}
		schema, ok := all[name]
		if !ok {
			return fmt.Errorf("%s has no schema %s", path, name)
		}
		kept[name] = schema
		for _, match := range reference.FindAllSubmatch(schema, -1) {
			pending = append(pending, string(match[1]))
		}
	}
	names := make([]string, 0, len(kept))
	for name := range kept {
		names = append(names, name)
	}
	sort.Strings(names)
	// One schema per line: a change upstream is a change of the lines it touches.
	out := os.Stdout
	fmt.Fprintln(out, "{")
	for i, name := range names {
		var value any
		if err := json.Unmarshal(kept[name], &value); err != nil {
			return err
		}
		var line bytes.Buffer
		encoder := json.NewEncoder(&line)
		encoder.SetEscapeHTML(false)
		if err := encoder.Encode(map[string]any{name: value}); err != nil {
			return err
		}
		// The entry without its map's braces and newline: `"name":{...}`.
		entry := line.Bytes()[1 : line.Len()-2]
		comma := ","
		if i == len(names)-1 {
			comma = ""
		}
		fmt.Fprintf(out, "%s%s\n", entry, comma)
	}
	fmt.Fprintln(out, "}")
	return nil
}
