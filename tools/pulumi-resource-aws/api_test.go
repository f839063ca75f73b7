package main

// The provider's methods against moto's server, called as the engine calls them; what they did
// is checked with the SDK directly.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func (h *harness) instance(id string) ec2types.Instance {
	h.t.Helper()
	out, err := h.c.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) != 1 {
		h.t.Fatalf("describing %s: %v", id, err)
	}
	return out.Reservations[0].Instances[0]
}

func (h *harness) securityGroup(vpc string) string {
	h.t.Helper()
	in := h.check(securityGroupToken, "pools", nil, resource.PropertyMap{
		"name": strProp("prod-pools"), "vpcId": strProp(vpc), "description": strProp("pools"),
	})
	id, _ := h.create(securityGroupToken, "pools", in)
	return id
}

func webInputs(subnet, group string) resource.PropertyMap {
	return resource.PropertyMap{
		"ami":                 strProp(newAMD64),
		"instanceType":        strProp("t3.micro"),
		"subnetId":            strProp(subnet),
		"vpcSecurityGroupIds": strsProp([]string{group}),
		"userData":            resource.MakeSecret(strProp("#cloud-config\n")),
		"tags":                strMapProp(map[string]string{"Name": "prod-ci-1", "orca": "pool"}),
		"volumeTags":          strMapProp(map[string]string{"Name": "prod-ci-1", "orca": "pool"}),
	}
}

func TestInstanceLaunchesTaggedWithHashedUserData(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	group := h.securityGroup(vpc)
	in := h.check(instanceToken, "web", nil, webInputs(subnet, group))
	id, state := h.create(instanceToken, "web", in)

	inst := h.instance(id)
	if inst.State.Name != ec2types.InstanceStateNameRunning || tagsFromEC2(inst.Tags)["orca"] != "pool" {
		t.Fatalf("instance %s: %s %v", id, inst.State.Name, inst.Tags)
	}
	vols, err := h.c.ec2.DescribeVolumes(context.Background(), &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{
		{Name: aws.String("attachment.instance-id"), Values: []string{id}}}})
	if err != nil || len(vols.Volumes) == 0 || tagsFromEC2(vols.Volumes[0].Tags)["Name"] != "prod-ci-1" {
		t.Fatalf("volume tags at launch: %v %v", vols, err)
	}
	ud := state["userData"]
	if !ud.IsSecret() || ud.SecretValue().Element.StringValue() != userDataHashSum("#cloud-config\n") {
		t.Fatalf("userData in the state: %v", ud)
	}
	if d := h.diff(instanceToken, "web", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v", d.Diffs)
	}
}

func TestInstanceTypeChangeStopsModifiesAndStartsInPlace(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)

	news := copyMap(in)
	news["instanceType"] = strProp("t3.small")
	d := h.diff(instanceToken, "web", id, state, news)
	if !slices.Equal(d.Diffs, []string{"instanceType"}) || len(d.Replaces) > 0 {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	state = h.update(instanceToken, "web", id, state, news)
	if inst := h.instance(id); inst.InstanceType != "t3.small" || inst.State.Name != ec2types.InstanceStateNameRunning {
		t.Fatalf("after the update: %s %s", inst.InstanceType, inst.State.Name)
	}
	if state["instanceType"].StringValue() != "t3.small" {
		t.Fatalf("state %v", state["instanceType"])
	}
}

func TestInstanceTypeOfAnotherArchitectureReplaces(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)
	news := copyMap(in)
	news["instanceType"] = strProp("t4g.small")
	d := h.diff(instanceToken, "web", id, state, news)
	if !slices.Equal(d.Replaces, []string{"instanceType"}) {
		t.Fatalf("replaces %v", d.Replaces)
	}
}

func TestUserDataChangeUpdatesTheAttributeInPlace(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)
	news := copyMap(in)
	news["userData"] = resource.MakeSecret(strProp("#cloud-config\npackages: [jq]\n"))
	if d := h.diff(instanceToken, "web", id, state, news); len(d.Replaces) > 0 || len(d.Diffs) != 1 {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	state = h.update(instanceToken, "web", id, state, news)
	attr, err := h.c.ec2.DescribeInstanceAttribute(context.Background(), &ec2.DescribeInstanceAttributeInput{
		InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameUserData})
	if err != nil || userDataHashSum(aws.ToString(attr.UserData.Value)) != userDataHashSum("#cloud-config\npackages: [jq]\n") {
		t.Fatalf("user data on the instance: %v", err)
	}
	if reveal(state["userData"]).StringValue() != userDataHashSum("#cloud-config\npackages: [jq]\n") {
		t.Fatalf("state %v", state["userData"])
	}
}

