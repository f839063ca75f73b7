package main

// aws:ec2/instance:Instance, as terraform-provider-aws v6's aws_instance behaves for the
// inputs this project uses (internal/service/ec2/ec2_instance.go):
//
//   - launched with RunInstances in one request: tags and volumeTags as TagSpecifications,
//     vpcSecurityGroupIds as SecurityGroupIds beside subnetId, iamInstanceProfile by name,
//     user data base64-encoded once (left as it is when it already is base64), unlimited CPU
//     credits for t3 types; then waited for until running;
//   - userData is kept in the state as the hex SHA-1 of its (base64-decoded when possible)
//     bytes, never the data; a change stops the instance, modifies the attribute and starts
//     it again, or replaces the instance when userDataReplaceOnChange is true;
//   - ami, subnetId and region changes replace; an instanceType change stops, modifies and
//     starts the instance, unless the two types share no architecture: then it replaces;
//   - vpcSecurityGroupIds (the primary network interface's groups), iamInstanceProfile (the
//     association), tags and volumeTags update in place;
//   - delete turns API termination protection off, terminates and waits for "terminated";
//   - instanceMarketOptions (spot capacity) goes into RunInstances; a change replaces the
//     instance; a spot instance's options are read back from its spot request; an instance
//     EC2 terminated (an interruption among others) reads as gone, and the engine hears why;
//   - rootBlockDevice, metadataOptions and instanceInitiatedShutdownBehavior (instanceopts.go):
//     into RunInstances; in place, except a root volume's encryption, which replaces.

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const instanceToken = "aws:ec2/instance:Instance"

// maxUserData is the terraform provider's limit (ValidateFunc StringLenBetween(0, 16384)).
const maxUserData = 16384

// emptyUserDataHash is the SHA-1 of nothing, which EC2 sometimes reports for no user data.
const emptyUserDataHash = "da39a3ee5e6b4b0d3255bfef95601890afd80709"

type instanceResource struct{}

