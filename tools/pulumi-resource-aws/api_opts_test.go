package main

// rootBlockDevice, metadataOptions and instanceInitiatedShutdownBehavior against moto's server:
// what the instance has is read back with the SDK (DescribeInstances, DescribeVolumes,
// DescribeInstanceAttribute), not through the provider.

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// ciWorkerInputs are webInputs with what a CI worker sets: a 40 GiB encrypted gp3 root volume,
// IMDSv2 required with a hop limit of 1, and a shutdown from inside that terminates.
func ciWorkerInputs(subnet, group string) resource.PropertyMap {
	in := webInputs(subnet, group)
	in["rootBlockDevice"] = resource.NewObjectProperty(resource.PropertyMap{
		"volumeSize": numProp(40), "volumeType": strProp("gp3"), "encrypted": boolProp(true),
	})
	in["metadataOptions"] = resource.NewObjectProperty(resource.PropertyMap{
		"httpTokens": strProp("required"), "httpPutResponseHopLimit": numProp(1), "httpEndpoint": strProp("enabled"),
	})
	in["instanceInitiatedShutdownBehavior"] = strProp("terminate")
	return in
}

// rootVolume is the instance's root volume as EC2 reports it.
func (h *harness) rootVolume(id string) (ec2types.Instance, ec2types.Volume) {
	h.t.Helper()
	inst := h.instance(id)
	for _, m := range inst.BlockDeviceMappings {
		if m.Ebs != nil && aws.ToString(m.DeviceName) == aws.ToString(inst.RootDeviceName) {
			out, err := h.c.ec2.DescribeVolumes(context.Background(),
				&ec2.DescribeVolumesInput{VolumeIds: []string{aws.ToString(m.Ebs.VolumeId)}})
			if err != nil || len(out.Volumes) != 1 {
				h.t.Fatalf("describing the root volume: %v", err)
			}
			return inst, out.Volumes[0]
		}
	}
	h.t.Fatalf("instance %s has no root volume on %s: %v", id, aws.ToString(inst.RootDeviceName), inst.BlockDeviceMappings)
	return inst, ec2types.Volume{}
}

func (h *harness) shutdownBehavior(id string) string {
	h.t.Helper()
	out, err := h.c.ec2.DescribeInstanceAttribute(context.Background(), &ec2.DescribeInstanceAttributeInput{
		InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameInstanceInitiatedShutdownBehavior})
	if err != nil || out.InstanceInitiatedShutdownBehavior == nil {
		h.t.Fatalf("describing the shutdown behaviour: %v", err)
	}
	return aws.ToString(out.InstanceInitiatedShutdownBehavior.Value)
}

func TestACIWorkerHasTheDiskMetadataOptionsAndShutdownBehaviourAskedFor(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "ci", nil, ciWorkerInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "ci", in)

	inst, vol := h.rootVolume(id)
	if aws.ToString(inst.RootDeviceName) != "/dev/sda1" || aws.ToInt32(vol.Size) != 40 ||
		vol.VolumeType != ec2types.VolumeTypeGp3 || !aws.ToBool(vol.Encrypted) {
		t.Fatalf("root volume on %s: %d GiB %s encrypted %v", aws.ToString(inst.RootDeviceName),
			aws.ToInt32(vol.Size), vol.VolumeType, aws.ToBool(vol.Encrypted))
	}
	if m := inst.BlockDeviceMappings[0]; !aws.ToBool(m.Ebs.DeleteOnTermination) {
		t.Fatalf("the root volume goes with the instance: %+v", m.Ebs)
	}
	if mo := inst.MetadataOptions; mo == nil || mo.HttpTokens != ec2types.HttpTokensStateRequired ||
		aws.ToInt32(mo.HttpPutResponseHopLimit) != 1 || mo.HttpEndpoint != ec2types.InstanceMetadataEndpointStateEnabled {
		t.Fatalf("metadata options %+v", inst.MetadataOptions)
	}
	if got := h.shutdownBehavior(id); got != "terminate" {
		t.Fatalf("shutdown behaviour %q", got)
	}

	rbd := view(state["rootBlockDevice"].ObjectValue())
	if size, _ := rbd.number("volumeSize"); size != 40 || rbd.str("volumeId") != aws.ToString(vol.VolumeId) ||
		rbd.str("deviceName") != "/dev/sda1" || !rbd.boolean("encrypted") || !rbd.boolean("deleteOnTermination") {
		t.Fatalf("state's rootBlockDevice %v", rbd)
	}
	if view(state["metadataOptions"].ObjectValue()).str("httpTokens") != "required" ||
		state["instanceInitiatedShutdownBehavior"].StringValue() != "terminate" {
		t.Fatalf("state %v %v", state["metadataOptions"], state["instanceInitiatedShutdownBehavior"])
	}
	if d := h.diff(instanceToken, "ci", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v %v", d.Diffs, d.DetailedDiff)
	}
	refreshed, _ := h.read(instanceToken, "ci", id, state, in)
	if d := h.diff(instanceToken, "ci", id, refreshed, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff after a refresh, got %v %v", d.Diffs, d.DetailedDiff)
	}
}

