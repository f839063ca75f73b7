package main

// The machine options of aws:ec2/instance:Instance that a CI fleet sets, as terraform-provider-aws
// v6's aws_instance has them (internal/service/ec2/ec2_instance.go) and pulumi-aws 7.51.1 names
// them:
//
//   - rootBlockDevice (root_block_device: a list of MaxItems 1, Optional and Computed, flattened
//     to an object): sent in RunInstances as the BlockDeviceMapping of the AMI's root device
//     name (FetchRootDeviceName: DescribeImages); read back from DescribeInstances and
//     DescribeVolumes. volumeSize, volumeType, iops and throughput change in place with
//     ModifyVolume (then the modification is waited for), deleteOnTermination with
//     ModifyInstanceAttribute, tags with the volume's tags; encrypted and kmsKeyId are ForceNew.
//   - metadataOptions (metadata_options: MaxItems 1, Optional and Computed, every field Optional
//     and Computed): RunInstances' MetadataOptions; read back from DescribeInstances; a change is
//     ModifyInstanceMetadataOptions with every field, then a wait until EC2 says "applied".
//   - instanceInitiatedShutdownBehavior (Optional, Computed): RunInstances; read back with
//     DescribeInstanceAttribute; a change is ModifyInstanceAttribute, in place.
//
// The bridge reports a change inside a block by its path ("rootBlockDevice.volumeSize") in the
// detailed diff, and a ForceNew field's change by the top-level property in `replaces`.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	rootBlockDeviceType = "aws:ec2/InstanceRootBlockDevice:InstanceRootBlockDevice"
	metadataOptionsType = "aws:ec2/InstanceMetadataOptions:InstanceMetadataOptions"
)

// volumeTypes are EC2's (ec2.VolumeType_Values), which the provider's schema validates against.
var volumeTypes = []string{"standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"}

