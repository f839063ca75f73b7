package main

import (
	"slices"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func serverInputs() resource.PropertyMap {
	return resource.PropertyMap{
		"name":        strProp("local-x86-1"),
		"serverType":  strProp("cx23"),
		"image":       strProp("ubuntu-24.04"),
		"location":    strProp("fsn1"),
		"sshKeys":     strsProp([]string{"local-demo"}),
		"firewallIds": intsProp([]int64{7, 3}),
		"userData":    resource.MakeSecret(strProp("#cloud-config\n")),
		"labels":      strMapProp(map[string]string{"orca": "pool"}),
	}
}

// The state a create of serverInputs leaves (as serverState builds it).
func serverStateOf(in resource.PropertyMap) resource.PropertyMap {
	st := copyMap(in)
	st["userData"] = hashedUserData(in["userData"])
	st["firewallIds"] = intsProp([]int64{3, 7})
	st["status"] = strProp("running")
	st["backups"] = boolProp(false)
	return st
}

func diffOf(olds, news resource.PropertyMap) *pulumirpc.DiffResponse {
	return serverSpec.diff(view(revealMap(olds)), view(revealMap(news)), nil)
}

func TestServerNoDiffAgainstOwnState(t *testing.T) {
	in := serverInputs()
	if d := diffOf(serverStateOf(in), in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("want no diff, got %v", d.Diffs)
	}
	// absent optional computed inputs do not diff either
	delete(in, "location")
	delete(in, "firewallIds")
	if d := diffOf(serverStateOf(serverInputs()), in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("want no diff, got %v", d.Diffs)
	}
}

func TestServerReplacesAndUpdates(t *testing.T) {
	cases := map[string]struct {
		key     resource.PropertyKey
		value   resource.PropertyValue
		replace bool
	}{
		"user data":   {"userData", resource.MakeSecret(strProp("#cloud-config\npackages: [jq]\n")), true},
		"server type": {"serverType", strProp("cx33"), false},
		"image":       {"image", strProp("debian-12"), true},
		"ssh keys":    {"sshKeys", strsProp([]string{"other"}), true},
		"name":        {"name", strProp("renamed"), false},
		"labels":      {"labels", strMapProp(map[string]string{"orca": "other"}), false},
		"firewalls":   {"firewallIds", intsProp([]int64{3}), false},
		"unknown":     {"labels", unknown(), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			olds := serverStateOf(serverInputs())
			news := serverInputs()
			news[c.key] = c.value
			d := diffOf(olds, news)
			if !slices.Equal(d.Diffs, []string{string(c.key)}) {
				t.Fatalf("diffs %v, want [%s]", d.Diffs, c.key)
			}
			if got := len(d.Replaces) > 0; got != c.replace {
				t.Fatalf("replace %v, want %v", got, c.replace)
			}
			if c.replace && !d.DeleteBeforeReplace {
				t.Fatalf("a replacement keeping the name must delete first")
			}
		})
	}
}

func TestUserDataStaysSecretAndHashed(t *testing.T) {
	v := hashedUserData(strProp("#cloud-config\n"))
	if !v.IsSecret() || v.SecretValue().Element.StringValue() != userDataHash("#cloud-config\n") {
		t.Fatalf("got %v", v)
	}
}

func TestRulesCompareAsSets(t *testing.T) {
	a := []rule{
		{direction: "in", protocol: "tcp", port: "22", sourceIPs: []string{"0.0.0.0/0", "::/0"}},
		{direction: "in", protocol: "icmp", sourceIPs: []string{"::/0", "0.0.0.0/0"}},
	}
	b := []rule{
		{direction: "in", protocol: "icmp", sourceIPs: []string{"0.0.0.0/0", "0::0/0"}},
		{direction: "in", protocol: "tcp", port: "22", sourceIPs: []string{"::/0", "0.0.0.0/0"}},
	}
	if !rulesEqual(a, b) {
		t.Fatal("same rules in another order should be equal")
	}
	b[1].port = "23"
	if rulesEqual(a, b) {
		t.Fatal("a different port should differ")
	}
}

func TestCheckRefusesWhatItDoesNotCover(t *testing.T) {
	news := serverInputs()
	news["networks"] = resource.NewArrayProperty(nil)
	news["backups"] = boolProp(true)
	failures := serverSpec.checkTypes(view(revealMap(news)))
	var props []string
	for _, f := range failures {
		props = append(props, f.Property)
	}
	slices.Sort(props)
	if !slices.Equal(props, []string{"backups", "networks"}) {
		t.Fatalf("failures on %v", props)
	}
	rules := resource.NewArrayProperty([]resource.PropertyValue{rule{direction: "in", protocol: "tcp"}.prop()})
	if f := checkRules(rules); len(f) != 0 { // the port and addresses it lacks meet the API
		t.Fatalf("want no rule failures at Check, got %v", f)
	}
}

func TestSchemaIsJSON(t *testing.T) {
	if _, err := schemaJSON(); err != nil {
		t.Fatal(err)
	}
}