func TestTagsUpdateInPlaceAndRefreshSeesOutsideChanges(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)

	news := copyMap(in)
	news["tags"] = strMapProp(map[string]string{"Name": "prod-ci-1", "orca": "pool", "team": "ci"})
	if d := h.diff(instanceToken, "web", id, state, news); len(d.Replaces) > 0 || !slices.Equal(d.Diffs, []string{"tags"}) {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	state = h.update(instanceToken, "web", id, state, news)
	if tags := tagsFromEC2(h.instance(id).Tags); tags["team"] != "ci" || len(tags) != 3 {
		t.Fatalf("tags after the update: %v", tags)
	}

	// Someone else tags the instance: a refresh reports it, and the next diff puts it back.
	if _, err := h.c.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{id},
		Tags: ec2Tags(map[string]string{"extra": "1"})}); err != nil {
		t.Fatal(err)
	}
	refreshed, refreshedInputs := h.read(instanceToken, "web", id, state, news)
	if refreshed["tags"].ObjectValue()["extra"].StringValue() != "1" || !refreshedInputs["userData"].IsSecret() {
		t.Fatalf("refreshed %v inputs %v", refreshed["tags"], refreshedInputs["userData"])
	}
	if d := h.diff(instanceToken, "web", id, refreshed, news); !slices.Equal(d.Diffs, []string{"tags"}) {
		t.Fatalf("diff after refresh %v", d.Diffs)
	}
}

func TestSecurityGroupChangeModifiesThePrimaryInterface(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)
	other, err := h.c.ec2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("other"), Description: aws.String("other"), VpcId: aws.String(vpc)})
	if err != nil {
		t.Fatal(err)
	}
	news := copyMap(in)
	news["vpcSecurityGroupIds"] = strsProp([]string{aws.ToString(other.GroupId)})
	if d := h.diff(instanceToken, "web", id, state, news); len(d.Replaces) > 0 || len(d.Diffs) != 1 {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	h.update(instanceToken, "web", id, state, news)
	// moto lists the interface's groups together with the launch ones (README: differences).
	var found bool
	for _, g := range h.instance(id).NetworkInterfaces[0].Groups {
		found = found || aws.ToString(g.GroupId) == aws.ToString(other.GroupId)
	}
	if !found {
		t.Fatal("the primary network interface has the new group")
	}
}

func TestInstanceProfileChangeReplacesTheAssociation(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vpc, subnet := h.network()
	for _, name := range []string{"first", "second"} {
		if _, err := h.c.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	inputs := webInputs(subnet, h.securityGroup(vpc))
	inputs["iamInstanceProfile"] = strProp("first")
	in := h.check(instanceToken, "web", nil, inputs)
	id, state := h.create(instanceToken, "web", in)
	if state["iamInstanceProfile"].StringValue() != "first" {
		t.Fatalf("state %v", state["iamInstanceProfile"])
	}
	news := copyMap(in)
	news["iamInstanceProfile"] = strProp("second")
	if d := h.diff(instanceToken, "web", id, state, news); len(d.Replaces) > 0 || len(d.Diffs) != 1 {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	h.update(instanceToken, "web", id, state, news)
	out, err := h.c.ec2.DescribeIamInstanceProfileAssociations(ctx, &ec2.DescribeIamInstanceProfileAssociationsInput{
		Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: []string{id}}}})
	if err != nil || len(out.IamInstanceProfileAssociations) != 1 ||
		!strings.HasSuffix(aws.ToString(out.IamInstanceProfileAssociations[0].IamInstanceProfile.Arn), "/second") {
		t.Fatalf("associations %+v %v", out, err)
	}
}

func TestInstanceDeleteTerminatesAndAGoneInstanceReadsAsGone(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)
	h.delete(instanceToken, "web", id, state)
	if inst := h.instance(id); inst.State.Name != ec2types.InstanceStateNameTerminated {
		t.Fatalf("state %s", inst.State.Name)
	}
	if got, _ := h.read(instanceToken, "web", id, state, in); got != nil {
		t.Fatalf("a terminated instance is gone, read %v", got)
	}
	h.delete(instanceToken, "web", id, state) // again: nothing to do
}