var instanceSpec = &resourceSpec{
	token: instanceToken,
	props: []prop{
		{name: "ami", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "AMI to launch the instance with. A change replaces the instance."},
		{name: "instanceType", kind: kString, input: true, output: true, computed: true,
			desc: "Instance type. A change stops the instance, modifies it and starts it (replaces it " +
				"when the two types share no architecture)."},
		{name: "subnetId", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "VPC subnet to launch in. A change replaces the instance."},
		{name: "vpcSecurityGroupIds", kind: kStringSet, input: true, output: true, computed: true,
			desc: "Security group IDs of the instance (a set)."},
		{name: "iamInstanceProfile", kind: kString, input: true, output: true, computed: true,
			desc: "Name of the IAM instance profile."},
		{name: "userData", kind: kString, input: true, output: true, computed: true, equal: userDataEqual,
			replaceIf: func(_, news view) bool { return news.boolean("userDataReplaceOnChange") },
			desc: "User data; the state keeps the hex SHA-1 of it. A change stops and starts the " +
				"instance, or replaces it with userDataReplaceOnChange."},
		{name: "userDataReplaceOnChange", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Whether a userData change replaces the instance instead of stopping and starting it."},
		{name: "instanceMarketOptions", kind: kObject, input: true, output: true, computed: true, replace: true,
			equal: givenEqual, fields: marketOptionsFields, ref: marketOptionsType,
			desc: "Market of the instance: spot capacity with its options. A change replaces the instance."},
		{name: "rootBlockDevice", kind: kObject, input: true, output: true, computed: true,
			equal: blockEqual(rootBlockDeviceFields), fields: rootBlockDeviceFields, ref: rootBlockDeviceType,
			desc: "The root volume, on the AMI's root device. Size, type, IOPS, throughput, deleteOnTermination " +
				"and tags change in place; encrypted and kmsKeyId replace the instance."},
		{name: "metadataOptions", kind: kObject, input: true, output: true, computed: true,
			equal: blockEqual(metadataOptionsFields), fields: metadataOptionsFields, ref: metadataOptionsType,
			desc: "The instance metadata service's options (IMDSv2, hop limit...). In place."},
		{name: "instanceInitiatedShutdownBehavior", kind: kString, input: true, output: true, computed: true,
			desc: "stop (EC2's default) or terminate: what a shutdown from inside the instance does. In place."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the instance."},
		{name: "volumeTags", kind: kStringMap, input: true, output: true,
			desc: "Tags of the instance's volumes, set at launch."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the instance; the provider's (the only one this stand-in serves)."},
		{name: "getPasswordData", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Only false in this stand-in."},
		{name: "forceDestroy", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Only false in this stand-in."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the instance."},
		{name: "instanceState", kind: kString, output: true, desc: "pending, running, stopped..."},
		{name: "availabilityZone", kind: kString, output: true, desc: "Availability zone of the instance."},
		{name: "privateIp", kind: kString, output: true, desc: "Private IPv4 address."},
		{name: "privateDns", kind: kString, output: true, desc: "Private DNS name."},
		{name: "publicIp", kind: kString, output: true, desc: "Public IPv4 address, if any."},
		{name: "publicDns", kind: kString, output: true, desc: "Public DNS name, if any."},
		{name: "primaryNetworkInterfaceId", kind: kString, output: true, desc: "ID of the primary network interface."},
		{name: "securityGroups", kind: kStringSet, output: true, desc: "Names of the instance's security groups."},
		{name: "keyName", kind: kString, output: true, desc: "Key pair name, if any."},
		{name: "associatePublicIpAddress", kind: kBool, output: true, desc: "Whether it has a public address."},
		{name: "sourceDestCheck", kind: kBool, output: true, desc: "Source/destination checking."},
		{name: "ebsOptimized", kind: kBool, output: true, desc: "EBS optimization."},
		{name: "monitoring", kind: kBool, output: true, desc: "Detailed monitoring."},
		{name: "tenancy", kind: kString, output: true, desc: "Tenancy."},
		{name: "disableApiTermination", kind: kBool, output: true, desc: "Termination protection (off)."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
		{name: "instanceLifecycle", kind: kString, output: true, desc: "spot for a spot instance, else empty."},
		{name: "spotInstanceRequestId", kind: kString, output: true, desc: "The spot request of a spot instance."},
	},
	unsupported: []string{
		"associatePublicIpAddress", "availabilityZone", "capacityReservationSpecification", "cpuOptions",
		"creditSpecification", "disableApiStop", "disableApiTermination", "ebsBlockDevices", "ebsOptimized",
		"enablePrimaryIpv6", "enclaveOptions", "ephemeralBlockDevices", "hibernation", "hostId",
		"hostResourceGroupArn",
		"ipv6AddressCount", "ipv6Addresses", "keyName", "launchTemplate", "maintenanceOptions",
		"monitoring", "networkInterfaces", "placementGroup", "placementGroupId",
		"placementPartitionNumber", "primaryNetworkInterface", "privateDnsNameOptions", "privateIp",
		"secondaryNetworkInterfaces", "secondaryPrivateIps", "securityGroups",
		"sourceDestCheck", "tenancy", "userDataBase64",
	},
	keepInputs: []string{"userData"},
}

const (
	marketOptionsType = "aws:ec2/InstanceInstanceMarketOptions:InstanceInstanceMarketOptions"
	spotOptionsType   = "aws:ec2/InstanceInstanceMarketOptionsSpotOptions:InstanceInstanceMarketOptionsSpotOptions"
)

// The instance_market_options block of the terraform provider (Optional, Computed, ForceNew,
// MaxItems 1, every field Optional and Computed), flattened to objects as pulumi-aws has it.
var spotOptionsFields = []prop{
	{name: "instanceInterruptionBehavior", kind: kString, input: true, output: true,
		desc: "hibernate, stop or terminate (EC2's default)."},
	{name: "maxPrice", kind: kString, input: true, output: true,
		desc: "The most an hour may cost; EC2's default is the on-demand price."},
	{name: "spotInstanceType", kind: kString, input: true, output: true,
		desc: "one-time (EC2's default) or persistent."},
	{name: "validUntil", kind: kString, input: true, output: true,
		desc: "End of a persistent request, RFC 3339."},
}

var marketOptionsFields = []prop{
	{name: "marketType", kind: kString, input: true, output: true, desc: "spot (the default)."},
	{name: "spotOptions", kind: kObject, input: true, output: true, fields: spotOptionsFields, ref: spotOptionsType,
		desc: "Options of the spot request."},
}

// enumFailure is the terraform provider's enum.Validate message.
func enumFailure(path, got string, valid ...string) *pulumirpc.CheckFailure {
	return failure(path, "expected %s to be one of %s, got %s", path, "["+strings.Join(valid, " ")+"]", got)
}

// checkMarketOptions validates instanceMarketOptions as the provider's schema and EC2 do.
func checkMarketOptions(n view) []*pulumirpc.CheckFailure {
	v, ok := n.get("instanceMarketOptions")
	if !ok || !v.IsObject() || v.ContainsUnknowns() {
		return nil
	}
	const path = "instanceMarketOptions"
	mo := view(v.ObjectValue())
	var failures []*pulumirpc.CheckFailure
	switch t := mo.str("marketType"); t {
	case "", "spot":
	case "capacity-block", "interruptible-capacity-reservation":
		failures = append(failures, failure(path+".marketType",
			"marketType %q is not supported by %s (only spot)", t, standIn))
	default:
		failures = append(failures, enumFailure(path+".marketType", t,
			"spot", "capacity-block", "interruptible-capacity-reservation"))
	}
	so, ok := mo.get("spotOptions")
	if !ok || !so.IsObject() {
		return failures
	}
	spot := view(so.ObjectValue())
	behavior, kind := spot.str("instanceInterruptionBehavior"), spot.str("spotInstanceType")
	if behavior != "" && !slices.Contains([]string{"hibernate", "stop", "terminate"}, behavior) {
		failures = append(failures, enumFailure(path+".spotOptions.instanceInterruptionBehavior", behavior,
			"hibernate", "stop", "terminate"))
	}
	if kind != "" && !slices.Contains([]string{"one-time", "persistent"}, kind) {
		failures = append(failures, enumFailure(path+".spotOptions.spotInstanceType", kind, "one-time", "persistent"))
	}
	if kind == "persistent" && (behavior == "" || behavior == "terminate") {
		failures = append(failures, failure(path+".spotOptions.spotInstanceType",
			"persistent spot requests need instanceInterruptionBehavior hibernate or stop (EC2 refuses terminate)"))
	}
	if until := spot.str("validUntil"); until != "" {
		if _, err := time.Parse(time.RFC3339, until); err != nil {
			failures = append(failures, failure(path+".spotOptions.validUntil",
				"validUntil %q is not an RFC 3339 time (YYYY-MM-DDTHH:MM:SSZ)", until))
		}
	}
	return failures
}

// marketOptionsRequest is RunInstances' InstanceMarketOptions for the input (spot by default).
func marketOptionsRequest(mo view) *ec2types.InstanceMarketOptionsRequest {
	out := &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}
	if t := mo.str("marketType"); t != "" {
		out.MarketType = ec2types.MarketType(t)
	}
	so, ok := mo.get("spotOptions")
	if !ok || !so.IsObject() {
		return out
	}
	spot := view(so.ObjectValue())
	opts := &ec2types.SpotMarketOptions{}
	if v := spot.str("instanceInterruptionBehavior"); v != "" {
		opts.InstanceInterruptionBehavior = ec2types.InstanceInterruptionBehavior(v)
	}
	if v := spot.str("maxPrice"); v != "" {
		opts.MaxPrice = aws.String(v)
	}
	if v := spot.str("spotInstanceType"); v != "" {
		opts.SpotInstanceType = ec2types.SpotInstanceType(v)
	}
	if v := spot.str("validUntil"); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			opts.ValidUntil = aws.Time(t)
		}
	}
	out.SpotOptions = opts
	return out
}

// readMarketOptions is the state's instanceMarketOptions: read from the spot request of a spot
// instance (as the terraform provider reads it), absent for an on-demand one. A spot instance
// without a spot request (moto's server makes none) keeps the options it was launched with.
func readMarketOptions(ctx context.Context, c *clients, inst *ec2types.Instance, args view,
) (resource.PropertyValue, bool, error) {
	requestID := aws.ToString(inst.SpotInstanceRequestId)
	if requestID == "" || inst.InstanceLifecycle == "" {
		if inst.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot {
			return resource.PropertyValue{}, false, nil
		}
		if v, ok := args.get("instanceMarketOptions"); ok {
			return v, true, nil
		}
		return resource.NewObjectProperty(resource.PropertyMap{"marketType": strProp("spot")}), true, nil
	}
	out, err := c.ec2.DescribeSpotInstanceRequests(ctx, &ec2.DescribeSpotInstanceRequestsInput{
		SpotInstanceRequestIds: []string{requestID},
	})
	if err != nil {
		return resource.PropertyValue{}, false, fmt.Errorf("reading EC2 Spot Instance Request (%s): %w", requestID, apiError(err))
	}
	if len(out.SpotInstanceRequests) == 0 {
		return resource.PropertyValue{}, false, fmt.Errorf("reading EC2 Spot Instance Request (%s): not found", requestID)
	}
	r := out.SpotInstanceRequests[0]
	spot := resource.PropertyMap{
		"instanceInterruptionBehavior": strProp(string(r.InstanceInterruptionBehavior)),
		"spotInstanceType":             strProp(string(r.Type)),
	}
	if r.SpotPrice != nil {
		spot["maxPrice"] = strProp(aws.ToString(r.SpotPrice))
	}
	if r.ValidUntil != nil {
		spot["validUntil"] = strProp(r.ValidUntil.UTC().Format(time.RFC3339))
	}
	return resource.NewObjectProperty(resource.PropertyMap{
		"marketType":  strProp("spot"),
		"spotOptions": resource.NewObjectProperty(spot),
	}), true, nil
}

func (instanceResource) spec() *resourceSpec { return instanceSpec }

func (instanceResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return 10 * time.Minute, 10 * time.Minute, 20 * time.Minute
}

// userDataHashSum is the terraform provider's state form of user data: the hex SHA-1 of the
// base64-decoded data when it decodes, else of the data itself.
func userDataHashSum(userData string) string {
	v, err := base64.StdEncoding.DecodeString(userData)
	if err != nil {
		v = []byte(userData)
	}
	sum := sha1.Sum(v) //nolint:gosec // the terraform provider's state form, not a security use
	return hex.EncodeToString(sum[:])
}

// base64Once encodes user data for the API unless it already is base64 (Base64EncodeOnce).
func base64Once(s string) string {
	if _, err := base64.StdEncoding.DecodeString(s); err == nil {
		return s
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// userDataBytes is what ModifyInstanceAttribute gets: the data, base64-decoded when it decodes
// (the SDK encodes it again).
func userDataBytes(s string) []byte {
	if v, err := base64.StdEncoding.DecodeString(s); err == nil {
		return v
	}
	return []byte(s)
}

// userDataEqual: the state holds the hash; no user data equals the hash of nothing.
func userDataEqual(old, new resource.PropertyValue, _ view) bool {
	o, n := stringOr(old), stringOr(new)
	nh := ""
	if n != "" {
		nh = userDataHashSum(n)
	}
	return o == nh || (o == emptyUserDataHash && nh == "") || (o == "" && nh == emptyUserDataHash)
}

// hashedUserData turns a userData input (plain, secret or unknown) into its state form, as
// secret as the input was.
func hashedUserData(v resource.PropertyValue) resource.PropertyValue {
	r := reveal(v)
	if r.ContainsUnknowns() {
		return v
	}
	if !r.IsString() || r.StringValue() == "" {
		return resource.NewNullProperty()
	}
	return secretLike(strProp(userDataHashSum(r.StringValue())), v)
}

func (instanceResource) check(_ *pulumirpc.CheckRequest, _, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	instanceSpec.applyDefaults(checked)
	withBlockDefaults(checked)
	n := view(revealMap(checked))
	var failures []*pulumirpc.CheckFailure
	if !n.has("ami") {
		failures = append(failures, failure("ami",
			"ami is required: %s has no launchTemplate to take it from", standIn))
	}
	if !n.has("instanceType") {
		failures = append(failures, failure("instanceType",
			"instanceType is required: %s has no launchTemplate to take it from", standIn))
	}
	if n.known("userData") && len(n.str("userData")) > maxUserData {
		failures = append(failures, failure("userData",
			"expected length of userData to be in the range (0 - %d), got %d characters",
			maxUserData, len(n.str("userData"))))
	}
	for _, k := range []string{"getPasswordData", "forceDestroy"} {
		if n.boolean(k) {
			failures = append(failures, failure(k, "%s=true is not supported by %s (only false)", k, standIn))
		}
	}
	failures = append(failures, checkMarketOptions(n)...)
	failures = append(failures, checkInstanceOptions(n)...)
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	if n.known("volumeTags") {
		failures = append(failures, checkTags("volumeTags", n.strMap("volumeTags"))...)
	}
	return checked, failures
}

func (instanceResource) diff(ctx context.Context, c *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	resp := instanceSpec.diff(olds, news, ignore)
	blockDiff(resp, "rootBlockDevice", rootBlockDeviceFields, olds, news)
	blockDiff(resp, "metadataOptions", metadataOptionsFields, olds, news)
	// An instance type of another architecture can't boot the instance's image: replace
	// (the terraform provider's CustomizeDiff ForceNewIf on instance_type).
	if _, changed := resp.DetailedDiff["instanceType"]; changed && c != nil && news.known("instanceType") {
		oldArchs, ok1 := c.types.archs(ctx, olds.str("instanceType"))
		newArchs, ok2 := c.types.archs(ctx, news.str("instanceType"))
		if ok1 && ok2 && olds.str("instanceType") != news.str("instanceType") && !shareArch(oldArchs, newArchs) {
			markReplace(resp, "instanceType")
		}
	}
	return resp
}

// uniqueToken is a client token: a create retried by the SDK makes one instance.
func uniqueToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "pulumi-" + hex.EncodeToString(b)
}

func (instanceResource) create(ctx context.Context, c *clients, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	name := n.strMap("tags")["Name"]
	what := "creating EC2 Instance"
	if name != "" {
		what = fmt.Sprintf("creating EC2 Instance %q", name)
	}
	instanceType := n.str("instanceType")
	in := &ec2.RunInstancesInput{
		ImageId:               aws.String(n.str("ami")),
		InstanceType:          ec2types.InstanceType(instanceType),
		MinCount:              aws.Int32(1),
		MaxCount:              aws.Int32(1),
		ClientToken:           aws.String(uniqueToken()),
		DisableApiTermination: aws.Bool(false),
		EbsOptimized:          aws.Bool(false),
		Monitoring:            &ec2types.RunInstancesMonitoringEnabled{Enabled: aws.Bool(false)},
	}
	if strings.HasPrefix(instanceType, "t3") {
		in.CreditSpecification = &ec2types.CreditSpecificationRequest{CpuCredits: aws.String("unlimited")}
	}
	if s := n.str("subnetId"); s != "" {
		in.SubnetId = aws.String(s)
	}
	if groups := n.strs("vpcSecurityGroupIds"); len(groups) > 0 {
		in.SecurityGroupIds = groups
	}
	if p := n.str("iamInstanceProfile"); p != "" {
		in.IamInstanceProfile = &ec2types.IamInstanceProfileSpecification{Name: aws.String(p)}
	}
	if ud := n.str("userData"); ud != "" {
		in.UserData = aws.String(base64Once(ud))
	}
	if mo, ok := n.get("instanceMarketOptions"); ok && mo.IsObject() {
		in.InstanceMarketOptions = marketOptionsRequest(view(mo.ObjectValue()))
	}
	if rbd, ok := n.get("rootBlockDevice"); ok && rbd.IsObject() {
		mapping, err := rootBlockDeviceMapping(ctx, c, n.str("ami"), view(rbd.ObjectValue()))
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", what, err)
		}
		in.BlockDeviceMappings = []ec2types.BlockDeviceMapping{mapping}
	}
	if mo, ok := n.get("metadataOptions"); ok && mo.IsObject() {
		in.MetadataOptions = metadataOptionsRequest(view(mo.ObjectValue()))
	}
	if b := n.str("instanceInitiatedShutdownBehavior"); b != "" {
		in.InstanceInitiatedShutdownBehavior = ec2types.ShutdownBehavior(b)
	}
	in.TagSpecifications = append(tagSpec(ec2types.ResourceTypeInstance, n.strMap("tags")),
		tagSpec(ec2types.ResourceTypeVolume, n.strMap("volumeTags"))...)

	// IAM instance profiles take a while to propagate in AWS (as the terraform provider, retry).
	out, err := retryWhile(ctx, propagationTimeout, func(err error) bool {
		return hasMessage(err, "InvalidParameterValue", "Invalid IAM Instance Profile") ||
			hasMessage(err, "InvalidParameterValue", " has no associated IAM Roles")
	}, func(ctx context.Context) (*ec2.RunInstancesOutput, error) {
		return c.ec2.RunInstances(ctx, in)
	})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, apiError(err))
	}
	if len(out.Instances) == 0 {
		return "", nil, fmt.Errorf("%s: RunInstances returned no instance", what)
	}
	id := aws.ToString(out.Instances[0].InstanceId)
	inst, err := waitInstance(ctx, c, id, []string{"pending"}, "running")
	if err != nil {
		partial, _ := instanceRead(ctx, c, id, n, news)
		return id, partial, fmt.Errorf("waiting for EC2 Instance (%s) create: %w", id, err)
	}
	// As the provider: the root volume's own tags are set after the launch, a failure only logged.
	if tags := objectOf(n, "rootBlockDevice").strMap("tags"); len(tags) > 0 {
		for _, m := range inst.BlockDeviceMappings {
			if m.Ebs != nil && aws.ToString(m.DeviceName) == aws.ToString(inst.RootDeviceName) {
				_ = updateEC2Tags(ctx, c, []string{aws.ToString(m.Ebs.VolumeId)}, nil, tags)
			}
		}
	}
	state, err := instanceStateOf(ctx, c, inst, n, news)
	if err != nil {
		return id, nil, fmt.Errorf("%s: reading it back: %w", what, err)
	}
	return id, state, nil
}