func TestAnInstanceWithoutTheOptionsKeepsEC2sDefaultsWithoutADiff(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "web", nil, webInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "web", in)
	if got := state["instanceInitiatedShutdownBehavior"].StringValue(); got != "stop" {
		t.Fatalf("EC2's default shutdown behaviour is stop, got %q", got)
	}
	if view(state["metadataOptions"].ObjectValue()).str("httpTokens") == "" || !state["rootBlockDevice"].IsObject() {
		t.Fatalf("the state has what EC2 reports: %v %v", state["metadataOptions"], state["rootBlockDevice"])
	}
	if d := h.diff(instanceToken, "web", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("options left out never diff, got %v", d.Diffs)
	}
}

func TestDiskMetadataAndShutdownChangesApplyInPlace(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "ci", nil, ciWorkerInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "ci", in)

	news := copyMap(in)
	news["rootBlockDevice"] = resource.NewObjectProperty(resource.PropertyMap{
		"volumeSize": numProp(80), "volumeType": strProp("gp3"), "encrypted": boolProp(true),
		"iops": numProp(4000), "throughput": numProp(250), "deleteOnTermination": boolProp(true),
	})
	news["metadataOptions"] = resource.NewObjectProperty(resource.PropertyMap{"httpPutResponseHopLimit": numProp(2)})
	news["instanceInitiatedShutdownBehavior"] = strProp("stop")
	news = h.check(instanceToken, "ci", state, news)
	d := h.diff(instanceToken, "ci", id, state, news)
	if len(d.Replaces) > 0 {
		t.Fatalf("in place, got replaces %v", d.Replaces)
	}
	for _, path := range []string{"rootBlockDevice.volumeSize", "rootBlockDevice.iops", "rootBlockDevice.throughput",
		"metadataOptions.httpPutResponseHopLimit", "instanceInitiatedShutdownBehavior"} {
		if pd, ok := d.DetailedDiff[path]; !ok || (pd.Kind != pulumirpc.PropertyDiff_UPDATE && pd.Kind != pulumirpc.PropertyDiff_ADD) {
			t.Fatalf("detailed diff %v lacks an update of %s", d.DetailedDiff, path)
		}
	}
	state = h.update(instanceToken, "ci", id, state, news)

	inst, vol := h.rootVolume(id)
	if aws.ToInt32(vol.Size) != 80 || aws.ToInt32(vol.Iops) != 4000 || aws.ToInt32(vol.Throughput) != 250 {
		t.Fatalf("root volume after ModifyVolume: %d GiB, %d IOPS, %d MiB/s",
			aws.ToInt32(vol.Size), aws.ToInt32(vol.Iops), aws.ToInt32(vol.Throughput))
	}
	if mo := inst.MetadataOptions; aws.ToInt32(mo.HttpPutResponseHopLimit) != 2 || mo.HttpTokens != ec2types.HttpTokensStateRequired {
		t.Fatalf("metadata options after the update (tokens stay required): %+v", mo)
	}
	if got := h.shutdownBehavior(id); got != "stop" {
		t.Fatalf("shutdown behaviour %q", got)
	}
	if groups := h.instance(id).SecurityGroups; len(groups) == 0 {
		t.Fatal("the shutdown behaviour's change left the instance without its security group")
	}
	if d := h.diff(instanceToken, "ci", id, state, news); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff after the update, got %v %v", d.Diffs, d.DetailedDiff)
	}
}

