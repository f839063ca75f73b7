package main

// The data sources (invokes) this project's program uses, with pulumi-aws 7's tokens and wire
// names, as terraform-provider-aws v6's data sources behave:
//
//	aws:ec2/getAmi:getAmi                    (internal/service/ec2/ec2_ami_data_source.go)
//	aws:ec2/getInstanceType:getInstanceType  (internal/service/ec2/ec2_instance_type_data_source.go)

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	getAmiToken          = "aws:ec2/getAmi:getAmi"
	getInstanceTypeToken = "aws:ec2/getInstanceType:getInstanceType"
)

type invokeSpec struct {
	args []prop
	// unsupported arguments of the official function this stand-in rejects with a clear message.
	unsupported []string
	call        func(ctx context.Context, c *clients, args view) (resource.PropertyMap, error)
}

var filterFields = []prop{
	{name: "name", kind: kString, input: true, required: true},
	{name: "values", kind: kStringList, input: true, required: true},
}

var invokes = map[string]invokeSpec{
	getAmiToken: {
		args: []prop{
			{name: "owners", kind: kStringList, input: true},
			{name: "mostRecent", kind: kBool, input: true},
			{name: "filters", kind: kObjectList, input: true, fields: filterFields},
			{name: "nameRegex", kind: kString, input: true},
			{name: "executableUsers", kind: kStringList, input: true},
			{name: "includeDeprecated", kind: kBool, input: true},
			{name: "allowUnsafeFilter", kind: kBool, input: true},
			{name: "region", kind: kString, input: true},
		},
		unsupported: []string{"tags", "uefiData"},
		call:        getAmi,
	},
	getInstanceTypeToken: {
		args: []prop{
			{name: "instanceType", kind: kString, input: true, required: true},
			{name: "region", kind: kString, input: true},
		},
		call: getInstanceType,
	},
}

func (p *awsProvider) Invoke(ctx context.Context, req *pulumirpc.InvokeRequest) (*pulumirpc.InvokeResponse, error) {
	spec, ok := invokes[req.GetTok()]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "%s is not implemented by %s: it has only %s",
			req.GetTok(), standIn, coverage)
	}
	args, err := unmarshal(req.GetArgs(), "Invoke.args")
	if err != nil {
		return nil, err
	}
	a := view(revealMap(args))
	if failures := checkProps(spec.args, spec.unsupported, a, ""); len(failures) > 0 {
		return &pulumirpc.InvokeResponse{Failures: failures}, nil
	}
	ctx, done, c, err := p.start(ctx, 20*time.Minute)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := requireRegion(c, a); err != nil {
		return nil, err
	}
	result, err := spec.call(ctx, c, a)
	if err != nil {
		return nil, err
	}
	ret, err := marshal(result, "Invoke.return")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.InvokeResponse{Return: ret}, nil
}

// echo copies the given arguments into a function's result, as the terraform data sources do.
func echo(out resource.PropertyMap, args view, keys ...string) resource.PropertyMap {
	for _, k := range keys {
		if v, ok := args.get(k); ok {
			out[resource.PropertyKey(k)] = v
		}
	}
	return out
}

