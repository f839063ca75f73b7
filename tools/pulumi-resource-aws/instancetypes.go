package main

// Instance types, read once per plugin process and name: Diff asks for the architectures of an
// instance type change (as the terraform provider's CustomizeDiff does), the getInstanceType
// invoke for everything, and a stack may declare many instances of one type.

import (
	"context"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

type instanceTypes struct {
	ec2 *ec2.Client

	mu    sync.Mutex
	known map[string]*ec2types.InstanceTypeInfo // nil value: the API has no such type
}

func newInstanceTypes(c *ec2.Client) *instanceTypes {
	return &instanceTypes{ec2: c, known: map[string]*ec2types.InstanceTypeInfo{}}
}

// find returns the instance type, nil when the API has none of that name.
func (t *instanceTypes) find(ctx context.Context, name string) (*ec2types.InstanceTypeInfo, error) {
	t.mu.Lock()
	info, ok := t.known[name]
	t.mu.Unlock()
	if ok {
		return info, nil
	}
	out, err := t.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(name)},
	})
	if hasCode(err, "InvalidInstanceType") {
		err, out = nil, &ec2.DescribeInstanceTypesOutput{}
	}
	if err != nil {
		return nil, apiError(err)
	}
	info = nil
	for i := range out.InstanceTypes {
		if string(out.InstanceTypes[i].InstanceType) == name {
			info = &out.InstanceTypes[i]
		}
	}
	t.mu.Lock()
	t.known[name] = info
	t.mu.Unlock()
	return info, nil
}

// archs are the supported architectures of a type; ok is false when they can't be learnt.
func (t *instanceTypes) archs(ctx context.Context, name string) ([]string, bool) {
	info, err := t.find(ctx, name)
	if err != nil || info == nil || info.ProcessorInfo == nil {
		return nil, false
	}
	out := make([]string, len(info.ProcessorInfo.SupportedArchitectures))
	for i, a := range info.ProcessorInfo.SupportedArchitectures {
		out[i] = string(a)
	}
	return out, true
}

// shareArch reports whether two architecture lists have one in common.
func shareArch(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