// spotInterruption is the state reason code of an instance EC2 took back from the spot market.
const spotInterruption = "Server.SpotInstanceTermination"

// goneError is errNotFound for an instance EC2 reports terminated, with EC2's state reason.
type goneError struct {
	id, code, message string
}

func (e goneError) Error() string {
	return fmt.Sprintf("EC2 Instance (%s) is terminated: %s", e.id, e.message)
}

func (e goneError) Is(target error) bool { return target == errNotFound }

// notice is what the engine is told when a refresh finds the instance gone, or "".
func (e goneError) notice() string {
	if e.code != spotInterruption {
		return ""
	}
	return fmt.Sprintf("EC2 Instance (%s) was interrupted: EC2 took its spot capacity back (%s); "+
		"it is gone from the state, and the next `up` launches it again", e.id, e.message)
}

// findInstance reads an instance; a terminated (goneError) or unknown one is errNotFound.
func findInstance(ctx context.Context, c *clients, id string) (*ec2types.Instance, error) {
	out, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if hasCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed") {
		return nil, errNotFound
	}
	if err != nil {
		return nil, apiError(err)
	}
	for _, r := range out.Reservations {
		for i := range r.Instances {
			inst := &r.Instances[i]
			if aws.ToString(inst.InstanceId) != id {
				continue
			}
			if inst.State != nil && inst.State.Name == ec2types.InstanceStateNameTerminated {
				gone := goneError{id: id}
				if inst.StateReason != nil {
					gone.code, gone.message = aws.ToString(inst.StateReason.Code), aws.ToString(inst.StateReason.Message)
				}
				return nil, gone
			}
			return inst, nil
		}
	}
	return nil, errNotFound
}

