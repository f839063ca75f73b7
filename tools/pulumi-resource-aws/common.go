package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// propagationTimeout is how long the terraform provider retries errors that only mean a
// change has not propagated yet (internal/tfresource, iamPropagationTimeout: 2 minutes).
const propagationTimeout = 2 * time.Minute

// apiError explains cancellation and timeouts; API errors pass unchanged (code and message).
func apiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("cancelled: %w", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out (customTimeouts can allow more time): %w", err)
	}
	return err
}

// errorCode is an API error's code ("InvalidInstanceID.NotFound"), or "".
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// hasCode reports whether err is an API error with one of the codes.
func hasCode(err error, codes ...string) bool {
	c := errorCode(err)
	for _, want := range codes {
		if c == want {
			return true
		}
	}
	return false
}

// hasMessage reports whether err is an API error with the code whose message contains part.
func hasMessage(err error, code, part string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code && strings.Contains(ae.ErrorMessage(), part)
}

// sleep waits d, or less when ctx ends (then it returns ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// poll calls check until it reports done, an error, or ctx ends; delays grow from 200 ms to
// 5 s (the terraform provider waits 10 s before its first look; moto answers at once).
func poll(ctx context.Context, check func(context.Context) (bool, error)) error {
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		done, err := check(ctx)
		if err != nil || done {
			return err
		}
		if err := sleep(ctx, delay); err != nil {
			return apiError(err)
		}
	}
}

// retryWhile calls call until it succeeds, fails with an error retryable does not accept, or
// limit passes (then the last error is returned).
func retryWhile[T any](ctx context.Context, limit time.Duration, retryable func(error) bool,
	call func(context.Context) (T, error),
) (T, error) {
	deadline := time.Now().Add(limit)
	for delay := 500 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		out, err := call(ctx)
		if err == nil || !retryable(err) || time.Now().Add(delay).After(deadline) {
			return out, err
		}
		if serr := sleep(ctx, delay); serr != nil {
			return out, err
		}
	}
}

// --- names ------------------------------------------------------------------------------------

// autoname gives a resource its name when the program gave none: the old one on an update,
// else the engine's proposal, else <resource name>-<7 hex characters> (pulumi-aws's default).
func autoname(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap) *pulumirpc.CheckFailure {
	if v, ok := news["name"]; ok && !v.IsNull() {
		return nil
	}
	if v, ok := olds["name"]; ok && !v.IsNull() {
		news["name"] = v
		return nil
	}
	if a := req.GetAutonaming(); a != nil {
		if a.GetMode() == pulumirpc.CheckRequest_AutonamingOptions_DISABLE {
			return failure("name", "name is required (autonaming is disabled)")
		}
		news["name"] = strProp(a.GetProposedName())
		return nil
	}
	base := req.GetName()
	if base == "" {
		base = resource.URN(req.GetUrn()).Name()
	}
	name, err := resource.NewUniqueName(req.GetRandomSeed(), base+"-", 7, 0, nil)
	if err != nil {
		return failure("name", "%v", err)
	}
	news["name"] = strProp(name)
	return nil
}

// arnOf builds an ARN; the account is "" when it is not known (skipRequestingAccountId).
func (c *clients) arnOf(service, region, resourcePart string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", c.partition, service, region, c.accountID, resourcePart)
}

// --- tags -------------------------------------------------------------------------------------

// checkTags validates tags as the API does: keys 1-128 characters, values up to 256, no key
// starting with "aws:" (reserved), at most 50.
func checkTags(property string, tags map[string]string) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	if len(tags) > 50 {
		failures = append(failures, failure(property, "%s has %d tags; the limit is 50", property, len(tags)))
	}
	for _, k := range sortedKeys(tags) {
		switch {
		case k == "" || len(k) > 128:
			failures = append(failures, failure(property, "%s key %q must be 1 to 128 characters", property, k))
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			failures = append(failures, failure(property, "%s key %q: the aws: prefix is reserved", property, k))
		case len(tags[k]) > 256:
			failures = append(failures, failure(property, "%s value of %q is longer than 256 characters", property, k))
		}
	}
	return failures
}

// ec2Tags is tags as an EC2 tag list, sorted by key.
func ec2Tags(tags map[string]string) []ec2types.Tag {
	out := make([]ec2types.Tag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

// tagSpec is one TagSpecification of a create request, or nil for no tags.
func tagSpec(kind ec2types.ResourceType, tags map[string]string) []ec2types.TagSpecification {
	if len(tags) == 0 {
		return nil
	}
	return []ec2types.TagSpecification{{ResourceType: kind, Tags: ec2Tags(tags)}}
}

// tagsFromEC2 reads EC2 tags, leaving out the reserved aws: ones (as the terraform provider's
// IgnoreAWS does).
func tagsFromEC2(tags []ec2types.Tag) map[string]string {
	out := map[string]string{}
	for _, t := range tags {
		k := aws.ToString(t.Key)
		if strings.HasPrefix(k, "aws:") {
			continue
		}
		out[k] = aws.ToString(t.Value)
	}
	return out
}

// tagChanges splits a change of tags into the keys to remove and the tags to set.
func tagChanges(old, new map[string]string) (removed []string, set map[string]string) {
	set = map[string]string{}
	for _, k := range sortedKeys(old) {
		if _, ok := new[k]; !ok {
			removed = append(removed, k)
		}
	}
	for k, v := range new {
		if w, ok := old[k]; !ok || w != v {
			set[k] = v
		}
	}
	return removed, set
}

// updateEC2Tags changes the tags of EC2 resources from old to new (DeleteTags, then CreateTags).
func updateEC2Tags(ctx context.Context, c *clients, ids []string, old, new map[string]string) error {
	removed, set := tagChanges(old, new)
	if len(removed) > 0 {
		keys := make([]ec2types.Tag, len(removed))
		for i, k := range removed {
			keys[i] = ec2types.Tag{Key: aws.String(k)}
		}
		if _, err := c.ec2.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ids, Tags: keys}); err != nil {
			return fmt.Errorf("untagging %s: %w", strings.Join(ids, ", "), apiError(err))
		}
	}
	if len(set) > 0 {
		if _, err := c.ec2.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids, Tags: ec2Tags(set)}); err != nil {
			return fmt.Errorf("tagging %s: %w", strings.Join(ids, ", "), apiError(err))
		}
	}
	return nil
}

// requireRegion refuses a resource region other than the provider's: the stand-in's clients
// serve the provider's region only (pulumi-aws 7 can manage a resource in another region).
func requireRegion(c *clients, n view) error {
	if r := n.str("region"); r != "" && r != c.region {
		return fmt.Errorf("region %q differs from the provider's region %s: %s manages resources in "+
			"the provider's region only; use a provider configured for %s", r, c.region, standIn, r)
	}
	return nil
}