// A field of a block: whether it is an input, whether a change replaces the instance.
var rootBlockDeviceFields = []prop{
	{name: "deleteOnTermination", kind: kBool, input: true, output: true, def: defaultOf(boolProp(true)),
		desc: "Whether the volume is deleted when the instance terminates (true by default). In place."},
	{name: "encrypted", kind: kBool, input: true, output: true, computed: true, replace: true,
		desc: "Whether the volume is encrypted. A change replaces the instance."},
	{name: "iops", kind: kInt, input: true, output: true, computed: true,
		desc: "Provisioned IOPS (io1, io2, gp3). In place (ModifyVolume)."},
	{name: "kmsKeyId", kind: kString, input: true, output: true, computed: true, replace: true,
		desc: "ARN of the KMS key that encrypts the volume. A change replaces the instance."},
	{name: "tags", kind: kStringMap, input: true, output: true,
		desc: "Tags of the volume, set after launch (conflicts with volumeTags). In place."},
	{name: "throughput", kind: kInt, input: true, output: true, computed: true,
		desc: "Throughput in MiB/s (gp3). In place (ModifyVolume)."},
	{name: "volumeSize", kind: kInt, input: true, output: true, computed: true,
		desc: "Size in GiB (the AMI's by default). In place (ModifyVolume)."},
	{name: "volumeType", kind: kString, input: true, output: true, computed: true,
		desc: "standard, gp2, gp3, io1, io2, sc1 or st1 (the AMI's by default). In place (ModifyVolume)."},
	{name: "deviceName", kind: kString, output: true, desc: "The AMI's root device name, e.g. /dev/sda1."},
	{name: "volumeId", kind: kString, output: true, desc: "ID of the volume."},
	{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags of the volume, with default tags (none here)."},
}

var metadataOptionsFields = []prop{
	{name: "httpEndpoint", kind: kString, input: true, output: true, computed: true,
		desc: "enabled or disabled: whether the metadata service answers (EC2's default enabled)."},
	{name: "httpProtocolIpv6", kind: kString, input: true, output: true, computed: true,
		desc: "enabled or disabled: the service's IPv6 address (EC2's default disabled)."},
	{name: "httpPutResponseHopLimit", kind: kInt, input: true, output: true, computed: true,
		desc: "1 to 64: how many network hops a token response may travel (EC2's default 1)."},
	{name: "httpTokens", kind: kString, input: true, output: true, computed: true,
		desc: "optional or required: required makes IMDSv2 (session tokens) mandatory."},
	{name: "instanceMetadataTags", kind: kString, input: true, output: true, computed: true,
		desc: "enabled or disabled: the instance's tags in the metadata service (EC2's default disabled)."},
}

// checkInstanceOptions validates the three options as the provider's schema does.
func checkInstanceOptions(n view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	enum := func(path, got string, valid ...string) {
		if got != "" && !slices.Contains(valid, got) {
			failures = append(failures, enumFailure(path, got, valid...))
		}
	}
	if n.known("instanceInitiatedShutdownBehavior") {
		enum("instanceInitiatedShutdownBehavior", n.str("instanceInitiatedShutdownBehavior"), "stop", "terminate")
	}
	if v, ok := n.get("rootBlockDevice"); ok && v.IsObject() {
		rbd := view(v.ObjectValue())
		const p = "rootBlockDevice."
		if rbd.known("volumeType") {
			enum(p+"volumeType", rbd.str("volumeType"), volumeTypes...)
		}
		for _, k := range []string{"volumeSize", "iops", "throughput"} {
			if x, ok := rbd.number(k); ok && x < 0 {
				failures = append(failures, failure(p+k, "expected %s%s to be at least (0), got %d", p, k, x))
			}
		}
		if rbd.has("tags") && n.has("volumeTags") {
			failures = append(failures, failure(p+"tags",
				"\"rootBlockDevice.tags\": conflicts with volumeTags (tag the volumes with one of the two)"))
		}
		if rbd.known("tags") {
			failures = append(failures, checkTags(p+"tags", rbd.strMap("tags"))...)
		}
	}
	if v, ok := n.get("metadataOptions"); ok && v.IsObject() {
		mo := view(v.ObjectValue())
		const p = "metadataOptions."
		for _, k := range []string{"httpEndpoint", "httpProtocolIpv6", "instanceMetadataTags"} {
			if mo.known(k) {
				enum(p+k, mo.str(k), "enabled", "disabled")
			}
		}
		if mo.known("httpTokens") {
			enum(p+"httpTokens", mo.str("httpTokens"), "optional", "required")
		}
		if x, ok := mo.number("httpPutResponseHopLimit"); ok && (x < 1 || x > 64) {
			failures = append(failures, failure(p+"httpPutResponseHopLimit",
				"expected %shttpPutResponseHopLimit to be in the range (1 - 64), got %d", p, x))
		}
	}
	return failures
}

// withBlockDefaults sets rootBlockDevice.deleteOnTermination to its default (true) when the
// block is given without it, as the provider's Check does for a field with a Default.
func withBlockDefaults(m resource.PropertyMap) {
	v, ok := m["rootBlockDevice"]
	if !ok || !v.IsObject() {
		return
	}
	obj := copyMap(v.ObjectValue())
	for _, f := range rootBlockDeviceFields {
		k := resource.PropertyKey(f.name)
		if x, ok := obj[k]; f.def != nil && (!ok || x.IsNull()) {
			obj[k] = *f.def
		}
	}
	m["rootBlockDevice"] = resource.NewObjectProperty(obj)
}

// usesIops / usesThroughput: the volume types EC2 takes those settings for.
func usesIops(volumeType string) bool {
	return slices.Contains([]string{"io1", "io2", "gp3"}, strings.ToLower(volumeType))
}

func usesThroughput(volumeType string) bool { return strings.ToLower(volumeType) == "gp3" }

// blockFieldChanged: a field of a block, old state against new input. A field the input leaves
// out is the provider's (Optional and Computed), or its default; iops and throughput of 0 on a
// volume type without them are no change (iopsDiffSuppressFunc, throughputDiffSuppressFunc).
func blockFieldChanged(f prop, olds, news view) bool {
	newV, ok := news.get(f.name)
	switch {
	case ok && newV.ContainsUnknowns():
		return true
	case !ok && f.def != nil:
		newV, ok = *f.def, true
	case !ok && f.computed:
		return false
	}
	if f.name == "iops" || f.name == "throughput" {
		n, _ := news.number(f.name)
		volumeType := news.str("volumeType")
		if volumeType == "" {
			volumeType = olds.str("volumeType")
		}
		if n == 0 && ((f.name == "iops" && !usesIops(volumeType)) || (f.name == "throughput" && !usesThroughput(volumeType))) {
			return false
		}
	}
	if !ok {
		newV = zero(f.kind)
	}
	return !equalValues(valueOr(olds, &f), newV)
}

// blockDiff replaces the top-level entry of block name in resp by one per changed field, and
// names the block in replaces when a ForceNew field changed.
func blockDiff(resp *pulumirpc.DiffResponse, name string, fields []prop, olds, news view) {
	newV, ok := news.get(name)
	if !ok {
		return // Optional and Computed: left out, the instance keeps what it has
	}
	if _, changed := resp.DetailedDiff[name]; !changed {
		return
	}
	if !newV.IsObject() {
		return // unknown as a whole: the spec's entry stands
	}
	delete(resp.DetailedDiff, name)
	o := view{}
	if oldV, ok := olds.get(name); ok && oldV.IsObject() {
		o = view(oldV.ObjectValue())
	}
	n := view(newV.ObjectValue())
	replace := false
	for _, f := range fields {
		if !f.input || !blockFieldChanged(f, o, n) {
			continue
		}
		kind := pulumirpc.PropertyDiff_UPDATE
		if !o.has(f.name) {
			kind = pulumirpc.PropertyDiff_ADD
		}
		if f.replace {
			kind++
			replace = true
		}
		resp.DetailedDiff[name+"."+f.name] = &pulumirpc.PropertyDiff{Kind: kind}
	}
	if replace && !slices.Contains(resp.Replaces, name) {
		resp.Replaces = append(resp.Replaces, name)
	}
}

// blockEqual is the spec-level comparison of a block: no field changed.
func blockEqual(fields []prop) func(old, new resource.PropertyValue, _ view) bool {
	return func(old, new resource.PropertyValue, _ view) bool {
		if !new.IsObject() {
			return false
		}
		o := view{}
		if old.IsObject() {
			o = view(old.ObjectValue())
		}
		n := view(new.ObjectValue())
		for _, f := range fields {
			if f.input && blockFieldChanged(f, o, n) {
				return false
			}
		}
		return true
	}
}

// mergeBlock is a block's preview: the old state's fields, with the fields the input gives.
func mergeBlock(old, new resource.PropertyValue) resource.PropertyValue {
	if !new.IsObject() {
		return new
	}
	out := resource.PropertyMap{}
	if old.IsObject() {
		out = copyMap(old.ObjectValue())
	}
	for k, v := range new.ObjectValue() {
		if !v.IsNull() {
			out[k] = v
		}
	}
	return resource.NewObjectProperty(out)
}

// rootDeviceName is the AMI's root device as the provider finds it (FetchRootDeviceName): the
// image's RootDeviceName, or the first mapping's device when the name is not among its
// mappings; none for an instance-store AMI.
func rootDeviceName(ctx context.Context, c *clients, ami string) (string, error) {
	out, err := c.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{ami}})
	if err != nil {
		return "", fmt.Errorf("reading EC2 AMI (%s): %w", ami, apiError(err))
	}
	if len(out.Images) == 0 {
		return "", fmt.Errorf("Expected 1 AMI for ID: %s, got none", ami)
	}
	img := out.Images[0]
	if img.RootDeviceType == ec2types.DeviceTypeInstanceStore {
		return "", fmt.Errorf("AMI %s is instance-store backed: it has no root EBS volume for rootBlockDevice", ami)
	}
	name := aws.ToString(img.RootDeviceName)
	inMappings := false
	for _, m := range img.BlockDeviceMappings {
		inMappings = inMappings || aws.ToString(m.DeviceName) == name
	}
	if !inMappings && len(img.BlockDeviceMappings) > 0 {
		name = aws.ToString(img.BlockDeviceMappings[0].DeviceName)
	}
	if name == "" {
		return "", fmt.Errorf("Error finding Root Device Name for AMI (%s)", ami)
	}
	return name, nil
}