func getAmi(ctx context.Context, c *clients, args view) (resource.PropertyMap, error) {
	in := &ec2.DescribeImagesInput{IncludeDeprecated: aws.Bool(args.boolean("includeDeprecated"))}
	if users := args.strs("executableUsers"); len(users) > 0 {
		in.ExecutableUsers = users
	}
	if owners := args.strs("owners"); len(owners) > 0 {
		in.Owners = owners
	}
	safe := len(in.Owners) > 0
	for _, f := range args.objects("filters") {
		in.Filters = append(in.Filters, ec2types.Filter{Name: aws.String(f.str("name")), Values: f.strs("values")})
		if f.str("name") == "image-id" || f.str("name") == "owner-id" {
			safe = true
		}
	}
	// Since terraform-provider-aws v6 this is an error, not a warning (its upgrade guide).
	if args.boolean("mostRecent") && !safe && !args.boolean("allowUnsafeFilter") {
		return nil, status.Error(codes.InvalidArgument,
			"most_recent is true and neither owners nor a filter on image-id or owner-id is set: "+
				"set owners, or a filter on image-id or owner-id (or allowUnsafeFilter, not recommended)")
	}
	var images []ec2types.Image
	pages := ec2.NewDescribeImagesPaginator(c.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading EC2 AMIs: %w", apiError(err))
		}
		images = append(images, page.Images...)
	}
	if pattern := args.str("nameRegex"); pattern != "" {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "nameRegex %q is not a valid regular expression: %v", pattern, err)
		}
		images = slices.DeleteFunc(images, func(i ec2types.Image) bool {
			return i.Name == nil || !re.MatchString(aws.ToString(i.Name))
		})
	}
	switch {
	case len(images) == 0:
		return nil, status.Error(codes.NotFound,
			"Your query returned no results. Please change your search criteria and try again.")
	case len(images) > 1 && !args.boolean("mostRecent"):
		return nil, status.Error(codes.FailedPrecondition,
			"Your query returned more than one result. Please try more specific search criteria, "+
				"or set `most_recent` attribute to true.")
	}
	slices.SortStableFunc(images, func(a, b ec2types.Image) int {
		ta, _ := time.Parse(time.RFC3339, aws.ToString(a.CreationDate))
		tb, _ := time.Parse(time.RFC3339, aws.ToString(b.CreationDate))
		return tb.Compare(ta)
	})
	img := images[0]
	id := aws.ToString(img.ImageId)
	devices := []resource.PropertyValue{}
	for _, b := range img.BlockDeviceMappings {
		ebs := map[string]string{}
		if b.Ebs != nil {
			ebs["delete_on_termination"] = fmt.Sprint(aws.ToBool(b.Ebs.DeleteOnTermination))
			ebs["encrypted"] = fmt.Sprint(aws.ToBool(b.Ebs.Encrypted))
			ebs["snapshot_id"] = aws.ToString(b.Ebs.SnapshotId)
			ebs["volume_size"] = fmt.Sprint(aws.ToInt32(b.Ebs.VolumeSize))
			ebs["volume_type"] = string(b.Ebs.VolumeType)
		}
		devices = append(devices, resource.NewObjectProperty(resource.PropertyMap{
			"deviceName":  strProp(aws.ToString(b.DeviceName)),
			"ebs":         strMapProp(ebs),
			"noDevice":    strProp(aws.ToString(b.NoDevice)),
			"virtualName": strProp(aws.ToString(b.VirtualName)),
		}))
	}
	stateReason := map[string]string{"code": "UNSET", "message": "UNSET"}
	if img.StateReason != nil {
		stateReason = map[string]string{"code": aws.ToString(img.StateReason.Code), "message": aws.ToString(img.StateReason.Message)}
	}
	out := resource.PropertyMap{
		"id":                  strProp(id),
		"imageId":             strProp(id),
		"arn":                 strProp(fmt.Sprintf("arn:%s:ec2:%s::image/%s", c.partition, c.region, id)),
		"architecture":        strProp(string(img.Architecture)),
		"blockDeviceMappings": resource.NewArrayProperty(devices),
		"bootMode":            strProp(string(img.BootMode)),
		"creationDate":        strProp(aws.ToString(img.CreationDate)),
		"deprecationTime":     strProp(aws.ToString(img.DeprecationTime)),
		"description":         strProp(aws.ToString(img.Description)),
		"enaSupport":          boolProp(aws.ToBool(img.EnaSupport)),
		"hypervisor":          strProp(string(img.Hypervisor)),
		"imageLocation":       strProp(aws.ToString(img.ImageLocation)),
		"imageOwnerAlias":     strProp(aws.ToString(img.ImageOwnerAlias)),
		"imageType":           strProp(string(img.ImageType)),
		"imdsSupport":         strProp(string(img.ImdsSupport)),
		"kernelId":            strProp(aws.ToString(img.KernelId)),
		"lastLaunchedTime":    strProp(aws.ToString(img.LastLaunchedTime)),
		"name":                strProp(aws.ToString(img.Name)),
		"ownerId":             strProp(aws.ToString(img.OwnerId)),
		"platform":            strProp(string(img.Platform)),
		"platformDetails":     strProp(aws.ToString(img.PlatformDetails)),
		"productCodes":        resource.NewArrayProperty(nil),
		"public":              boolProp(aws.ToBool(img.Public)),
		"ramdiskId":           strProp(aws.ToString(img.RamdiskId)),
		"rootDeviceName":      strProp(aws.ToString(img.RootDeviceName)),
		"rootDeviceType":      strProp(string(img.RootDeviceType)),
		"sriovNetSupport":     strProp(aws.ToString(img.SriovNetSupport)),
		"state":               strProp(string(img.State)),
		"stateReason":         strMapProp(stateReason),
		"tags":                strMapProp(tagsFromEC2(img.Tags)),
		"tpmSupport":          strProp(string(img.TpmSupport)),
		"usageOperation":      strProp(aws.ToString(img.UsageOperation)),
		"virtualizationType":  strProp(string(img.VirtualizationType)),
		"region":              strProp(c.region),
	}
	return echo(out, args, "owners", "mostRecent", "filters", "nameRegex", "executableUsers",
		"includeDeprecated", "allowUnsafeFilter"), nil
}

