package main

// Behaviours decided from the inputs alone: no API involved.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func instanceInputs() resource.PropertyMap {
	return resource.PropertyMap{
		"ami":                     strProp("ami-1"),
		"instanceType":            strProp("t3.small"),
		"subnetId":                strProp("subnet-1"),
		"vpcSecurityGroupIds":     strsProp([]string{"sg-2", "sg-1"}),
		"iamInstanceProfile":      strProp("workers"),
		"userData":                resource.MakeSecret(strProp("#cloud-config\n")),
		"userDataReplaceOnChange": boolProp(false),
		"tags":                    strMapProp(map[string]string{"Name": "x-1", "orca": "pool"}),
		"volumeTags":              strMapProp(map[string]string{"Name": "x-1"}),
	}
}

// The state a create of instanceInputs leaves.
func instanceStateOfInputs(in resource.PropertyMap) resource.PropertyMap {
	st := copyMap(in)
	st["userData"] = hashedUserData(in["userData"])
	st["vpcSecurityGroupIds"] = strsProp([]string{"sg-1", "sg-2"})
	st["instanceState"] = strProp("running")
	st["tagsAll"] = in["tags"]
	return st
}

func instanceDiff(olds, news resource.PropertyMap) *pulumirpc.DiffResponse {
	return instanceResource{}.diff(context.Background(), nil, view(revealMap(olds)), view(revealMap(news)), nil)
}

func TestInstanceNoDiffAgainstItsOwnState(t *testing.T) {
	in := instanceInputs()
	if d := instanceDiff(instanceStateOfInputs(in), in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("want no diff, got %v", d.Diffs)
	}
}

func TestInstanceReplacesAndUpdatesAsThePluginDoes(t *testing.T) {
	cases := map[string]struct {
		key     resource.PropertyKey
		value   resource.PropertyValue
		replace bool
	}{
		"ami":            {"ami", strProp("ami-2"), true},
		"subnet":         {"subnetId", strProp("subnet-2"), true},
		"instance type":  {"instanceType", strProp("t3.large"), false},
		"user data":      {"userData", resource.MakeSecret(strProp("#cloud-config\npackages: [jq]\n")), false},
		"security group": {"vpcSecurityGroupIds", strsProp([]string{"sg-3"}), false},
		"profile":        {"iamInstanceProfile", strProp("other"), false},
		"tags":           {"tags", strMapProp(map[string]string{"Name": "x-1"}), false},
		"volume tags":    {"volumeTags", strMapProp(nil), false},
		"unknown ami":    {"ami", unknown(), true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			olds := instanceStateOfInputs(instanceInputs())
			news := instanceInputs()
			news[c.key] = c.value
			d := instanceDiff(olds, news)
			if !slices.Equal(d.Diffs, []string{string(c.key)}) {
				t.Fatalf("diffs %v, want [%s]", d.Diffs, c.key)
			}
			if got := len(d.Replaces) > 0; got != c.replace {
				t.Fatalf("replace %v, want %v", got, c.replace)
			}
			if d.DeleteBeforeReplace {
				t.Fatal("the provider never asks for delete-before-replace; the program does")
			}
		})
	}
}

func TestUserDataChangeReplacesOnlyWithReplaceOnChange(t *testing.T) {
	olds := instanceStateOfInputs(instanceInputs())
	news := instanceInputs()
	news["userData"] = strProp("#!/bin/sh\n")
	news["userDataReplaceOnChange"] = boolProp(true)
	d := instanceDiff(olds, news)
	if !slices.Equal(d.Replaces, []string{"userData"}) {
		t.Fatalf("replaces %v", d.Replaces)
	}
}

func TestIgnoredAmiDoesNotDiff(t *testing.T) {
	olds := instanceStateOfInputs(instanceInputs())
	news := instanceInputs()
	news["ami"] = strProp("ami-newer")
	d := instanceResource{}.diff(context.Background(), nil, view(revealMap(olds)), view(revealMap(news)), []string{"ami"})
	if d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("diffs %v", d.Diffs)
	}
}

func TestUserDataIsHashedAsTheTerraformProviderHashesIt(t *testing.T) {
	// sha1("#cloud-config\n") in hex; base64 input hashes its decoded bytes.
	const want = "c0af657a8122db11fb8541f90feab7871c2c3d71"
	if got := userDataHashSum("#cloud-config\n"); got != want {
		t.Fatalf("got %s", got)
	}
	if got := userDataHashSum("I2Nsb3VkLWNvbmZpZwo="); got != want {
		t.Fatalf("base64 of the same data: got %s", got)
	}
	v := hashedUserData(resource.MakeSecret(strProp("#cloud-config\n")))
	if !v.IsSecret() || v.SecretValue().Element.StringValue() != want {
		t.Fatalf("a secret input gives a secret hash, got %v", v)
	}
	if base64Once("I2Nsb3VkLWNvbmZpZwo=") != "I2Nsb3VkLWNvbmZpZwo=" || base64Once("#cloud-config\n") != "I2Nsb3VkLWNvbmZpZwo=" {
		t.Fatal("user data is base64-encoded once")
	}
	if !userDataEqual(strProp(emptyUserDataHash), strProp(""), nil) {
		t.Fatal("the hash of nothing equals no user data")
	}
}