func TestSecurityGroupHasExactlyItsRules(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vpc, _ := h.network()
	ingress := resource.NewArrayProperty([]resource.PropertyValue{
		resource.NewObjectProperty(resource.PropertyMap{"protocol": strProp("tcp"), "fromPort": numProp(22),
			"toPort": numProp(22), "cidrBlocks": strsProp([]string{"203.0.113.0/24"}),
			"description": strProp("ssh from the office")}),
	})
	egress := resource.NewArrayProperty([]resource.PropertyValue{
		resource.NewObjectProperty(resource.PropertyMap{"protocol": strProp("-1"), "fromPort": numProp(0),
			"toPort": numProp(0), "cidrBlocks": strsProp([]string{"0.0.0.0/0"}),
			"ipv6CidrBlocks": strsProp([]string{"::/0"})}),
	})
	in := h.check(securityGroupToken, "pools", nil, resource.PropertyMap{
		"name": strProp("prod-pools"), "vpcId": strProp(vpc), "ingress": ingress, "egress": egress,
		"tags": strMapProp(map[string]string{"orca-owner": "prod"}),
	})
	if in["description"].StringValue() != "Managed by Pulumi" {
		t.Fatalf("default description %v", in["description"])
	}
	id, state := h.create(securityGroupToken, "pools", in)
	g, err := findSecurityGroup(ctx, h.c, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.IpPermissions) != 1 || aws.ToInt32(g.IpPermissions[0].FromPort) != 22 {
		t.Fatalf("ingress %+v", g.IpPermissions)
	}
	if got := rulesFromAPI(id, g.IpPermissionsEgress); len(got) != 1 || len(got[0].ipv6CidrBlocks) != 1 {
		t.Fatalf("egress %+v", got)
	}
	if d := h.diff(securityGroupToken, "pools", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v", d.Diffs)
	}

	news := copyMap(in)
	news["ingress"] = resource.NewArrayProperty(append(ingress.ArrayValue(),
		resource.NewObjectProperty(resource.PropertyMap{"protocol": strProp("icmp"), "fromPort": numProp(-1),
			"toPort": numProp(-1), "cidrBlocks": strsProp([]string{"0.0.0.0/0"})})))
	d := h.diff(securityGroupToken, "pools", id, state, news)
	if !slices.Equal(d.Diffs, []string{"ingress"}) || len(d.Replaces) > 0 {
		t.Fatalf("diff %v replaces %v", d.Diffs, d.Replaces)
	}
	state = h.update(securityGroupToken, "pools", id, state, news)
	if g, _ := findSecurityGroup(ctx, h.c, id); len(g.IpPermissions) != 2 {
		t.Fatalf("ingress after the update %+v", g.IpPermissions)
	}
	if d := h.diff(securityGroupToken, "pools", id, state, news); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff after the update, got %v", d.Diffs)
	}
	h.delete(securityGroupToken, "pools", id, state)
	if _, err := findSecurityGroup(ctx, h.c, id); err != errNotFound {
		t.Fatalf("after delete: %v", err)
	}
}

func TestAnUpdateWhoseRuleIsAlreadyAuthorizedSucceeds(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	vpc, _ := h.network()
	ssh := resource.NewObjectProperty(resource.PropertyMap{"protocol": strProp("tcp"), "fromPort": numProp(22),
		"toPort": numProp(22), "cidrBlocks": strsProp([]string{"203.0.113.0/24"})})
	in := h.check(securityGroupToken, "pools", nil, resource.PropertyMap{
		"name": strProp("prod-pools"), "vpcId": strProp(vpc),
		"ingress": resource.NewArrayProperty([]resource.PropertyValue{ssh}),
	})
	id, state := h.create(securityGroupToken, "pools", in)
	ping := sgRule{protocol: "icmp", fromPort: -1, toPort: -1, cidrBlocks: []string{"0.0.0.0/0"}}
	if err := authorize(ctx, h.c, id, false, []sgRule{ping}); err != nil { // a first try whose answer was lost
		t.Fatal(err)
	}

	news := copyMap(in)
	news["ingress"] = resource.NewArrayProperty([]resource.PropertyValue{ssh, ping.prop()})
	state = h.update(securityGroupToken, "pools", id, state, news)

	if g, _ := findSecurityGroup(ctx, h.c, id); len(g.IpPermissions) != 2 {
		t.Fatalf("ingress after the update %+v", g.IpPermissions)
	}
	if d := h.diff(securityGroupToken, "pools", id, state, news); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff after the update, got %v", d.Diffs)
	}
}