// waitInstance waits until the instance is in state target, while it is in one of pending.
func waitInstance(ctx context.Context, c *clients, id string, pending []string, target string,
) (*ec2types.Instance, error) {
	var found *ec2types.Instance
	err := poll(ctx, func(ctx context.Context) (bool, error) {
		inst, err := findInstance(ctx, c, id)
		if errors.Is(err, errNotFound) && target == string(ec2types.InstanceStateNameTerminated) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		found = inst
		state := string(inst.State.Name)
		switch {
		case state == target:
			return true, nil
		case slices.Contains(pending, state):
			return false, nil
		}
		reason := ""
		if inst.StateReason != nil {
			reason = ": " + aws.ToString(inst.StateReason.Message)
		}
		return false, fmt.Errorf("unexpected state %q, wanted target %q%s", state, target, reason)
	})
	return found, err
}

// instanceRead reads the instance's state; args are the inputs (or old state) it was made with.
func instanceRead(ctx context.Context, c *clients, id string, args view, raw resource.PropertyMap,
) (resource.PropertyMap, error) {
	inst, err := findInstance(ctx, c, id)
	if err != nil {
		return nil, err
	}
	return instanceStateOf(ctx, c, inst, args, raw)
}

// instanceStateOf is the resource's state: what the API reports, plus what only the inputs
// (or the old state) know. raw is the unrevealed map args was read from, for secretness.
func instanceStateOf(ctx context.Context, c *clients, inst *ec2types.Instance, args view, raw resource.PropertyMap,
) (resource.PropertyMap, error) {
	id := aws.ToString(inst.InstanceId)
	tags := tagsFromEC2(inst.Tags)
	m := resource.PropertyMap{
		"ami":                      strProp(aws.ToString(inst.ImageId)),
		"instanceType":             strProp(string(inst.InstanceType)),
		"subnetId":                 optStr(aws.ToString(inst.SubnetId)),
		"region":                   strProp(c.region),
		"arn":                      strProp(c.arnOf("ec2", c.region, "instance/"+id)),
		"privateIp":                optStr(aws.ToString(inst.PrivateIpAddress)),
		"privateDns":               strProp(aws.ToString(inst.PrivateDnsName)),
		"publicIp":                 strProp(aws.ToString(inst.PublicIpAddress)),
		"publicDns":                strProp(aws.ToString(inst.PublicDnsName)),
		"keyName":                  strProp(aws.ToString(inst.KeyName)),
		"associatePublicIpAddress": boolProp(inst.PublicIpAddress != nil),
		"ebsOptimized":             boolProp(aws.ToBool(inst.EbsOptimized)),
		"sourceDestCheck":          boolProp(aws.ToBool(inst.SourceDestCheck)),
		"disableApiTermination":    boolProp(false),
		"tags":                     strMapProp(tags),
		"tagsAll":                  strMapProp(tags),
		"userDataReplaceOnChange":  boolProp(args.boolean("userDataReplaceOnChange")),
		"getPasswordData":          boolProp(false),
		"forceDestroy":             boolProp(false),
		"instanceLifecycle":        strProp(string(inst.InstanceLifecycle)),
		"spotInstanceRequestId":    strProp(aws.ToString(inst.SpotInstanceRequestId)),
	}
	if market, ok, err := readMarketOptions(ctx, c, inst, args); err != nil {
		return nil, err
	} else if ok {
		m["instanceMarketOptions"] = market
	}
	if inst.State != nil {
		m["instanceState"] = strProp(string(inst.State.Name))
	}
	if mo, ok := readMetadataOptions(inst); ok {
		m["metadataOptions"] = mo
	}
	if rbd, ok, err := readRootBlockDevice(ctx, c, inst, args); err != nil {
		return nil, err
	} else if ok {
		m["rootBlockDevice"] = rbd
	}
	behavior, err := readShutdownBehavior(ctx, c, id)
	if err != nil {
		return nil, err
	}
	m["instanceInitiatedShutdownBehavior"] = optStr(behavior)
	if inst.Placement != nil {
		m["availabilityZone"] = strProp(aws.ToString(inst.Placement.AvailabilityZone))
		m["tenancy"] = strProp(string(inst.Placement.Tenancy))
	}
	if inst.Monitoring != nil {
		m["monitoring"] = boolProp(inst.Monitoring.State == ec2types.MonitoringStateEnabled ||
			inst.Monitoring.State == ec2types.MonitoringStatePending)
	}
	if inst.IamInstanceProfile != nil && inst.IamInstanceProfile.Arn != nil {
		arn := aws.ToString(inst.IamInstanceProfile.Arn)
		m["iamInstanceProfile"] = strProp(arn[strings.LastIndex(arn, "/")+1:])
	}
	var groupIDs, groupNames []string
	for _, g := range inst.SecurityGroups {
		groupIDs = append(groupIDs, aws.ToString(g.GroupId))
		groupNames = append(groupNames, aws.ToString(g.GroupName))
	}
	m["vpcSecurityGroupIds"] = strsProp(groupIDs)
	m["securityGroups"] = strsProp(groupNames)
	for _, ni := range inst.NetworkInterfaces {
		if ni.Attachment != nil && aws.ToInt32(ni.Attachment.DeviceIndex) == 0 {
			m["primaryNetworkInterfaceId"] = strProp(aws.ToString(ni.NetworkInterfaceId))
		}
	}

	attr, err := c.ec2.DescribeInstanceAttribute(ctx, &ec2.DescribeInstanceAttributeInput{
		InstanceId: aws.String(id), Attribute: ec2types.InstanceAttributeNameUserData,
	})
	if err != nil {
		return nil, fmt.Errorf("getting attribute (userData): %w", apiError(err))
	}
	if attr.UserData != nil && aws.ToString(attr.UserData.Value) != "" {
		m["userData"] = secretLike(strProp(userDataHashSum(aws.ToString(attr.UserData.Value))), raw["userData"])
	}

	// As the terraform provider: volume tags are read only when the program sets them.
	if args.has("volumeTags") {
		volumeTags, err := readVolumeTags(ctx, c, id)
		if err != nil {
			return nil, err
		}
		m["volumeTags"] = strMapProp(volumeTags)
	}
	return m, nil
}

