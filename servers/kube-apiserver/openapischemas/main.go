// Command openapischemas prints the OpenAPI v3 schemas the built-in apiserver serves for
// a group (proto/openapi/), taken from the document kube-apiserver serves for it: the
// schemas of the kinds the built-in apiserver has in that group (and their lists), with
// every schema they refer to, unchanged. kubectl explain reads them.
//
//	go run ./openapischemas core > ../../proto/openapi/api__v1.json
//	go run ./openapischemas apps > ../../proto/openapi/apis__apps__v1.json
//	go run ./openapischemas coordination > ../../proto/openapi/apis__coordination.k8s.io__v1.json
//	go run ./openapischemas events > ../../proto/openapi/apis__events.k8s.io__v1.json
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

var reference = regexp.MustCompile(`"#/components/schemas/([^"]+)"`)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: openapischemas core|apps|coordination|events")
	}
	group, ok := groups[os.Args[1]]
	if !ok {
		return fmt.Errorf("no group %q (core, apps, coordination or events)", os.Args[1])
	}
	dir, err := exec.Command("go", "list", "-mod=readonly", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		return fmt.Errorf("go list k8s.io/kubernetes: %w", err)
	}
	path := filepath.Join(strings.TrimSpace(string(dir)), "api", "openapi-spec", "v3", group.file)
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var document struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(text, &document); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	all := document.Components.Schemas
	kept := map[string]json.RawMessage{}
	pending := append([]string(nil), group.roots...)
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