func TestRoleAttachmentAndProfileLifecycle(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	policy, err := h.c.iam.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("workers"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	trust := `{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}`
	roleIn := h.check(roleToken, "workers", nil, resource.PropertyMap{
		"name": strProp("prod-workers"), "assumeRolePolicy": strProp(trust),
		"tags": strMapProp(map[string]string{"orca-owner": "prod"}),
	})
	roleID, roleState := h.create(roleToken, "workers", roleIn)
	if roleID != "prod-workers" || roleState["path"].StringValue() != "/" ||
		roleState["maxSessionDuration"].NumberValue() != 3600 {
		t.Fatalf("role %s %v", roleID, roleState)
	}
	if d := h.diff(roleToken, "workers", roleID, roleState, roleIn); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v", d.Diffs)
	}

	arn := aws.ToString(policy.Policy.Arn)
	attIn := h.check(rolePolicyAttachToken, "attach", nil, resource.PropertyMap{
		"role": strProp("prod-workers"), "policyArn": strProp(arn)})
	attID, attState := h.create(rolePolicyAttachToken, "attach", attIn)
	if attID != "prod-workers/"+arn {
		t.Fatalf("attachment id %s", attID)
	}

	profIn := h.check(instanceProfileToken, "workers", nil, resource.PropertyMap{
		"name": strProp("prod-workers"), "role": strProp("prod-workers")})
	profID, profState := h.create(instanceProfileToken, "workers", profIn)
	prof, err := h.c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(profID)})
	if err != nil || len(prof.InstanceProfile.Roles) != 1 {
		t.Fatalf("profile %v %v", prof, err)
	}

	h.delete(instanceProfileToken, "workers", profID, profState)
	h.delete(rolePolicyAttachToken, "attach", attID, attState)
	if got, _ := h.read(rolePolicyAttachToken, "attach", attID, attState, attIn); got != nil {
		t.Fatalf("a detached policy reads as gone, got %v", got)
	}
	h.delete(roleToken, "workers", roleID, roleState)
	if _, err := h.c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(roleID)}); !isNoSuchEntity(err) {
		t.Fatalf("role after delete: %v", err)
	}
}

func TestDeletingARoleTakesItOutOfItsProfilesFirst(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	roleIn := h.check(roleToken, "r", nil, resource.PropertyMap{"name": strProp("r"), "assumeRolePolicy": strProp(trust)})
	roleID, roleState := h.create(roleToken, "r", roleIn)
	if _, err := h.c.iam.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("p")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
		InstanceProfileName: aws.String("p"), RoleName: aws.String("r")}); err != nil {
		t.Fatal(err)
	}
	h.delete(roleToken, "r", roleID, roleState)
	prof, err := h.c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("p")})
	if err != nil || len(prof.InstanceProfile.Roles) != 0 {
		t.Fatalf("profile after the role's delete: %v %v", prof, err)
	}
}

func TestGetAmiFindsTheNewestUbuntuOfAnArchitecture(t *testing.T) {
	h := newHarness(t)
	filters := func(arch string) resource.PropertyValue {
		return resource.NewArrayProperty([]resource.PropertyValue{resource.NewObjectProperty(resource.PropertyMap{
			"name": strProp("name"), "values": strsProp([]string{"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-" + arch + "-server-*"}),
		})})
	}
	got, err := h.invoke(getAmiToken, resource.PropertyMap{
		"owners": strsProp([]string{canonical}), "mostRecent": boolProp(true), "filters": filters("amd64")})
	if err != nil || got["id"].StringValue() != newAMD64 || got["architecture"].StringValue() != "x86_64" {
		t.Fatalf("got %v %v", got["id"], err)
	}
	_, err = h.invoke(getAmiToken, resource.PropertyMap{"owners": strsProp([]string{canonical}), "filters": filters("amd64")})
	if err == nil || !strings.Contains(err.Error(), "more than one result") {
		t.Fatalf("two matches without mostRecent: %v", err)
	}
	_, err = h.invoke(getAmiToken, resource.PropertyMap{"owners": strsProp([]string{canonical}), "filters": filters("riscv")})
	if err == nil || !strings.Contains(err.Error(), "returned no results") {
		t.Fatalf("no match: %v", err)
	}
	_, err = h.invoke(getAmiToken, resource.PropertyMap{"mostRecent": boolProp(true), "filters": filters("amd64")})
	if err == nil || !strings.Contains(err.Error(), "owners") {
		t.Fatalf("an unsafe filter: %v", err)
	}
}