// rootBlockDeviceMapping is RunInstances' mapping for the rootBlockDevice input.
func rootBlockDeviceMapping(ctx context.Context, c *clients, ami string, rbd view) (ec2types.BlockDeviceMapping, error) {
	ebs := &ec2types.EbsBlockDevice{DeleteOnTermination: aws.Bool(true)}
	if v, ok := rbd.get("deleteOnTermination"); ok && v.IsBool() {
		ebs.DeleteOnTermination = aws.Bool(v.BoolValue())
	}
	if rbd.boolean("encrypted") {
		ebs.Encrypted = aws.Bool(true)
	}
	if k := rbd.str("kmsKeyId"); k != "" {
		ebs.KmsKeyId = aws.String(k)
	}
	if size, _ := rbd.number("volumeSize"); size != 0 {
		ebs.VolumeSize = aws.Int32(int32(size))
	}
	if t := rbd.str("volumeType"); t != "" {
		ebs.VolumeType = ec2types.VolumeType(t)
		if iops, _ := rbd.number("iops"); iops > 0 {
			if !usesIops(t) {
				return ec2types.BlockDeviceMapping{}, fmt.Errorf(
					"creating resource: iops attribute not supported for root_block_device with volume_type %s", t)
			}
			ebs.Iops = aws.Int32(int32(iops))
		}
		if tp, _ := rbd.number("throughput"); tp > 0 {
			if !usesThroughput(t) {
				return ec2types.BlockDeviceMapping{}, fmt.Errorf(
					"creating resource: throughput attribute not supported for root_block_device with volume_type %s", t)
			}
			ebs.Throughput = aws.Int32(int32(tp))
		}
	}
	device, err := rootDeviceName(ctx, c, ami)
	if err != nil {
		return ec2types.BlockDeviceMapping{}, err
	}
	return ec2types.BlockDeviceMapping{DeviceName: aws.String(device), Ebs: ebs}, nil
}

