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
			return unknown()
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

// secret wraps v as a secret unless it already is one (or is null).
func secret(v resource.PropertyValue) resource.PropertyValue {
	if v.IsSecret() || v.IsNull() {
		return v
	}
	return resource.MakeSecret(v)
}

// secretLike wraps v as a secret when like is one: a value derived from a secret input stays
// secret (as the engine would mark it anyway, by its key).
func secretLike(v, like resource.PropertyValue) resource.PropertyValue {
	if like.IsSecret() {
		return secret(v)
	}
	return v
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

// optStr is a string property, or null for "" (an attribute the API did not report).
func optStr(s string) resource.PropertyValue {
	if s == "" {
		return resource.NewNullProperty()
	}
	return strProp(s)
}

func strsProp(ss []string) resource.PropertyValue {
	out := make([]resource.PropertyValue, len(ss))
	for i, s := range ss {
		out[i] = strProp(s)
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
	kStringList // ordered
	kStringSet  // a set: order and duplicates do not matter
	kStringMap
	kObjectList // a list of objects, each described by the prop's fields
	kObject     // one object described by the prop's fields (a terraform block of MaxItems 1)
)

// prop describes one property of a resource the way pulumi-aws names it.
type prop struct {
	name     string
	kind     kind
	input    bool // accepted as an input
	output   bool // part of the resource's state
	required bool // a required input
	computed bool // an optional input the provider fills in when absent: no diff when absent
	replace  bool // a change replaces the resource
	// def is the default the official provider applies in Check when the input is absent.
	def *resource.PropertyValue
	// equal, when set, decides whether the old state value and the new input are the same.
	equal func(old, new resource.PropertyValue, news view) bool
	// replaceIf, when set, makes a change of this property replace the resource when it
	// answers true (the terraform provider's CustomizeDiff ForceNewIf).
	replaceIf func(olds, news view) bool
	// fields describe the objects of a kObjectList or kObject.
	fields []prop
	// ref is the schema type token of a kObject.
	ref  string
	desc string
}

func defaultOf(v resource.PropertyValue) *resource.PropertyValue { return &v }

type resourceSpec struct {
	token string
	props []prop
	// unsupported inputs of the official provider this stand-in rejects with a clear message.
	unsupported []string
	// keepInputs are inputs whose state value has another form (a hash, normalized JSON): a
	// refresh keeps the input as it was given.
	keepInputs []string
}

func (r *resourceSpec) prop(name string) *prop { return findProp(r.props, name) }

func findProp(props []prop, name string) *prop {
	for i := range props {
		if props[i].name == name {
			return &props[i]
		}
	}
	return nil
}

const standIn = "the project's stand-in aws provider (tools/pulumi-resource-aws)"

func failure(property, format string, args ...any) *pulumirpc.CheckFailure {
	return &pulumirpc.CheckFailure{Property: property, Reason: fmt.Sprintf(format, args...)}
}

func unsupportedFailure(path string) *pulumirpc.CheckFailure {
	return failure(path, "property %q is not supported by %s; it covers only what this project's program uses",
		path, standIn)
}

// checkTypes validates each input against its spec: known inputs, types, required ones.
func (r *resourceSpec) checkTypes(news view) []*pulumirpc.CheckFailure {
	return checkProps(r.props, r.unsupported, news, "")
}

func checkProps(props []prop, unsupported []string, news view, prefix string) []*pulumirpc.CheckFailure {
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
		path := prefix + k
		p := findProp(props, k)
		if p == nil || !p.input {
			if slices.Contains(unsupported, k) {
				failures = append(failures, unsupportedFailure(path))
			} else {
				failures = append(failures, failure(path, "unknown property %q", path))
			}
			continue
		}
		if v.ContainsUnknowns() && !v.IsArray() {
			continue
		}
		if msg := checkKind(p.kind, v); msg != "" {
			failures = append(failures, failure(path, "property %q %s", path, msg))
			continue
		}
		if p.kind == kObject {
			failures = append(failures, checkProps(p.fields, nil, view(v.ObjectValue()), path+".")...)
		}
		if p.kind == kObjectList {
			for i, e := range v.ArrayValue() {
				if e.IsObject() {
					failures = append(failures,
						checkProps(p.fields, nil, view(e.ObjectValue()), fmt.Sprintf("%s[%d].", path, i))...)
				}
			}
		}
	}
	for _, p := range props {
		if p.required && !news.has(p.name) {
			failures = append(failures, failure(prefix+p.name, "missing required property %q", prefix+p.name))
		}
	}
	return failures
}

func checkKind(k kind, v resource.PropertyValue) string {
	if v.ContainsUnknowns() && !v.IsArray() && !v.IsObject() {
		return ""
	}
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
	case kStringList, kStringSet:
		if !v.IsArray() {
			return "must be a list"
		}
		for i, e := range v.ArrayValue() {
			if !e.ContainsUnknowns() && !e.IsString() {
				return fmt.Sprintf("item %d must be a string", i)
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
	case kObject:
		if !v.IsObject() {
			return "must be an object"
		}
	case kObjectList:
		if !v.IsArray() {
			return "must be a list of objects"
		}
		for i, e := range v.ArrayValue() {
			if !e.ContainsUnknowns() && !e.IsObject() {
				return fmt.Sprintf("item %d must be an object", i)
			}
		}
	}
	return ""
}

// applyDefaults sets each absent input that has a default, as the official provider's Check does.
func (r *resourceSpec) applyDefaults(m resource.PropertyMap) {
	for _, p := range r.props {
		k := resource.PropertyKey(p.name)
		if v, ok := m[k]; p.def != nil && (!ok || v.IsNull()) {
			m[k] = *p.def
		}
	}
}

// zero is the value an absent input stands for, for comparisons.
func zero(k kind) resource.PropertyValue {
	switch k {
	case kBool:
		return boolProp(false)
	case kInt:
		return numProp(0)
	case kStringList, kStringSet, kObjectList:
		return resource.NewArrayProperty(nil)
	case kStringMap, kObject:
		return resource.NewObjectProperty(resource.PropertyMap{})
	}
	return strProp("")
}

// givenEqual: every field the new input gives (recursively) is what the old state has; fields
// it leaves out are the provider's to fill (terraform's Optional and Computed block fields).
func givenEqual(old, new resource.PropertyValue, _ view) bool {
	if !new.IsObject() || !old.IsObject() {
		return equalValues(old, new)
	}
	olds := old.ObjectValue()
	for k, n := range new.ObjectValue() {
		if n.IsNull() {
			continue
		}
		o, ok := olds[k]
		if !ok || !givenEqual(o, n, nil) {
			return false
		}
	}
	return true
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

// stringSet is the sorted, de-duplicated strings of a list value.
func stringSet(v resource.PropertyValue) []string {
	var out []string
	if v.IsArray() {
		for _, e := range v.ArrayValue() {
			if e.IsString() {
				out = append(out, e.StringValue())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stringOr is a string value's text, or "" for anything else.
func stringOr(v resource.PropertyValue) string {
	if v.IsString() {
		return v.StringValue()
	}
	return ""
}

// changed reports whether input p differs between the old state and the new inputs.
func (p *prop) changed(olds, news view) bool {
	newV, newOK := news.get(p.name)
	switch {
	case newOK && newV.ContainsUnknowns():
		return true
	case !newOK && p.computed:
		return false
	case p.equal != nil:
		return !p.equal(valueOr(olds, p), valueOr(news, p), news)
	case p.kind == kStringSet:
		return !slices.Equal(stringSet(valueOr(olds, p)), stringSet(valueOr(news, p)))
	}
	return !equalValues(valueOr(olds, p), valueOr(news, p))
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
		if !p.input || slices.Contains(ignore, p.name) || !p.changed(olds, news) {
			continue
		}
		_, newOK := news.get(p.name)
		oldV, oldOK := olds.get(p.name)
		var k pulumirpc.PropertyDiff_Kind
		switch {
		case !oldOK || (oldV.IsString() && oldV.StringValue() == ""):
			k = pulumirpc.PropertyDiff_ADD
		case !newOK:
			k = pulumirpc.PropertyDiff_DELETE
		default:
			k = pulumirpc.PropertyDiff_UPDATE
		}
		if p.replace || (p.replaceIf != nil && p.replaceIf(olds, news)) {
			k++ // ADD_REPLACE, DELETE_REPLACE, UPDATE_REPLACE follow their plain kinds
			resp.Replaces = append(resp.Replaces, p.name)
		}
		resp.DetailedDiff[p.name] = &pulumirpc.PropertyDiff{Kind: k}
		resp.Diffs = append(resp.Diffs, p.name)
	}
	if len(resp.Diffs) > 0 {
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	return resp
}

// markReplace turns the change of property name in resp into a replacement.
func markReplace(resp *pulumirpc.DiffResponse, name string) {
	d, ok := resp.DetailedDiff[name]
	if !ok || slices.Contains(resp.Replaces, name) {
		return
	}
	d.Kind++
	resp.Replaces = append(resp.Replaces, name)
}

// inputsFromState builds the inputs a refresh or import reports: the old inputs, with each
// input the resource reports in its state taken from the new state (secrets and values that
// the state only keeps in another form stay as they were).
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
			if hasCur && p.output && !cur.IsNull() && !old.IsSecret() && !slices.Contains(r.keepInputs, p.name) {
				out[k] = cur
			} else {
				out[k] = old
			}
		case len(oldInputs) == 0 && hasCur && !cur.IsNull() && p.output && !p.computed &&
			!equalValues(reveal(cur), zero(p.kind)):
			// an import: what the state says, for the inputs that matter
			out[k] = cur
		}
	}
	return out
}

// copyMap is a shallow copy of a property map.
func copyMap(m resource.PropertyMap) resource.PropertyMap {
	out := make(resource.PropertyMap, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withDefaults sets each key of defaults that m lacks and returns m (a create's preview: the
// inputs, plus what the provider fills in or will know only then).
func withDefaults(m, defaults resource.PropertyMap) resource.PropertyMap {
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// updatePreview is what an update reports in preview: the old state, with each input the update
// changes in place (inPlace) as news has it.
func updatePreview(olds, news resource.PropertyMap, inPlace ...resource.PropertyKey) resource.PropertyMap {
	out := copyMap(olds)
	for _, k := range inPlace {
		if v, ok := news[k]; ok {
			out[k] = v
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