func TestInstanceCheckAppliesDefaultsAndRefusesWhatItLacks(t *testing.T) {
	in := instanceInputs()
	delete(in, "userDataReplaceOnChange")
	checked, failures := instanceResource{}.check(nil, nil, in)
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	for _, k := range []resource.PropertyKey{"userDataReplaceOnChange", "getPasswordData", "forceDestroy"} {
		if v := checked[k]; !v.IsBool() || v.BoolValue() {
			t.Fatalf("%s defaults to false, got %v", k, v)
		}
	}
	in["launchTemplate"] = strProp("lt-1")
	in["userDataBase64"] = strProp("eA==")
	failures = instanceSpec.checkTypes(view(revealMap(in)))
	if len(failures) != 2 {
		t.Fatalf("want 2 failures, got %v", failures)
	}
	for _, f := range failures {
		if !strings.Contains(f.Reason, standIn) {
			t.Fatalf("the message names the stand-in: %s", f.Reason)
		}
	}
}

func TestProtocolsCompareByNumberOrName(t *testing.T) {
	for in, want := range map[string]string{"all": "-1", "-1": "-1", "6": "tcp", "TCP": "tcp", "58": "icmpv6", "50": "50"} {
		if got := protocolForValue(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func rule(protocol string, from, to int64, cidrs ...string) resource.PropertyValue {
	return resource.NewObjectProperty(resource.PropertyMap{
		"protocol": strProp(protocol), "fromPort": numProp(from), "toPort": numProp(to), "cidrBlocks": strsProp(cidrs),
	})
}

func TestRulesAreSets(t *testing.T) {
	a := resource.NewArrayProperty([]resource.PropertyValue{
		rule("tcp", 22, 22, "10.0.0.0/8", "192.168.0.0/16"), rule("all", 0, 0, "0.0.0.0/0")})
	b := resource.NewArrayProperty([]resource.PropertyValue{
		rule("-1", 0, 0, "0.0.0.0/0"), rule("6", 22, 22, "192.168.0.0/16", "10.0.0.0/8")})
	if !rulesPropEqual(a, b, nil) {
		t.Fatal("the same rules in another order and spelling are equal")
	}
	c := resource.NewArrayProperty([]resource.PropertyValue{rule("tcp", 22, 22, "10.0.0.0/8")})
	if rulesPropEqual(a, c, nil) {
		t.Fatal("other rules differ")
	}
}

func TestMatchRulesKeepsTheConfiguredFormAndSplitsMergedRules(t *testing.T) {
	local := []sgRule{
		{protocol: "all", cidrBlocks: []string{"0.0.0.0/0"}},
		{protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: []string{"10.0.0.0/8"}},
		{protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: []string{"192.168.0.0/16"}},
	}
	remote := []sgRule{
		{protocol: "-1", cidrBlocks: []string{"0.0.0.0/0"}},
		{protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: []string{"192.168.0.0/16", "10.0.0.0/8", "172.16.0.0/12"}},
	}
	got := matchRules(local, remote)
	if len(got) != 4 || got[0].protocol != "all" || got[3].cidrBlocks[0] != "172.16.0.0/12" {
		t.Fatalf("got %+v", got)
	}
}

func TestAssumeRolePoliciesCompareAsPolicies(t *testing.T) {
	a := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}`
	b := `{"Statement":{"Action":["sts:AssumeRole"],"Principal":{"Service":["ec2.amazonaws.com"]},"Effect":"Allow"},"Version":"2012-10-17"}`
	if !policyEquivalent(a, b) {
		t.Fatal("equivalent policies")
	}
	if policyEquivalent(a, strings.Replace(a, "ec2", "lambda", 1)) {
		t.Fatal("another principal")
	}
	n, err := normalizeJSON(a)
	if err != nil || strings.Contains(n, " ") || !strings.HasPrefix(n, `{"Statement":`) {
		t.Fatalf("normalized: %s %v", n, err)
	}
}

func TestConfigIsReadAsPulumiAwsReadsItAndRefusesTheRest(t *testing.T) {
	cfg := normalizeConfig(resource.PropertyMap{
		"region":                    strProp("eu-central-1"),
		"endpoints":                 strProp(`[{"ec2":"http://127.0.0.1:5000","iam":"http://127.0.0.1:5000"}]`),
		"skipCredentialsValidation": strProp("true"),
		"version":                   strProp("7.51.1"),
	})
	if f := checkConfig(view(cfg)); len(f) > 0 {
		t.Fatal(f)
	}
	pc, err := readConfig(view(cfg))
	if err != nil || pc.endpoints["ec2"] != "http://127.0.0.1:5000" || !pc.skipCredentialsValidation {
		t.Fatalf("%+v %v", pc, err)
	}
	for key, value := range map[string]resource.PropertyValue{
		"defaultTags": strProp(`{"tags":{"a":"b"}}`),
		"endpoints":   strProp(`[{"s3":"http://127.0.0.1:5000"}]`),
	} {
		f := checkConfig(view(normalizeConfig(resource.PropertyMap{resource.PropertyKey(key): value})))
		if len(f) != 1 || !strings.Contains(f[0].Reason, standIn) {
			t.Fatalf("%s: %v", key, f)
		}
	}
	if f := checkConfig(view(resource.PropertyMap{"regoin": strProp("x")})); len(f) != 1 {
		t.Fatalf("a misspelt key fails: %v", f)
	}
}

func TestSchemaIsValidJSONNamingEveryToken(t *testing.T) {
	s, err := schemaJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{instanceToken, securityGroupToken, roleToken, rolePolicyAttachToken,
		instanceProfileToken, getAmiToken, getInstanceTypeToken} {
		if !strings.Contains(s, tok) {
			t.Fatalf("schema lacks %s", tok)
		}
	}
}

func marketOptions(marketType string, spot resource.PropertyMap) resource.PropertyValue {
	m := resource.PropertyMap{"marketType": strProp(marketType)}
	if spot != nil {
		m["spotOptions"] = resource.NewObjectProperty(spot)
	}
	return resource.NewObjectProperty(m)
}

func TestMarketOptionsReplaceWhenChangedAndFieldsLeftOutNeverDiff(t *testing.T) {
	in := instanceInputs()
	in["instanceMarketOptions"] = marketOptions("spot", resource.PropertyMap{
		"instanceInterruptionBehavior": strProp("terminate")})
	st := instanceStateOfInputs(in)
	st["instanceMarketOptions"] = marketOptions("spot", resource.PropertyMap{
		"instanceInterruptionBehavior": strProp("terminate"), "spotInstanceType": strProp("one-time"),
		"maxPrice": strProp("0.0104")})
	if d := instanceDiff(st, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("fields the input leaves out are EC2's: want no diff, got %v", d.Diffs)
	}
	changed := copyMap(in)
	changed["instanceMarketOptions"] = marketOptions("spot", resource.PropertyMap{
		"instanceInterruptionBehavior": strProp("stop")})
	if d := instanceDiff(st, changed); !slices.Contains(d.Replaces, "instanceMarketOptions") {
		t.Fatalf("a market options change replaces, got %v", d.Replaces)
	}
	onDemand := instanceStateOfInputs(instanceInputs())
	if d := instanceDiff(onDemand, in); !slices.Contains(d.Replaces, "instanceMarketOptions") {
		t.Fatalf("an on-demand instance asked to be spot is replaced, got %v", d.Replaces)
	}
}

func TestMarketOptionsAreCheckedAsTheProviderChecksThem(t *testing.T) {
	cases := map[string]struct {
		options resource.PropertyValue
		want    string
	}{
		"market type": {marketOptions("cheap", nil),
			"expected instanceMarketOptions.marketType to be one of [spot capacity-block interruptible-capacity-reservation], got cheap"},
		"capacity block": {marketOptions("capacity-block", nil), "is not supported by"},
		"behaviour": {marketOptions("spot", resource.PropertyMap{"instanceInterruptionBehavior": strProp("pause")}),
			"expected instanceMarketOptions.spotOptions.instanceInterruptionBehavior to be one of [hibernate stop terminate], got pause"},
		"persistent terminating": {marketOptions("spot", resource.PropertyMap{"spotInstanceType": strProp("persistent")}),
			"persistent spot requests need instanceInterruptionBehavior hibernate or stop"},
		"valid until": {marketOptions("spot", resource.PropertyMap{"validUntil": strProp("tomorrow")}),
			"is not an RFC 3339 time"},
		"unknown field": {marketOptions("spot", resource.PropertyMap{"blockDurationMinutes": numProp(60)}),
			"unknown property \"instanceMarketOptions.spotOptions.blockDurationMinutes\""},
	}
	for name, c := range cases {
		in := instanceInputs()
		in["instanceMarketOptions"] = c.options
		_, failures := instanceResource{}.check(nil, nil, in)
		failures = append(failures, instanceSpec.checkTypes(view(revealMap(in)))...)
		found := false
		for _, f := range failures {
			found = found || strings.Contains(f.Reason, c.want)
		}
		if !found {
			t.Errorf("%s: want a failure with %q, got %v", name, c.want, failures)
		}
	}
}