// metadataOptionsRequest is RunInstances' MetadataOptions: the fields given; the token, hop
// limit and tag settings only while the endpoint is not disabled (EC2 takes them only then).
func metadataOptionsRequest(mo view) *ec2types.InstanceMetadataOptionsRequest {
	out := &ec2types.InstanceMetadataOptionsRequest{}
	endpoint := mo.str("httpEndpoint")
	if endpoint != "" {
		out.HttpEndpoint = ec2types.InstanceMetadataEndpointState(endpoint)
	}
	if v := mo.str("httpProtocolIpv6"); v != "" {
		out.HttpProtocolIpv6 = ec2types.InstanceMetadataProtocolState(v)
	}
	if endpoint == string(ec2types.InstanceMetadataEndpointStateDisabled) {
		return out
	}
	if v := mo.str("httpTokens"); v != "" {
		out.HttpTokens = ec2types.HttpTokensState(v)
	}
	if v, _ := mo.number("httpPutResponseHopLimit"); v != 0 {
		out.HttpPutResponseHopLimit = aws.Int32(int32(v))
	}
	if v := mo.str("instanceMetadataTags"); v != "" {
		out.InstanceMetadataTags = ec2types.InstanceMetadataTagsState(v)
	}
	return out
}

// readMetadataOptions is the state's metadataOptions (flattenInstanceMetadataOptions).
func readMetadataOptions(inst *ec2types.Instance) (resource.PropertyValue, bool) {
	mo := inst.MetadataOptions
	if mo == nil {
		return resource.PropertyValue{}, false
	}
	return resource.NewObjectProperty(resource.PropertyMap{
		"httpEndpoint":            strProp(string(mo.HttpEndpoint)),
		"httpProtocolIpv6":        strProp(string(mo.HttpProtocolIpv6)),
		"httpPutResponseHopLimit": numProp(int64(aws.ToInt32(mo.HttpPutResponseHopLimit))),
		"httpTokens":              strProp(string(mo.HttpTokens)),
		"instanceMetadataTags":    strProp(string(mo.InstanceMetadataTags)),
	}), true
}