// instanceVolumeIDs are the IDs of the volumes attached to the instance.
func instanceVolumeIDs(ctx context.Context, c *clients, id string) ([]string, map[string]string, error) {
	out, err := c.ec2.DescribeVolumes(ctx, &ec2.DescribeVolumesInput{Filters: []ec2types.Filter{
		{Name: aws.String("attachment.instance-id"), Values: []string{id}},
	}})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the volumes of EC2 Instance (%s): %w", id, apiError(err))
	}
	var ids []string
	tags := map[string]string{}
	for _, v := range out.Volumes {
		ids = append(ids, aws.ToString(v.VolumeId))
		for k, val := range tagsFromEC2(v.Tags) {
			tags[k] = val
		}
	}
	return ids, tags, nil
}

func readVolumeTags(ctx context.Context, c *clients, id string) (map[string]string, error) {
	_, tags, err := instanceVolumeIDs(ctx, c, id)
	return tags, err
}

func (instanceResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	if v, ok := out["userData"]; ok {
		out["userData"] = hashedUserData(v)
	}
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	if v, ok := out["rootBlockDevice"]; ok && v.IsObject() {
		rbd := copyMap(v.ObjectValue())
		rbd["volumeId"], rbd["deviceName"] = unknown(), unknown()
		if t, ok := rbd["tags"]; ok {
			rbd["tagsAll"] = t
		}
		out["rootBlockDevice"] = resource.NewObjectProperty(rbd)
	}
	for _, k := range []resource.PropertyKey{"arn", "instanceState", "availabilityZone", "privateIp", "privateDns",
		"publicIp", "publicDns", "primaryNetworkInterfaceId", "securityGroups", "keyName",
		"associatePublicIpAddress", "sourceDestCheck", "ebsOptimized", "monitoring", "tenancy",
		"instanceLifecycle", "spotInstanceRequestId"} {
		out[k] = unknown()
	}
	return withDefaults(out, resource.PropertyMap{
		"region":                            strProp(region),
		"subnetId":                          unknown(),
		"vpcSecurityGroupIds":               unknown(),
		"iamInstanceProfile":                unknown(),
		"tags":                              strMapProp(nil),
		"tagsAll":                           strMapProp(nil),
		"disableApiTermination":             boolProp(false),
		"rootBlockDevice":                   unknown(),
		"metadataOptions":                   unknown(),
		"instanceInitiatedShutdownBehavior": unknown(),
	})
}

