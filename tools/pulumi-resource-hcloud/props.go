package main

// Property plumbing shared by the resources: the wire format (structpb <-> PropertyMap), a
// declarative description of each resource's properties (used by Check, Diff and GetSchema),
// and small typed accessors over a PropertyMap whose secrets have been revealed.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
)

// unmarshal reads a property struct from the engine, keeping unknowns and secrets as such.
func unmarshal(s *structpb.Struct, label string) (resource.PropertyMap, error) {
	if s == nil {
		return resource.PropertyMap{}, nil
	}
	return plugin.UnmarshalProperties(s, plugin.MarshalOptions{
		Label:            label,
		KeepUnknowns:     true,
		KeepSecrets:      true,
		SkipNulls:        true,
		SkipInternalKeys: true,
	})
}

// marshal writes a property map for the engine, keeping unknowns and secrets as such.
func marshal(m resource.PropertyMap, label string) (*structpb.Struct, error) {
	return plugin.MarshalProperties(m, plugin.MarshalOptions{
		Label:        label,
		KeepUnknowns: true,
		KeepSecrets:  true,
		SkipNulls:    true,
	})
}

// reveal returns v with every secret replaced by its value (unknowns stay unknown).
func reveal(v resource.PropertyValue) resource.PropertyValue {
	switch {
	case v.IsSecret():
		return reveal(v.SecretValue().Element)
	case v.IsArray():
		in := v.ArrayValue()
		out := make([]resource.PropertyValue, len(in))
		for i, e := range in {
			out[i] = reveal(e)
		}
		return resource.NewArrayProperty(out)
	case v.IsObject():
		return resource.NewObjectProperty(revealMap(v.ObjectValue()))
	case v.IsOutput():
		o := v.OutputValue()
		if !o.Known {
			return resource.MakeComputed(resource.NewStringProperty(""))
		}
		return reveal(o.Element)
	}
	return v
}

func revealMap(m resource.PropertyMap) resource.PropertyMap {
	out := make(resource.PropertyMap, len(m))
	for k, v := range m {
		if v.IsNull() {
			continue
		}
		out[k] = reveal(v)
	}
	return out
}

// secret wraps v as a secret unless it already is one (or is unknown, or null).
func secret(v resource.PropertyValue) resource.PropertyValue {
	if v.IsSecret() || v.IsNull() {
		return v
	}
	return resource.MakeSecret(v)
}

func unknown() resource.PropertyValue {
	return resource.MakeComputed(resource.NewStringProperty(""))
}

// --- typed accessors over a revealed map ------------------------------------------------------

// view reads a revealed property map; absent, null and unknown values read as zero values.
type view resource.PropertyMap

func (v view) get(k string) (resource.PropertyValue, bool) {
	p, ok := v[resource.PropertyKey(k)]
	if !ok || p.IsNull() {
		return resource.PropertyValue{}, false
	}
	return p, true
}

func (v view) has(k string) bool { _, ok := v.get(k); return ok }

func (v view) isUnknown(k string) bool {
	p, ok := v.get(k)
	return ok && p.ContainsUnknowns()
}

// known: present, and known all through.
func (v view) known(k string) bool {
	p, ok := v.get(k)
	return ok && !p.ContainsUnknowns()
}

func (v view) str(k string) string {
	if p, ok := v.get(k); ok && p.IsString() {
		return p.StringValue()
	}
	return ""
}

func (v view) boolean(k string) bool {
	if p, ok := v.get(k); ok && p.IsBool() {
		return p.BoolValue()
	}
	return false
}

func (v view) number(k string) (int64, bool) {
	if p, ok := v.get(k); ok && p.IsNumber() {
		return int64(p.NumberValue()), true
	}
	return 0, false
}

func (v view) strs(k string) []string {
	out := []string{}
	if p, ok := v.get(k); ok && p.IsArray() {
		for _, e := range p.ArrayValue() {
			if e.IsString() {
				out = append(out, e.StringValue())
			}
		}
	}
	return out
}

func (v view) ints(k string) []int64 {
	out := []int64{}
	if p, ok := v.get(k); ok && p.IsArray() {
		for _, e := range p.ArrayValue() {
			if e.IsNumber() {
				out = append(out, int64(e.NumberValue()))
			}
		}
	}
	return out
}

func (v view) strMap(k string) map[string]string {
	out := map[string]string{}
	if p, ok := v.get(k); ok && p.IsObject() {
		for mk, mv := range p.ObjectValue() {
			if mv.IsString() {
				out[string(mk)] = mv.StringValue()
			}
		}
	}
	return out
}

func (v view) objects(k string) []view {
	var out []view
	if p, ok := v.get(k); ok && p.IsArray() {
		for _, e := range p.ArrayValue() {
			if e.IsObject() {
				out = append(out, view(e.ObjectValue()))
			}
		}
	}
	return out
}

