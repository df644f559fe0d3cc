package pluginv1

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// shape is a protocol's wire-relevant facts, one a line: services and
// their methods (with streaming), messages and their fields (type, name,
// number), enums and their values.
func protoShape(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	var scope string
	service := regexp.MustCompile(`^service (\w+) \{`)
	message := regexp.MustCompile(`^message (\w+) \{`)
	enum := regexp.MustCompile(`^enum (\w+) \{`)
	rpc := regexp.MustCompile(`^rpc (\w+)\((stream )?(\w+)\) returns \((stream )?(\w+)\);`)
	field := regexp.MustCompile(`^(repeated )?(map<\w+, ?\w+>|\w+) (\w+) = (\d+);`)
	value := regexp.MustCompile(`^(\w+) = (\d+);`)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "}":
			scope = ""
		case service.MatchString(line):
			scope = "service " + service.FindStringSubmatch(line)[1]
			out = append(out, scope)
		case message.MatchString(line):
			scope = "message " + message.FindStringSubmatch(line)[1]
			out = append(out, scope)
		case enum.MatchString(line):
			scope = "enum " + enum.FindStringSubmatch(line)[1]
			out = append(out, scope)
		case rpc.MatchString(line):
			m := rpc.FindStringSubmatch(line)
			out = append(out, fmt.Sprintf("%s rpc %s(%s%s) %s%s", scope, m[1], m[2], m[3], m[4], m[5]))
		case field.MatchString(line):
			m := field.FindStringSubmatch(line)
			out = append(out, fmt.Sprintf("%s field %s%s %s = %s", scope, m[1], strings.ReplaceAll(m[2], " ", ""), m[3], m[4]))
		case value.MatchString(line) && strings.HasPrefix(scope, "enum "):
			m := value.FindStringSubmatch(line)
			out = append(out, fmt.Sprintf("%s value %s = %s", scope, m[1], m[2]))
		case strings.HasPrefix(line, "package "):
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// descriptorShape is the same facts read from the generated code.
func descriptorShape() []string {
	fd := File_plugin_proto
	out := []string{"package " + string(fd.Package()) + ";"}
	kind := func(f protoreflect.FieldDescriptor) string {
		if f.IsMap() {
			return fmt.Sprintf("map<%s,%s>", kindName(f.MapKey()), kindName(f.MapValue()))
		}
		s := kindName(f)
		if f.Cardinality() == protoreflect.Repeated {
			s = "repeated " + s
		}
		return s
	}
	for i := 0; i < fd.Services().Len(); i++ {
		s := fd.Services().Get(i)
		scope := "service " + string(s.Name())
		out = append(out, scope)
		for j := 0; j < s.Methods().Len(); j++ {
			m := s.Methods().Get(j)
			in, res := "", ""
			if m.IsStreamingClient() {
				in = "stream "
			}
			if m.IsStreamingServer() {
				res = "stream "
			}
			out = append(out, fmt.Sprintf("%s rpc %s(%s%s) %s%s", scope, m.Name(), in, m.Input().Name(), res, m.Output().Name()))
		}
	}
	for i := 0; i < fd.Messages().Len(); i++ {
		m := fd.Messages().Get(i)
		scope := "message " + string(m.Name())
		out = append(out, scope)
		for j := 0; j < m.Fields().Len(); j++ {
			f := m.Fields().Get(j)
			out = append(out, fmt.Sprintf("%s field %s %s = %d", scope, kind(f), f.Name(), f.Number()))
		}
	}
	for i := 0; i < fd.Enums().Len(); i++ {
		e := fd.Enums().Get(i)
		scope := "enum " + string(e.Name())
		out = append(out, scope)
		for j := 0; j < e.Values().Len(); j++ {
			v := e.Values().Get(j)
			out = append(out, fmt.Sprintf("%s value %s = %d", scope, v.Name(), v.Number()))
		}
	}
	slices.Sort(out)
	return out
}

func kindName(f protoreflect.FieldDescriptor) string {
	switch f.Kind() {
	case protoreflect.MessageKind:
		return string(f.Message().Name())
	case protoreflect.EnumKind:
		return string(f.Enum().Name())
	}
	return f.Kind().String()
}

// The generated code is plugin.proto's (regenerate with go generate when
// this fails).
func TestGeneratedMatchesProto(t *testing.T) {
	b, err := os.ReadFile("plugin.proto")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := descriptorShape(), protoShape(t, string(b)); !slices.Equal(got, want) {
		t.Errorf("generated code and plugin.proto differ (go generate ./internal/plugin/pluginv1):\n%s", diff(got, want))
	}
}

// Our protocol is AWF's on the wire: the same package, services, methods,
// messages, field names, types and numbers, enum values.
func TestProtocolIsAWFs(t *testing.T) {
	src := os.Getenv("REEL_AWF_SRC")
	if src == "" {
		t.Skip("REEL_AWF_SRC is not set: it names a checkout of github.com/awf-project/cli (at 9971294) whose proto/plugin/v1/plugin.proto the protocol is compared with")
	}
	b, err := os.ReadFile(filepath.Join(src, "proto", "plugin", "v1", "plugin.proto"))
	if err != nil {
		t.Fatal(err)
	}
	awf := protoShape(t, string(b))
	ours := descriptorShape()
	if !slices.Equal(ours, awf) {
		t.Errorf("the protocol differs from AWF's:\n%s", diff(ours, awf))
	}
	t.Logf("%d services, methods, messages, fields and enum values match AWF's", len(awf))
}

func diff(got, want []string) string {
	var b strings.Builder
	for _, s := range got {
		if !slices.Contains(want, s) {
			fmt.Fprintf(&b, "+ %s\n", s)
		}
	}
	for _, s := range want {
		if !slices.Contains(got, s) {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}