func (instanceResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	return instanceRead(ctx, c, id, view(revealMap(state)), state)
}

func (instanceResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("updating EC2 Instance (%s)", id)
	inst, err := findInstance(ctx, c, id)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (resource.PropertyMap, error) {
		partial, _ := instanceRead(ctx, c, id, n, news)
		return partial, fmt.Errorf("%s: %w", what, err)
	}

	if n.has("volumeTags") && !equalValues(strMapProp(o.strMap("volumeTags")), strMapProp(n.strMap("volumeTags"))) {
		volumes, current, err := instanceVolumeIDs(ctx, c, id)
		if err != nil {
			return fail(err)
		}
		if len(volumes) > 0 {
			if err := updateEC2Tags(ctx, c, volumes, current, n.strMap("volumeTags")); err != nil {
				return fail(fmt.Errorf("updating volume_tags: %w", err))
			}
		}
	}
	if n.known("iamInstanceProfile") && n.str("iamInstanceProfile") != o.str("iamInstanceProfile") {
		if err := setInstanceProfile(ctx, c, inst, n.str("iamInstanceProfile")); err != nil {
			return fail(err)
		}
	}
	if n.known("vpcSecurityGroupIds") && instanceSpec.prop("vpcSecurityGroupIds").changed(o, n) {
		if err := setSecurityGroups(ctx, c, inst, n.strs("vpcSecurityGroupIds")); err != nil {
			return fail(err)
		}
	}
	if t := n.str("instanceType"); t != "" && t != o.str("instanceType") {
		in := &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(id),
			InstanceType: &ec2types.AttributeValue{Value: aws.String(t)}}
		if err := modifyWithStopStart(ctx, c, in, fmt.Sprintf("InstanceType (%s)", t)); err != nil {
			return fail(fmt.Errorf("type: %w", err))
		}
	}
	if n.has("userData") && instanceSpec.prop("userData").changed(o, n) {
		in := &ec2.ModifyInstanceAttributeInput{InstanceId: aws.String(id),
			UserData: &ec2types.SecureBlobAttributeValue{Value: userDataBytes(n.str("userData"))}}
		if err := modifyWithStopStart(ctx, c, in, "UserData"); err != nil {
			return fail(fmt.Errorf("user data: %w", err))
		}
	}
	if err := updateInstanceOptions(ctx, c, id, o, n); err != nil {
		return fail(err)
	}
	if newTags := n.strMap("tags"); !equalValues(strMapProp(o.strMap("tags")), strMapProp(newTags)) {
		if err := updateEC2Tags(ctx, c, []string{id}, o.strMap("tags"), newTags); err != nil {
			return fail(err)
		}
	}
	state, err := instanceRead(ctx, c, id, n, news)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return state, nil
}