// --- constructors ---------------------------------------------------------------------------------

func strProp(s string) resource.PropertyValue { return resource.NewStringProperty(s) }
func numProp(n int64) resource.PropertyValue  { return resource.NewNumberProperty(float64(n)) }
func boolProp(b bool) resource.PropertyValue  { return resource.NewBoolProperty(b) }

func strsProp(ss []string) resource.PropertyValue {
	out := make([]resource.PropertyValue, len(ss))
	for i, s := range ss {
		out[i] = strProp(s)
	}
	return resource.NewArrayProperty(out)
}

func intsProp(ns []int64) resource.PropertyValue {
	out := make([]resource.PropertyValue, len(ns))
	for i, n := range ns {
		out[i] = numProp(n)
	}
	return resource.NewArrayProperty(out)
}

func strMapProp(m map[string]string) resource.PropertyValue {
	out := resource.PropertyMap{}
	for k, v := range m {
		out[resource.PropertyKey(k)] = strProp(v)
	}
	return resource.NewObjectProperty(out)
}

// --- declarative property specs -------------------------------------------------------------

type kind int

const (
	kString kind = iota
	kBool
	kInt
	kStringList
	kIntList
	kStringMap
	kRuleList // a list of firewall rules (see firewall.go)
)

// prop describes one property of a resource the way pulumi-hcloud 1.43.3 names it.
type prop struct {
	name     string
	kind     kind
	input    bool // accepted as an input
	output   bool // part of the resource's state
	required bool // a required input
	computed bool // an optional input the provider fills in when absent: no diff when absent
	replace  bool // a change replaces the resource
	secret   bool // always a secret, in inputs and outputs
	// onlyDefault: accepted only at its zero value (false); the stand-in can't do anything else.
	onlyDefault bool
	// equal, when set, decides whether the old state value and the new input are the same.
	equal func(old, new resource.PropertyValue, news view) bool
	desc  string
}

type resourceSpec struct {
	token string
	props []prop
	// unsupported inputs of the official provider this stand-in rejects with a clear message.
	unsupported []string
}

func (r *resourceSpec) prop(name string) *prop {
	for i := range r.props {
		if r.props[i].name == name {
			return &r.props[i]
		}
	}
	return nil
}

const standIn = "the project's stand-in hcloud provider (tools/pulumi-resource-hcloud)"

func failure(property, format string, args ...any) *pulumirpc.CheckFailure {
	return &pulumirpc.CheckFailure{Property: property, Reason: fmt.Sprintf(format, args...)}
}

// checkTypes validates each input against its spec: known inputs, types, required ones.
func (r *resourceSpec) checkTypes(news view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	keys := make([]string, 0, len(news))
	for k := range news {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := news.get(k)
		if !ok {
			continue
		}
		p := r.prop(k)
		if p == nil || !p.input {
			if slices.Contains(r.unsupported, k) {
				failures = append(failures, failure(k,
					"property %q is not supported by %s; it covers only what this project's program uses",
					k, standIn))
			} else {
				failures = append(failures, failure(k, "unknown property %q", k))
			}
			continue
		}
		if v.ContainsUnknowns() {
			continue
		}
		if msg := checkKind(p.kind, v); msg != "" {
			failures = append(failures, failure(k, "property %q %s", k, msg))
			continue
		}
		if p.onlyDefault && v.IsBool() && v.BoolValue() {
			failures = append(failures, failure(k,
				"%s=true is not supported by %s (only false)", k, standIn))
		}
	}
	for _, p := range r.props {
		if p.required && !news.has(p.name) {
			failures = append(failures, failure(p.name, "missing required property %q", p.name))
		}
	}
	return failures
}

func checkKind(k kind, v resource.PropertyValue) string {
	switch k {
	case kString:
		if !v.IsString() {
			return "must be a string"
		}
	case kBool:
		if !v.IsBool() {
			return "must be a boolean"
		}
	case kInt:
		if !v.IsNumber() || v.NumberValue() != float64(int64(v.NumberValue())) {
			return "must be an integer"
		}
	case kStringList, kIntList:
		if !v.IsArray() {
			return "must be a list"
		}
		for i, e := range v.ArrayValue() {
			if e.ContainsUnknowns() {
				continue
			}
			want := kString
			if k == kIntList {
				want = kInt
			}
			if msg := checkKind(want, e); msg != "" {
				return fmt.Sprintf("item %d %s", i, msg)
			}
		}
	case kStringMap:
		if !v.IsObject() {
			return "must be a map of strings"
		}
		for mk, mv := range v.ObjectValue() {
			if !mv.ContainsUnknowns() && !mv.IsString() {
				return fmt.Sprintf("value of %q must be a string", mk)
			}
		}
	case kRuleList:
		if !v.IsArray() {
			return "must be a list of rules"
		}
		for i, e := range v.ArrayValue() {
			if !e.ContainsUnknowns() && !e.IsObject() {
				return fmt.Sprintf("item %d must be an object", i)
			}
		}
	}
	return ""
}