// readRootBlockDevice is the state's rootBlockDevice (readBlockDevicesFromInstance): the root
// device's mapping and its volume; the volume's tags only when volumeTags is not set.
func readRootBlockDevice(ctx context.Context, c *clients, inst *ec2types.Instance, args view,
) (resource.PropertyValue, bool, error) {
	var root *ec2types.InstanceBlockDeviceMapping
	for i := range inst.BlockDeviceMappings {
		m := &inst.BlockDeviceMappings[i]
		if m.Ebs != nil && aws.ToString(m.DeviceName) == aws.ToString(inst.RootDeviceName) {
			root = m
		}
	}
	if root == nil || aws.ToString(root.Ebs.VolumeId) == "" {
		return resource.PropertyValue{}, false, nil
	}
	volumeID := aws.ToString(root.Ebs.VolumeId)
	out, err := c.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{VolumeIds: []string{volumeID}})
	if err != nil {
		return resource.PropertyValue{}, false, fmt.Errorf("reading block devices: %w", apiError(err))
	}
	if len(out.Volumes) == 0 {
		return resource.PropertyValue{}, false, nil
	}
	vol := out.Volumes[0]
	m := resource.PropertyMap{
		"volumeId":   strProp(volumeID),
		"deviceName": strProp(aws.ToString(root.DeviceName)),
		"encrypted":  boolProp(aws.ToBool(vol.Encrypted)),
		"volumeType": strProp(string(vol.VolumeType)),
	}
	if root.Ebs.DeleteOnTermination != nil {
		m["deleteOnTermination"] = boolProp(aws.ToBool(root.Ebs.DeleteOnTermination))
	}
	if vol.Size != nil {
		m["volumeSize"] = numProp(int64(aws.ToInt32(vol.Size)))
	}
	if vol.Iops != nil {
		m["iops"] = numProp(int64(aws.ToInt32(vol.Iops)))
	}
	if vol.Throughput != nil {
		m["throughput"] = numProp(int64(aws.ToInt32(vol.Throughput)))
	}
	if vol.KmsKeyId != nil {
		m["kmsKeyId"] = strProp(aws.ToString(vol.KmsKeyId))
	}
	if !args.has("volumeTags") || len(args.strMap("volumeTags")) == 0 {
		tags := tagsFromEC2(vol.Tags)
		m["tags"], m["tagsAll"] = strMapProp(tags), strMapProp(tags)
	}
	return resource.NewObjectProperty(m), true, nil
}

// readShutdownBehavior is the instance's instanceInitiatedShutdownBehavior attribute.
func readShutdownBehavior(ctx context.Context, c *clients, id string) (string, error) {
	out, err := c.ec2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{
		InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameInstanceInitiatedShutdownBehavior,
	})
	if err != nil {
		return "", fmt.Errorf("getting attribute (instanceInitiatedShutdownBehavior): %w", apiError(err))
	}
	if out.InstanceInitiatedShutdownBehavior == nil {
		return "", nil
	}
	return aws.ToString(out.InstanceInitiatedShutdownBehavior.Value), nil
}