// setInstanceProfile associates, replaces or removes the instance's IAM instance profile and
// waits until the instance reports it.
func setInstanceProfile(ctx context.Context, c *clients, inst *ec2types.Instance, name string) error {
	id := aws.ToString(inst.InstanceId)
	assoc, err := c.ec2.DescribeIamInstanceProfileAssociations(ctx, &ec2.DescribeIamInstanceProfileAssociationsInput{
		Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: []string{id}}},
	})
	if err != nil {
		return fmt.Errorf("reading instance profile associations: %w", apiError(err))
	}
	var current *ec2types.IamInstanceProfileAssociation
	for i := range assoc.IamInstanceProfileAssociations {
		a := &assoc.IamInstanceProfileAssociations[i]
		if a.State == ec2types.IamInstanceProfileAssociationStateAssociated ||
			a.State == ec2types.IamInstanceProfileAssociationStateAssociating {
			current = a
		}
	}
	invalidProfile := func(err error) bool {
		return hasMessage(err, "InvalidParameterValue", "Invalid IAM Instance Profile")
	}
	spec := &ec2types.IamInstanceProfileSpecification{Name: aws.String(name)}
	associate := func() error {
		_, err := retryWhile(ctx, propagationTimeout, invalidProfile,
			func(ctx context.Context) (*ec2.AssociateIamInstanceProfileOutput, error) {
				return c.ec2.AssociateIamInstanceProfile(ctx, &ec2.AssociateIamInstanceProfileInput{
					InstanceId: aws.String(id), IamInstanceProfile: spec})
			})
		if err != nil {
			return fmt.Errorf("associating instance profile: %w", apiError(err))
		}
		return nil
	}
	disassociate := func() error {
		if _, err := c.ec2.DisassociateIamInstanceProfile(ctx, &ec2.DisassociateIamInstanceProfileInput{
			AssociationId: current.AssociationId}); err != nil {
			return fmt.Errorf("disassociating instance profile: %w", apiError(err))
		}
		return nil
	}
	state := ec2types.InstanceStateName("")
	if inst.State != nil {
		state = inst.State.Name
	}
	switch {
	case name != "" && current == nil:
		err = associate()
	case name != "" && (state == ec2types.InstanceStateNameStopped || state == ec2types.InstanceStateNameStopping ||
		state == ec2types.InstanceStateNameShuttingDown):
		// A stopped instance's association can't be replaced: remove it, then associate.
		if err = disassociate(); err == nil {
			err = associate()
		}
	case name != "":
		_, err = retryWhile(ctx, propagationTimeout, invalidProfile,
			func(ctx context.Context) (*ec2.ReplaceIamInstanceProfileAssociationOutput, error) {
				return c.ec2.ReplaceIamInstanceProfileAssociation(ctx, &ec2.ReplaceIamInstanceProfileAssociationInput{
					AssociationId: current.AssociationId, IamInstanceProfile: spec})
			})
		if err != nil {
			err = fmt.Errorf("replacing instance profile: %w", apiError(err))
		}
	case current != nil:
		err = disassociate()
	}
	if err != nil {
		return err
	}
	// Wait until the association names the profile (the terraform provider waits until the
	// instance does; moto's server never updates the instance after a replacement).
	return poll(ctx, func(ctx context.Context) (bool, error) {
		out, err := c.ec2.DescribeIamInstanceProfileAssociations(ctx, &ec2.DescribeIamInstanceProfileAssociationsInput{
			Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: []string{id}}},
		})
		if err != nil {
			return false, apiError(err)
		}
		got := ""
		for _, a := range out.IamInstanceProfileAssociations {
			if a.State == ec2types.IamInstanceProfileAssociationStateAssociated && a.IamInstanceProfile != nil {
				arn := aws.ToString(a.IamInstanceProfile.Arn)
				got = arn[strings.LastIndex(arn, "/")+1:]
			}
		}
		return got == name, nil
	})
}

