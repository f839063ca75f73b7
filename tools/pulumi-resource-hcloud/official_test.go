package main

// The behaviours in which this stand-in follows terraform-provider-hcloud v1.68.0 that can be
// shown without an API (the ones that need one are in api_test.go, against the emulator).

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blang/semver"
	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func TestVersionIsTheSDKsWithStandInBuildMetadata(t *testing.T) {
	v, err := semver.Parse(version)
	if err != nil {
		t.Fatalf("version %q is not semver: %v", version, err)
	}
	if !slices.Equal(v.Build, []string{"orca", "standin"}) || len(v.Pre) != 0 {
		t.Fatalf("version %q must carry the build metadata orca.standin and no pre-release", version)
	}
	// The engine matches the SDK's request (1.43.3) with semver's EQ, which ignores build
	// metadata: the stand-in is found, and its name in the plugin cache is its own.
	if !v.EQ(semver.MustParse("1.43.3")) {
		t.Fatalf("version %q does not match the SDK's 1.43.3", version)
	}
	info, err := newProvider(nil).GetPluginInfo(context.Background(), nil)
	if err != nil || info.GetVersion() != version {
		t.Fatalf("GetPluginInfo: %v, %v", info, err)
	}
}

func checkServer(t *testing.T, news resource.PropertyMap) []*pulumirpc.CheckFailure {
	t.Helper()
	props, err := marshal(news, "test")
	if err != nil {
		t.Fatal(err)
	}
	// Never configured: Check must not need the API.
	resp, err := newProvider(nil).Check(context.Background(), &pulumirpc.CheckRequest{
		Urn: "urn:pulumi:s::p::" + serverToken + "::web", News: props,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetFailures()
}

func TestServerCheckIsStaticAndLeavesTheRestToTheAPI(t *testing.T) {
	in := serverInputs()
	in["serverType"] = strProp("no-such-type")
	in["location"] = strProp("atlantis")
	in["name"] = strProp("not a hostname")
	in["userData"] = strProp(strings.Repeat("x", 40*1024))
	if f := checkServer(t, in); len(f) != 0 {
		t.Fatalf("the official plan passes these; Check failed: %v", f)
	}
}

func TestServerCheckRefusesADatacenterAndAnEmptyImage(t *testing.T) {
	in := serverInputs()
	in["datacenter"] = strProp("fsn1-dc14")
	in["image"] = strProp("")
	failures := checkServer(t, in)
	var props []string
	for _, f := range failures {
		props = append(props, f.GetProperty())
	}
	slices.Sort(props)
	if !slices.Equal(props, []string{"datacenter", "image"}) {
		t.Fatalf("failures %v", failures)
	}
	for _, f := range failures {
		if f.GetProperty() == "datacenter" && !strings.Contains(f.GetReason(), "use the location attribute") {
			t.Fatalf("the datacenter failure must say what to use instead: %q", f.GetReason())
		}
	}
}

func TestAServerTypeChangeIsAnUpdateThatPreviewsTheNewType(t *testing.T) {
	olds := serverStateOf(serverInputs())
	news := serverInputs()
	news["serverType"] = strProp("cx33")
	d := diffOf(olds, news)
	if len(d.GetReplaces()) != 0 || d.GetDetailedDiff()["serverType"].GetKind() != pulumirpc.PropertyDiff_UPDATE {
		t.Fatalf("diff %v", d)
	}
	if got := (serverResource{}).previewUpdate(olds, news)["serverType"].StringValue(); got != "cx33" {
		t.Fatalf("the preview shows serverType %q", got)
	}
}

func TestTypeChangesTheAPIRefusesAreKnownBeforehand(t *testing.T) {
	cx23 := &hcloud.ServerType{Name: "cx23", Architecture: hcloud.ArchitectureX86, StorageType: hcloud.StorageTypeLocal, Disk: 40}
	cx33 := &hcloud.ServerType{Name: "cx33", Architecture: hcloud.ArchitectureX86, StorageType: hcloud.StorageTypeLocal, Disk: 80}
	cax11 := &hcloud.ServerType{Name: "cax11", Architecture: hcloud.ArchitectureARM, StorageType: hcloud.StorageTypeLocal, Disk: 40}
	network := &hcloud.ServerType{Name: "nw", Architecture: hcloud.ArchitectureX86, StorageType: hcloud.StorageTypeCeph, Disk: 80}
	server := func(t *hcloud.ServerType, disk int) *hcloud.Server {
		return &hcloud.Server{ServerType: t, PrimaryDiskSize: disk}
	}
	cases := []struct {
		name   string
		s      *hcloud.Server
		to     *hcloud.ServerType
		refuse string
	}{
		{"bigger", server(cx23, 40), cx33, ""},
		{"back down after keeping the disk", server(cx33, 40), cx23, ""},
		{"down after upgrading the disk", server(cx33, 80), cx23, "never shrinks a disk"},
		{"another architecture", server(cx23, 40), cax11, "incompatible architecture"},
		{"another storage type", server(cx23, 40), network, "same storage type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := typeChangeRefusal(c.s, c.to)
			if (c.refuse == "") != (got == "") || !strings.Contains(got, c.refuse) {
				t.Fatalf("typeChangeRefusal = %q, want one saying %q", got, c.refuse)
			}
		})
	}
}

func TestServerTypeDeprecationIsPerLocation(t *testing.T) {
	now := time.Now()
	st := &hcloud.ServerType{Name: "cpx22", Locations: []hcloud.ServerTypeLocation{
		{Location: &hcloud.Location{Name: "fsn1"}},
		{Location: &hcloud.Location{Name: "sin"}, DeprecatableResource: hcloud.DeprecatableResource{
			Deprecation: &hcloud.DeprecationInfo{Announced: now.AddDate(0, -1, 0), UnavailableAfter: now.AddDate(0, 2, 0)}}},
		{Location: &hcloud.Location{Name: "ash"}, DeprecatableResource: hcloud.DeprecatableResource{
			Deprecation: &hcloud.DeprecationInfo{Announced: now.AddDate(0, -4, 0), UnavailableAfter: now.AddDate(0, -1, 0)}}},
	}}
	if msg, unavailable := serverTypeNotice(st, "fsn1"); msg != "" || unavailable {
		t.Fatalf("fsn1: %q %v", msg, unavailable)
	}
	msg, unavailable := serverTypeNotice(st, "sin")
	if unavailable || !strings.Contains(msg, `deprecated in "sin"`) ||
		!strings.Contains(msg, now.AddDate(0, 2, 0).Format(time.DateOnly)) {
		t.Fatalf("sin: %q %v", msg, unavailable)
	}
	if msg, unavailable := serverTypeNotice(st, "ash"); !unavailable || !strings.Contains(msg, `unavailable in "ash"`) {
		t.Fatalf("ash: %q %v", msg, unavailable)
	}
}

func TestRuleAddressesAreNormalizedAsTheAPIWritesThem(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.7":     "203.0.113.7/32",
		"2001:DB8::1":     "2001:db8::1/128",
		"203.0.113.0/24":  "203.0.113.0/24",
		"2001:DB8:0::/32": "2001:db8::/32",
		"0.0.0.0/0":       "0.0.0.0/0",
		"203.0.113.7/24":  "203.0.113.7/24", // host bits kept, so that validateIP refuses them
		"not-an-address":  "not-an-address",
	} {
		if got := normalizeIP(in); got != want {
			t.Errorf("normalizeIP(%q) = %q, want %q", in, got, want)
		}
	}
	for _, ok := range []string{"203.0.113.7", "::/0", "2001:db8::/32", "10.0.0.0/8"} {
		if err := validateIP(ok); err != nil {
			t.Errorf("validateIP(%q): %v", ok, err)
		}
	}
	for in, says := range map[string]string{
		"203.0.113.7/24": "not the start of the network 203.0.113.0/24",
		"2001:db8::1/64": "not the start of the network 2001:db8::/64",
		"10.0.0.0/33":    "not an IP address or network",
		"example.com":    "not an IP address or network",
	} {
		if err := validateIP(in); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("validateIP(%q) = %v, want one saying %q", in, err, says)
		}
	}
	bare := []rule{{direction: "in", protocol: "icmp", sourceIPs: []string{"203.0.113.7", "2001:DB8::1"}}}
	cidr := []rule{{direction: "in", protocol: "icmp", sourceIPs: []string{"2001:db8::1/128", "203.0.113.7/32"}}}
	if !rulesEqual(bare, cidr) {
		t.Fatal("a bare address and its /32 or /128 must be the same rule")
	}
}