// updateInstanceOptions applies the in-place changes of the three options, as
// resourceInstanceUpdate does: the shutdown behaviour, the metadata options, the root volume.
func updateInstanceOptions(ctx context.Context, c *clients, id string, o, n view) error {
	if n.known("instanceInitiatedShutdownBehavior") &&
		n.str("instanceInitiatedShutdownBehavior") != o.str("instanceInitiatedShutdownBehavior") {
		// The Attribute/Value form of the request, which EC2 documents for this attribute beside
		// the InstanceInitiatedShutdownBehavior one the provider sends: moto's server takes only
		// this form (the other one it reads as a security group change to no groups).
		if _, err := c.ec2.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{
			InstanceId: aws.String(id),
			Attribute:  ec2types.InstanceAttributeNameInstanceInitiatedShutdownBehavior,
			Value:      aws.String(n.str("instanceInitiatedShutdownBehavior")),
		}); err != nil {
			return fmt.Errorf("modifying InstanceInitiatedShutdownBehavior: %w", apiError(err))
		}
	}
	if instanceSpec.prop("metadataOptions").changed(o, n) {
		if err := updateMetadataOptions(ctx, c, id, o, n); err != nil {
			return err
		}
	}
	if instanceSpec.prop("rootBlockDevice").changed(o, n) {
		if err := updateRootBlockDevice(ctx, c, id, o, n); err != nil {
			return err
		}
	}
	return nil
}

// objectOf is the object under key k, or an empty one.
func objectOf(v view, k string) view {
	if p, ok := v.get(k); ok && p.IsObject() {
		return view(p.ObjectValue())
	}
	return view{}
}

// updateMetadataOptions sends every field, the state's where the input leaves one out (EC2
// keeps a field a request leaves out, moto's server resets it), then waits for "applied".
func updateMetadataOptions(ctx context.Context, c *clients, id string, o, n view) error {
	merged := view(mergeBlock(resource.NewObjectProperty(resource.PropertyMap(objectOf(o, "metadataOptions"))),
		resource.NewObjectProperty(resource.PropertyMap(objectOf(n, "metadataOptions")))).ObjectValue())
	req := metadataOptionsRequest(merged)
	in := &ec2.ModifyInstanceMetadataOptionsInput{
		InstanceId:              aws.String(id),
		HttpEndpoint:            req.HttpEndpoint,
		HttpProtocolIpv6:        req.HttpProtocolIpv6,
		HttpTokens:              req.HttpTokens,
		HttpPutResponseHopLimit: req.HttpPutResponseHopLimit,
		InstanceMetadataTags:    req.InstanceMetadataTags,
	}
	_, err := c.ec2.ModifyInstanceMetadataOptions(ctx, in)
	if hasMessage(err, "UnsupportedOperation", "InstanceMetadataTags") {
		in.InstanceMetadataTags = "" // as the provider: once more without the tags setting
		_, err = c.ec2.ModifyInstanceMetadataOptions(ctx, in)
	}
	if err != nil {
		return fmt.Errorf("metadata options: %w", apiError(err))
	}
	return poll(ctx, func(ctx context.Context) (bool, error) {
		inst, err := findInstance(ctx, c, id)
		if err != nil {
			return false, err
		}
		return inst.MetadataOptions == nil ||
			inst.MetadataOptions.State == ec2types.InstanceMetadataOptionsStateApplied, nil
	})
}