// setSecurityGroups sets the groups of the instance's primary network interface.
func setSecurityGroups(ctx context.Context, c *clients, inst *ec2types.Instance, groups []string) error {
	if len(groups) == 0 {
		return fmt.Errorf("VPC-based instances require at least one security group to be attached")
	}
	var eni string
	for _, ni := range inst.NetworkInterfaces {
		if ni.Attachment != nil && aws.ToInt32(ni.Attachment.DeviceIndex) == 0 {
			eni = aws.ToString(ni.NetworkInterfaceId)
		}
	}
	if eni == "" {
		return fmt.Errorf("failed to update vpc_security_group_ids on %q, which does not contain a primary network interface",
			aws.ToString(inst.InstanceId))
	}
	if _, err := c.ec2.ModifyNetworkInterfaceAttribute(ctx, &ec2.ModifyNetworkInterfaceAttributeInput{
		NetworkInterfaceId: aws.String(eni), Groups: groups,
	}); err != nil {
		return fmt.Errorf("modifying network interface: %w", apiError(err))
	}
	return nil
}

// modifyWithStopStart stops the instance, modifies one attribute and starts it again.
func modifyWithStopStart(ctx context.Context, c *clients, in *ec2.ModifyInstanceAttributeInput, attr string) error {
	id := aws.ToString(in.InstanceId)
	if _, err := c.ec2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{id}, Force: aws.Bool(false)}); err != nil {
		return fmt.Errorf("stopping EC2 Instance (%s): %w", id, apiError(err))
	}
	if _, err := waitInstance(ctx, c, id, []string{"pending", "running", "shutting-down", "stopping"}, "stopped"); err != nil {
		return fmt.Errorf("waiting for EC2 Instance (%s) stop: %w", id, err)
	}
	_, err := c.ec2.ModifyInstanceAttribute(ctx, in)
	if in.UserData != nil && hasCode(err, "InvalidUserData.Malformed") {
		// The terraform provider sends the data once encoded (the SDK encodes the blob), which
		// AWS takes; moto's server wants the blob to hold base64 text, so say it that way too.
		encoded := *in
		encoded.UserData = &ec2types.SecureBlobAttributeValue{
			Value: []byte(base64.StdEncoding.EncodeToString(in.UserData.Value))}
		_, err = c.ec2.ModifyInstanceAttribute(ctx, &encoded)
	}
	if err != nil {
		return fmt.Errorf("modifying EC2 Instance (%s) %s attribute: %w", id, attr, apiError(err))
	}
	_, err = retryWhile(ctx, propagationTimeout, func(err error) bool {
		return hasMessage(err, "InvalidParameterValue", "LaunchPlan instance type does not match attribute value")
	}, func(ctx context.Context) (*ec2.StartInstancesOutput, error) {
		return c.ec2.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{id}})
	})
	if err != nil {
		return fmt.Errorf("starting EC2 Instance (%s): %w", id, apiError(err))
	}
	if _, err := waitInstance(ctx, c, id, []string{"pending", "stopped"}, "running"); err != nil {
		return fmt.Errorf("waiting for EC2 Instance (%s) start: %w", id, err)
	}
	return nil
}

func (instanceResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, "instanceType", "vpcSecurityGroupIds", "iamInstanceProfile", "tags",
		"volumeTags", "userDataReplaceOnChange", "instanceInitiatedShutdownBehavior")
	for _, k := range []resource.PropertyKey{"rootBlockDevice", "metadataOptions"} {
		if v, ok := news[k]; ok {
			out[k] = mergeBlock(olds[k], v)
		}
	}
	if v, ok := news["userData"]; ok {
		out["userData"] = hashedUserData(v)
	}
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (instanceResource) delete(ctx context.Context, c *clients, id string, _ resource.PropertyMap) error {
	// As the terraform provider: termination protection off first, a failure only logged.
	_, _ = c.ec2.ModifyInstanceAttribute(ctx, &ec2.ModifyInstanceAttributeInput{
		InstanceId: aws.String(id), DisableApiTermination: &ec2types.AttributeBooleanValue{Value: aws.Bool(false)},
	})
	_, err := c.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if hasCode(err, "InvalidInstanceID.NotFound") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("terminating EC2 Instance (%s): %w", id, apiError(err))
	}
	if _, err := waitInstance(ctx, c, id,
		[]string{"pending", "running", "shutting-down", "stopping", "stopped"}, "terminated"); err != nil {
		return fmt.Errorf("waiting for EC2 Instance (%s) delete: %w", id, err)
	}
	return nil
}