func TestGetInstanceTypeReportsArchitectures(t *testing.T) {
	h := newHarness(t)
	got, err := h.invoke(getInstanceTypeToken, resource.PropertyMap{"instanceType": strProp("t4g.small")})
	if err != nil || !slices.Equal(stringSet(got["supportedArchitectures"]), []string{"arm64"}) {
		t.Fatalf("got %v %v", got["supportedArchitectures"], err)
	}
	if _, err := h.invoke(getInstanceTypeToken, resource.PropertyMap{"instanceType": strProp("t9.nope")}); err == nil {
		t.Fatal("an unknown type fails")
	}
	if _, err := h.invoke("aws:s3/getBucket:getBucket", resource.PropertyMap{}); err == nil ||
		!strings.Contains(err.Error(), standIn) {
		t.Fatalf("another function names the stand-in: %v", err)
	}
}

func TestConfigureValidatesCredentialsWithSTS(t *testing.T) {
	h := newHarness(t)
	if h.c.accountID != "123456789012" {
		t.Fatalf("account %q", h.c.accountID)
	}
	p := newProvider(nil)
	cfg := testConfig(h.url)
	delete(cfg, "accessKey")
	delete(cfg, "secretKey")
	args, _ := marshal(cfg, "test")
	_, err := p.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args})
	if err == nil || !strings.Contains(err.Error(), "No valid credential sources found") {
		t.Fatalf("no credentials: %v", err)
	}
}

func spotOptions() resource.PropertyValue {
	return resource.NewObjectProperty(resource.PropertyMap{
		"marketType": strProp("spot"),
		"spotOptions": resource.NewObjectProperty(resource.PropertyMap{
			"instanceInterruptionBehavior": strProp("terminate"),
			"spotInstanceType":             strProp("one-time"),
		}),
	})
}

// launchWeb creates the web instance, on the spot market when spot: its id, inputs and state.
func (h *harness) launchWeb(spot bool) (string, resource.PropertyMap, resource.PropertyMap) {
	h.t.Helper()
	vpc, subnet := h.network()
	inputs := webInputs(subnet, h.securityGroup(vpc))
	if spot {
		inputs["instanceMarketOptions"] = spotOptions()
	}
	in := h.check(instanceToken, "web", nil, inputs)
	id, state := h.create(instanceToken, "web", in)
	return id, in, state
}

func TestSpotInstanceLaunchesOnTheSpotMarketAndKeepsItsOptions(t *testing.T) {
	h := newHarness(t)
	id, in, state := h.launchWeb(true)

	if inst := h.instance(id); inst.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot {
		t.Fatalf("instance lifecycle %q, want spot", inst.InstanceLifecycle)
	}
	if state["instanceLifecycle"].StringValue() != "spot" || !state["instanceMarketOptions"].DeepEquals(spotOptions()) {
		t.Fatalf("state: %v %v", state["instanceLifecycle"], state["instanceMarketOptions"])
	}
	read, _ := h.read(instanceToken, "web", id, state, in)
	if d := h.diff(instanceToken, "web", id, read, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its refreshed state, got %v", d.Diffs)
	}
}

func TestAnOnDemandInstanceHasNoMarketOptions(t *testing.T) {
	_, _, state := newHarness(t).launchWeb(false)
	if _, ok := state["instanceMarketOptions"]; ok || state["instanceLifecycle"].StringValue() != "" {
		t.Fatalf("state: %v %v", state["instanceMarketOptions"], state["instanceLifecycle"])
	}
}

func TestAnInterruptedInstanceReadsAsGoneSayingWhy(t *testing.T) {
	h := newHarness(t)
	id, in, state := h.launchWeb(true)

	h.interrupt(id)

	if got, _ := h.read(instanceToken, "web", id, state, in); got != nil {
		t.Fatalf("an interrupted instance is gone, read %v", got)
	}
	_, err := findInstance(context.Background(), h.c, id)
	var gone goneError
	if !errors.As(err, &gone) || !strings.Contains(gone.notice(), "was interrupted: EC2 took its spot capacity back") {
		t.Fatalf("want an interruption notice, got %v", err)
	}
	h.delete(instanceToken, "web", id, state) // gone: nothing to do
}

func TestADeletedInstanceReadsAsGoneWithoutANotice(t *testing.T) {
	h := newHarness(t)
	id, _, state := h.launchWeb(false)
	h.delete(instanceToken, "web", id, state)
	_, err := findInstance(context.Background(), h.c, id)
	var gone goneError
	if !errors.As(err, &gone) || gone.notice() != "" {
		t.Fatalf("want a gone instance without a notice, got %v", err)
	}
}