func getInstanceType(ctx context.Context, c *clients, args view) (resource.PropertyMap, error) {
	name := args.str("instanceType")
	info, err := c.types.find(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading EC2 Instance Type (%s): %w", name, err)
	}
	if info == nil {
		return nil, status.Errorf(codes.NotFound, "reading EC2 Instance Type (%s): couldn't find resource", name)
	}
	strs := func(vs []string) resource.PropertyValue { return strsProp(vs) }
	enumStrs := func(n int, at func(int) string) resource.PropertyValue {
		out := make([]string, n)
		for i := range out {
			out[i] = at(i)
		}
		return strs(out)
	}
	out := resource.PropertyMap{
		"id":                            strProp(name),
		"instanceType":                  strProp(name),
		"region":                        strProp(c.region),
		"autoRecoverySupported":         boolProp(aws.ToBool(info.AutoRecoverySupported)),
		"bareMetal":                     boolProp(aws.ToBool(info.BareMetal)),
		"burstablePerformanceSupported": boolProp(aws.ToBool(info.BurstablePerformanceSupported)),
		"currentGeneration":             boolProp(aws.ToBool(info.CurrentGeneration)),
		"dedicatedHostsSupported":       boolProp(aws.ToBool(info.DedicatedHostsSupported)),
		"freeTierEligible":              boolProp(aws.ToBool(info.FreeTierEligible)),
		"hibernationSupported":          boolProp(aws.ToBool(info.HibernationSupported)),
		"hypervisor":                    strProp(string(info.Hypervisor)),
		"instanceStorageSupported":      boolProp(aws.ToBool(info.InstanceStorageSupported)),
		"supportedRootDeviceTypes": enumStrs(len(info.SupportedRootDeviceTypes),
			func(i int) string { return string(info.SupportedRootDeviceTypes[i]) }),
		"supportedUsagesClasses": enumStrs(len(info.SupportedUsageClasses),
			func(i int) string { return string(info.SupportedUsageClasses[i]) }),
		"supportedVirtualizationTypes": enumStrs(len(info.SupportedVirtualizationTypes),
			func(i int) string { return string(info.SupportedVirtualizationTypes[i]) }),
		"supportedPlacementStrategies": enumStrs(0, nil),
	}
	if info.PlacementGroupInfo != nil {
		out["supportedPlacementStrategies"] = enumStrs(len(info.PlacementGroupInfo.SupportedStrategies),
			func(i int) string { return string(info.PlacementGroupInfo.SupportedStrategies[i]) })
	}
	if p := info.ProcessorInfo; p != nil {
		out["supportedArchitectures"] = enumStrs(len(p.SupportedArchitectures),
			func(i int) string { return string(p.SupportedArchitectures[i]) })
		if p.SustainedClockSpeedInGhz != nil {
			out["sustainedClockSpeed"] = resource.NewNumberProperty(aws.ToFloat64(p.SustainedClockSpeedInGhz))
		}
	} else {
		out["supportedArchitectures"] = strs(nil)
	}
	if v := info.VCpuInfo; v != nil {
		out["defaultVcpus"] = numProp(int64(aws.ToInt32(v.DefaultVCpus)))
		out["defaultCores"] = numProp(int64(aws.ToInt32(v.DefaultCores)))
		out["defaultThreadsPerCore"] = numProp(int64(aws.ToInt32(v.DefaultThreadsPerCore)))
		cores := make([]resource.PropertyValue, len(v.ValidCores))
		for i, n := range v.ValidCores {
			cores[i] = numProp(int64(n))
		}
		out["validCores"] = resource.NewArrayProperty(cores)
		threads := make([]resource.PropertyValue, len(v.ValidThreadsPerCore))
		for i, n := range v.ValidThreadsPerCore {
			threads[i] = numProp(int64(n))
		}
		out["validThreadsPerCores"] = resource.NewArrayProperty(threads)
	}
	if m := info.MemoryInfo; m != nil {
		out["memorySize"] = numProp(aws.ToInt64(m.SizeInMiB))
	}
	if n := info.NetworkInfo; n != nil {
		out["networkPerformance"] = strProp(aws.ToString(n.NetworkPerformance))
		out["maximumNetworkInterfaces"] = numProp(int64(aws.ToInt32(n.MaximumNetworkInterfaces)))
		out["enaSupport"] = strProp(string(n.EnaSupport))
	}
	if e := info.EbsInfo; e != nil {
		out["ebsOptimizedSupport"] = strProp(string(e.EbsOptimizedSupport))
		out["ebsEncryptionSupport"] = strProp(string(e.EncryptionSupport))
		out["ebsNvmeSupport"] = strProp(string(e.NvmeSupport))
	}
	return out, nil
}