// zero is the value an absent input stands for, for comparisons.
func zero(k kind) resource.PropertyValue {
	switch k {
	case kBool:
		return boolProp(false)
	case kInt:
		return numProp(0)
	case kStringList, kIntList, kRuleList:
		return resource.NewArrayProperty(nil)
	case kStringMap:
		return resource.NewObjectProperty(resource.PropertyMap{})
	}
	return strProp("")
}

func valueOr(v view, p *prop) resource.PropertyValue {
	if x, ok := v.get(p.name); ok {
		return x
	}
	return zero(p.kind)
}

// equalValues compares two revealed, known values; empty lists and maps equal absent ones.
func equalValues(a, b resource.PropertyValue) bool {
	if a.IsArray() && b.IsArray() && len(a.ArrayValue()) == 0 && len(b.ArrayValue()) == 0 {
		return true
	}
	if a.IsObject() && b.IsObject() && len(a.ObjectValue()) == 0 && len(b.ObjectValue()) == 0 {
		return true
	}
	return a.DeepEquals(b)
}

// stringOr is a string value's text, or "" for anything else (null, or an unknown left in an
// old state), so comparisons never panic on a value of another kind.
func stringOr(v resource.PropertyValue) string {
	if v.IsString() {
		return v.StringValue()
	}
	return ""
}

// diff compares new inputs with the old state, property by property, as the spec says.
func (r *resourceSpec) diff(olds, news view, ignore []string) *pulumirpc.DiffResponse {
	resp := &pulumirpc.DiffResponse{
		Changes:         pulumirpc.DiffResponse_DIFF_NONE,
		DetailedDiff:    map[string]*pulumirpc.PropertyDiff{},
		HasDetailedDiff: true,
	}
	for i := range r.props {
		p := &r.props[i]
		if !p.input || slices.Contains(ignore, p.name) {
			continue
		}
		newV, newOK := news.get(p.name)
		oldV, oldOK := olds.get(p.name)
		changed := false
		switch {
		case newOK && newV.ContainsUnknowns():
			changed = true
		case !newOK && p.computed:
			continue
		case p.equal != nil:
			changed = !p.equal(valueOr(olds, p), valueOr(news, p), news)
		default:
			changed = !equalValues(valueOr(olds, p), valueOr(news, p))
		}
		if !changed {
			continue
		}
		var k pulumirpc.PropertyDiff_Kind
		switch {
		case !oldOK || (oldV.IsString() && oldV.StringValue() == ""):
			k = pulumirpc.PropertyDiff_ADD
		case !newOK:
			k = pulumirpc.PropertyDiff_DELETE
		default:
			k = pulumirpc.PropertyDiff_UPDATE
		}
		if p.replace {
			k += 1 // ADD_REPLACE, DELETE_REPLACE, UPDATE_REPLACE follow their plain kinds
			resp.Replaces = append(resp.Replaces, p.name)
		}
		resp.DetailedDiff[p.name] = &pulumirpc.PropertyDiff{Kind: k}
		resp.Diffs = append(resp.Diffs, p.name)
	}
	if len(resp.Diffs) > 0 {
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	// A Hetzner name is unique per project: a replacement that keeps the name has to delete
	// the old resource first (as the bridged provider decides for user-given names).
	if len(resp.Replaces) > 0 && news.has("name") && !news.isUnknown("name") &&
		news.str("name") == olds.str("name") {
		resp.DeleteBeforeReplace = true
	}
	return resp
}

// inputsFromState builds the inputs a refresh or import reports: the old inputs, with each
// in-place-updatable input the resource has taken from the new state.
func (r *resourceSpec) inputsFromState(oldInputs, state resource.PropertyMap) resource.PropertyMap {
	out := resource.PropertyMap{}
	for _, p := range r.props {
		k := resource.PropertyKey(p.name)
		if !p.input {
			continue
		}
		old, hadOld := oldInputs[k]
		cur, hasCur := state[k]
		switch {
		case hadOld && !old.IsNull():
			if hasCur && p.output && !p.secret && !cur.IsNull() {
				out[k] = cur
			} else {
				out[k] = old
			}
		case len(oldInputs) == 0 && hasCur && !cur.IsNull() && p.output && !p.secret && !p.computed &&
			!equalValues(reveal(cur), zero(p.kind)):
			// an import: what the state says, for the inputs that matter
			out[k] = cur
		}
	}
	return out
}

func sortedKeys[M ~map[K]V, K ~string, V any](m M) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