func TestCheckRefusesHostBitsAndAcceptsBareAddresses(t *testing.T) {
	rules := resource.NewArrayProperty([]resource.PropertyValue{
		rule{direction: "in", protocol: "tcp", port: "22", sourceIPs: []string{"203.0.113.7"}}.prop(),
		rule{direction: "in", protocol: "tcp", port: "22", sourceIPs: []string{"203.0.113.7/24"}}.prop(),
		rule{direction: "sideways", protocol: "sctp"}.prop(),
	})
	var got []string
	for _, f := range checkRules(rules) {
		got = append(got, f.GetProperty()+": "+f.GetReason())
	}
	if len(got) != 3 || !strings.HasPrefix(got[0], "rules[1]: sourceIps: 203.0.113.7/24 is not the start") ||
		!strings.HasPrefix(got[1], "rules[2]: direction") || !strings.HasPrefix(got[2], "rules[2]: protocol") {
		t.Fatalf("failures %q", got)
	}
}

func TestFirewallStateWritesAddressesAsTheAPIDoes(t *testing.T) {
	given := []rule{{direction: "in", protocol: "icmp", sourceIPs: []string{"203.0.113.7", "::/0"}}}
	api, err := apiRules(given)
	if err != nil {
		t.Fatal(err)
	}
	state := firewallState(&hcloud.Firewall{Name: "fw", Rules: api}, given)
	if got := rulesOf(view(state), "rules")[0].sourceIPs; !slices.Equal(got, []string{"203.0.113.7/32", "::/0"}) {
		t.Fatalf("state addresses %v", got)
	}
}