// updateRootBlockDevice modifies the root volume in place (ModifyVolume for size, type, IOPS
// and throughput, waited for), its DeleteOnTermination flag and its tags.
func updateRootBlockDevice(ctx context.Context, c *clients, id string, o, n view) error {
	old, nw := objectOf(o, "rootBlockDevice"), objectOf(n, "rootBlockDevice")
	if old.str("volumeId") == "" {
		// A state written before the stand-in read root volumes: read the volume now.
		inst, err := findInstance(ctx, c, id)
		if err != nil {
			return fmt.Errorf("root block device: %w", err)
		}
		rbd, ok, err := readRootBlockDevice(ctx, c, inst, o)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("root block device: EC2 reports no root volume on EC2 Instance (%s)", id)
		}
		old = view(rbd.ObjectValue())
	}
	volumeID := old.str("volumeId")
	field := func(k string) (prop, bool) {
		f := findProp(rootBlockDeviceFields, k)
		return *f, blockFieldChanged(*f, old, nw)
	}
	volumeType := nw.str("volumeType")
	if volumeType == "" {
		volumeType = old.str("volumeType")
	}
	in := &ec2.ModifyVolumeInput{VolumeId: aws.String(volumeID)}
	modify := false
	if _, changed := field("volumeSize"); changed {
		if v, _ := nw.number("volumeSize"); v != 0 {
			in.Size, modify = aws.Int32(int32(v)), true
		}
	}
	if _, changed := field("volumeType"); changed && nw.str("volumeType") != "" {
		in.VolumeType, modify = ec2types.VolumeType(nw.str("volumeType")), true
	}
	if _, changed := field("iops"); changed {
		if v, _ := nw.number("iops"); v != 0 {
			if !usesIops(volumeType) {
				return fmt.Errorf("updating instance: iops attribute not supported for type %s", volumeType)
			}
			in.Iops, modify = aws.Int32(int32(v)), true
		}
	}
	if _, changed := field("throughput"); changed {
		if v, _ := nw.number("throughput"); v != 0 {
			if !usesThroughput(volumeType) {
				return fmt.Errorf("updating instance: throughput attribute not supported for type %s", volumeType)
			}
			in.Throughput, modify = aws.Int32(int32(v)), true
		}
	}
	if modify {
		if _, err := c.ec2.ModifyVolume(ctx, in); err != nil {
			return fmt.Errorf("volume (%s): %w", volumeID, apiError(err))
		}
		if err := waitVolumeModified(ctx, c, volumeID); err != nil {
			return fmt.Errorf("waiting for volume (%s) update: %w", volumeID, err)
		}
	}
	if _, changed := field("deleteOnTermination"); changed {
		want := true
		if v, ok := nw.get("deleteOnTermination"); ok && v.IsBool() {
			want = v.BoolValue()
		}
		device := old.str("deviceName")
		if _, err := c.ec2.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{
			InstanceId: aws.String(id),
			BlockDeviceMappings: []ec2types.InstanceBlockDeviceMappingSpecification{{
				DeviceName: aws.String(device),
				Ebs:        &ec2types.EbsInstanceBlockDeviceSpecification{DeleteOnTermination: aws.Bool(want)},
			}},
		}); err != nil {
			return fmt.Errorf("root block device (%s) DeleteOnTermination attribute: %w", device, apiError(err))
		}
	}
	if _, changed := field("tags"); changed {
		if err := updateEC2Tags(ctx, c, []string{volumeID}, old.strMap("tags"), nw.strMap("tags")); err != nil {
			return fmt.Errorf("updating tags for volume (%s): %w", volumeID, err)
		}
	}
	return nil
}

// waitVolumeModified waits until the volume's latest modification is optimizing or completed
// (WaitVolumeModificationComplete); failed is an error.
func waitVolumeModified(ctx context.Context, c *clients, volumeID string) error {
	return poll(ctx, func(ctx context.Context) (bool, error) {
		out, err := c.ec2.DescribeVolumesModifications(ctx, &ec2.DescribeVolumesModificationsInput{
			VolumeIds: []string{volumeID},
		})
		if err != nil {
			return false, apiError(err)
		}
		if len(out.VolumesModifications) == 0 {
			return true, nil
		}
		last := out.VolumesModifications[len(out.VolumesModifications)-1]
		switch last.ModificationState {
		case ec2types.VolumeModificationStateCompleted, ec2types.VolumeModificationStateOptimizing:
			return true, nil
		case ec2types.VolumeModificationStateFailed:
			return false, fmt.Errorf("modification failed: %s", aws.ToString(last.StatusMessage))
		}
		return false, nil
	})
}