func TestAnEncryptionChangeReplacesTheInstance(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "ci", nil, ciWorkerInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "ci", in)
	news := copyMap(in)
	news["rootBlockDevice"] = resource.NewObjectProperty(resource.PropertyMap{
		"volumeSize": numProp(40), "volumeType": strProp("gp3"), "encrypted": boolProp(false),
	})
	news = h.check(instanceToken, "ci", state, news)
	d := h.diff(instanceToken, "ci", id, state, news)
	if !slices.Equal(d.Replaces, []string{"rootBlockDevice"}) ||
		d.DetailedDiff["rootBlockDevice.encrypted"].GetKind() != pulumirpc.PropertyDiff_UPDATE_REPLACE {
		t.Fatalf("replaces %v detailed %v", d.Replaces, d.DetailedDiff)
	}
}

func TestGetAmiPicksByOwnerNameAndArchitecture(t *testing.T) {
	h := newHarness(t)
	pick := func(arch string) (resource.PropertyMap, error) {
		return h.invoke(getAmiToken, resource.PropertyMap{
			"owners": strsProp([]string{canonical}), "mostRecent": boolProp(true),
			"filters": resource.NewArrayProperty([]resource.PropertyValue{
				resource.NewObjectProperty(resource.PropertyMap{
					"name": strProp("name"), "values": strsProp([]string{"ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-*-server-*"})}),
				resource.NewObjectProperty(resource.PropertyMap{
					"name": strProp("architecture"), "values": strsProp([]string{arch})}),
			}),
		})
	}
	for arch, want := range map[string]string{"x86_64": newAMD64, "arm64": newARM64} {
		got, err := pick(arch)
		if err != nil || got["id"].StringValue() != want || got["rootDeviceName"].StringValue() != "/dev/sda1" {
			t.Fatalf("%s: got %v %v %v", arch, got["id"], got["rootDeviceName"], err)
		}
	}
}

func TestRootVolumeTagsAreSetAfterTheLaunchAndReadBack(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := ciWorkerInputs(subnet, h.securityGroup(vpc))
	delete(in, "volumeTags")
	rbd := copyMap(in["rootBlockDevice"].ObjectValue())
	rbd["tags"] = strMapProp(map[string]string{"orca-pool": "ci"})
	in["rootBlockDevice"] = resource.NewObjectProperty(rbd)
	in = h.check(instanceToken, "ci", nil, in)
	id, state := h.create(instanceToken, "ci", in)
	if _, vol := h.rootVolume(id); tagsFromEC2(vol.Tags)["orca-pool"] != "ci" {
		t.Fatalf("root volume tags %v", vol.Tags)
	}
	if got := view(state["rootBlockDevice"].ObjectValue()).strMap("tags"); got["orca-pool"] != "ci" {
		t.Fatalf("state's root volume tags %v", got)
	}
	if d := h.diff(instanceToken, "ci", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff, got %v", d.DetailedDiff)
	}
}

func TestAStateWithoutTheRootVolumeStillResizesIt(t *testing.T) {
	h := newHarness(t)
	vpc, subnet := h.network()
	in := h.check(instanceToken, "ci", nil, ciWorkerInputs(subnet, h.securityGroup(vpc)))
	id, state := h.create(instanceToken, "ci", in)
	delete(state, "rootBlockDevice") // as an older stand-in wrote it
	news := copyMap(in)
	rbd := copyMap(in["rootBlockDevice"].ObjectValue())
	rbd["volumeSize"] = numProp(60)
	news["rootBlockDevice"] = resource.NewObjectProperty(rbd)
	h.update(instanceToken, "ci", id, state, news)
	if _, vol := h.rootVolume(id); aws.ToInt32(vol.Size) != 60 {
		t.Fatalf("root volume %d GiB", aws.ToInt32(vol.Size))
	}
}