func TestRemovingEveryRuleLeavesTheRules(t *testing.T) {
	kept := rulesProp([]rule{{direction: "in", protocol: "icmp", sourceIPs: []string{"::/0"}}})
	olds := resource.PropertyMap{"name": strProp("fw"), "rules": kept}
	news := resource.PropertyMap{"name": strProp("fw"), "rules": rulesProp(nil)}
	if out := (firewallResource{}).previewUpdate(olds, news); !out["rules"].DeepEquals(kept) {
		t.Fatalf("an update to no rules must preview the rules kept, got %v", out["rules"])
	}
}

func TestFirewallLabelsAreKeptWithoutALabelsInput(t *testing.T) {
	olds := resource.PropertyMap{"name": strProp("fw"), "labels": strMapProp(map[string]string{"a": "b"})}
	d := firewallSpec.diff(view(olds), view(resource.PropertyMap{"name": strProp("fw")}), nil)
	if d.GetChanges() != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no labels input must not diff: %v", d.GetDiffs())
	}
}

func TestAnyChangeOfAPublicKeyReplacesTheKey(t *testing.T) {
	key := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImIMymLnOQYYsqlkYOyldzatFs/rmIMKaXGu7Gd0hB6 demo@orca"
	olds := resource.PropertyMap{"name": strProp("k"), "publicKey": strProp(key)}
	for name, changed := range map[string]string{
		"comment":            strings.Replace(key, "demo@orca", "other@orca", 1),
		"trailing newline":   key + "\n",
		"no comment":         strings.TrimSuffix(key, " demo@orca"),
		"surrounding spaces": " " + key,
	} {
		t.Run(name, func(t *testing.T) {
			news := resource.PropertyMap{"name": strProp("k"), "publicKey": strProp(changed)}
			d := sshKeySpec.diff(view(olds), view(news), nil)
			if !slices.Equal(d.GetReplaces(), []string{"publicKey"}) {
				t.Fatalf("replaces %v", d.GetReplaces())
			}
		})
	}
}

func TestPollIntervalIsNotReadFromTheEnvironment(t *testing.T) {
	t.Setenv("HCLOUD_POLL_INTERVAL", "not a duration")
	t.Setenv("HCLOUD_TOKEN", strings.Repeat("t", tokenLength))
	p := newProvider(nil)
	if _, err := p.Configure(context.Background(), &pulumirpc.ConfigureRequest{}); err != nil {
		t.Fatalf("HCLOUD_POLL_INTERVAL must be ignored as the official provider ignores it: %v", err)
	}
}
