package main

// The SQS resources, as terraform-provider-aws v6 behaves (internal/service/sqs/queue.go,
// queue_policy.go, consts.go):
//
//	aws:sqs/queue:Queue              id: the queue's URL. name and fifoQueue replace (a name is
//	    autonamed when absent); delaySeconds 0, maxMessageSize 262144, messageRetentionSeconds
//	    345600, receiveWaitTimeSeconds 0 and visibilityTimeoutSeconds 30 are the defaults Check
//	    fills in; sqsManagedSseEnabled, kmsDataKeyReusePeriodSeconds and policy are optional and
//	    computed (the queue's own when absent); the policy is kept as normalized JSON and
//	    compares as a policy. CreateQueue sends the attributes with the tags, retrying
//	    QueueDeletedRecently (a name deleted less than 60 s ago) for half the create timeout;
//	    attributes change in place with SetQueueAttributes, tags with TagQueue / UntagQueue;
//	    delete is DeleteQueue, then a wait until the queue reads as gone.
//	aws:sqs/queuePolicy:QueuePolicy  id: the queue's URL. queueUrl replaces; the policy is set
//	    with SetQueueAttributes (Policy) and compares as a policy; delete sets it to "". A queue
//	    without a policy reads as gone.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	queueToken       = "aws:sqs/queue:Queue"
	queuePolicyToken = "aws:sqs/queuePolicy:QueuePolicy"
)

func sqsTimeouts() (time.Duration, time.Duration, time.Duration) {
	return 3 * time.Minute, 3 * time.Minute, 3 * time.Minute
}

// isQueueGone: the API's answer for a queue that does not exist (the JSON protocol's code, and
// the query protocol's).
func isQueueGone(err error) bool {
	var gone *sqstypes.QueueDoesNotExist
	return errors.As(err, &gone) ||
		hasCode(err, "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue")
}

// --- Queue --------------------------------------------------------------------------------------

type queueResource struct{}

// queueAttributes are the inputs that are queue attributes, by attribute name.
var queueAttributes = []struct {
	prop string
	attr sqstypes.QueueAttributeName
	kind kind
}{
	{"delaySeconds", sqstypes.QueueAttributeNameDelaySeconds, kInt},
	{"maxMessageSize", sqstypes.QueueAttributeNameMaximumMessageSize, kInt},
	{"messageRetentionSeconds", sqstypes.QueueAttributeNameMessageRetentionPeriod, kInt},
	{"receiveWaitTimeSeconds", sqstypes.QueueAttributeNameReceiveMessageWaitTimeSeconds, kInt},
	{"visibilityTimeoutSeconds", sqstypes.QueueAttributeNameVisibilityTimeout, kInt},
	{"sqsManagedSseEnabled", sqstypes.QueueAttributeNameSqsManagedSseEnabled, kBool},
	{"kmsMasterKeyId", sqstypes.QueueAttributeNameKmsMasterKeyId, kString},
	{"kmsDataKeyReusePeriodSeconds", sqstypes.QueueAttributeNameKmsDataKeyReusePeriodSeconds, kInt},
	{"policy", sqstypes.QueueAttributeNamePolicy, kString},
	{"fifoQueue", sqstypes.QueueAttributeNameFifoQueue, kBool},
	{"contentBasedDeduplication", sqstypes.QueueAttributeNameContentBasedDeduplication, kBool},
}

var queueSpec = &resourceSpec{
	token: queueToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Name of the queue; autonamed when absent."},
		{name: "fifoQueue", kind: kBool, input: true, output: true, replace: true, def: defaultOf(boolProp(false)),
			desc: "A FIFO queue (its name ends in .fifo)."},
		{name: "contentBasedDeduplication", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Content-based deduplication (FIFO queues only)."},
		{name: "delaySeconds", kind: kInt, input: true, output: true, def: defaultOf(numProp(0)),
			desc: "Seconds each message is delayed (0-900); default 0."},
		{name: "maxMessageSize", kind: kInt, input: true, output: true, def: defaultOf(numProp(262144)),
			desc: "Largest message in bytes (1024-1048576); default 262144."},
		{name: "messageRetentionSeconds", kind: kInt, input: true, output: true, def: defaultOf(numProp(345600)),
			desc: "Seconds a message is kept (60-1209600); default 345600 (4 days)."},
		{name: "receiveWaitTimeSeconds", kind: kInt, input: true, output: true, def: defaultOf(numProp(0)),
			desc: "Seconds a receive waits for a message (0-20); default 0."},
		{name: "visibilityTimeoutSeconds", kind: kInt, input: true, output: true, def: defaultOf(numProp(30)),
			desc: "Seconds a received message is hidden from other receives (0-43200); default 30."},
		{name: "sqsManagedSseEnabled", kind: kBool, input: true, output: true, computed: true,
			desc: "Server-side encryption with SQS-owned keys."},
		{name: "kmsMasterKeyId", kind: kString, input: true, output: true,
			desc: "A KMS key to encrypt messages with."},
		{name: "kmsDataKeyReusePeriodSeconds", kind: kInt, input: true, output: true, computed: true,
			desc: "Seconds a data key is reused (60-86400); 300 when absent."},
		{name: "policy", kind: kString, input: true, output: true, computed: true, equal: policyEqual,
			desc: "The queue's access policy (JSON); kept in the state normalized."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the queue."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the queue; the provider's (the only one this stand-in serves)."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the queue."},
		{name: "url", kind: kString, output: true, desc: "URL of the queue (its id)."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
	},
	unsupported: []string{"namePrefix", "redrivePolicy", "redriveAllowPolicy", "deduplicationScope",
		"fifoThroughputLimit"},
	keepInputs: []string{"policy"},
}

var queueNamePattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,80}$`)
var fifoQueueNamePattern = regexp.MustCompile(`^[0-9A-Za-z_-]{1,75}\.fifo$`)

func (queueResource) spec() *resourceSpec { return queueSpec }

func (queueResource) timeouts() (time.Duration, time.Duration, time.Duration) { return sqsTimeouts() }

func (queueResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	var failures []*pulumirpc.CheckFailure
	n := view(revealMap(checked))
	if !n.has("name") && n.boolean("fifoQueue") {
		failures = append(failures, failure("name",
			"a FIFO queue needs its name (ending in .fifo): %s does not autoname one", standIn))
	}
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	queueSpec.applyDefaults(checked)
	n = view(revealMap(checked))
	if n.known("name") {
		name, pattern := n.str("name"), queueNamePattern
		if n.boolean("fifoQueue") {
			pattern = fifoQueueNamePattern
		}
		if !pattern.MatchString(name) {
			failures = append(failures, failure("name", "invalid queue name: %s", name))
		}
	}
	for _, r := range []struct {
		key      string
		low, top int64
	}{
		{"delaySeconds", 0, 900}, {"maxMessageSize", 1024, 1_048_576},
		{"messageRetentionSeconds", 60, 1_209_600}, {"visibilityTimeoutSeconds", 0, 43_200},
		{"kmsDataKeyReusePeriodSeconds", 60, 86_400},
	} {
		if v, ok := n.number(r.key); ok && (v < r.low || v > r.top) {
			failures = append(failures, failure(r.key, "expected %s to be in the range (%d - %d), got %d",
				r.key, r.low, r.top, v))
		}
	}
	if n.has("sqsManagedSseEnabled") && n.has("kmsMasterKeyId") {
		failures = append(failures, failure("kmsMasterKeyId",
			"\"kms_master_key_id\": conflicts with sqs_managed_sse_enabled"))
	}
	if n.boolean("contentBasedDeduplication") && !n.boolean("fifoQueue") {
		failures = append(failures, failure("contentBasedDeduplication",
			"content-based deduplication can only be set for FIFO queue"))
	}
	if n.known("policy") && n.str("policy") != "" {
		if f := checkPolicyJSON("policy", n.str("policy")); f != nil {
			failures = append(failures, f)
		}
	}
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	return checked, failures
}

func (queueResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return queueSpec.diff(olds, news, ignore)
}

// queueAttributesOf are the attributes the inputs set: every one given (booleans of a FIFO
// queue only when true, as the API refuses them on a standard queue).
func queueAttributesOf(n view, changedFrom view) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range queueAttributes {
		if !n.has(a.prop) {
			continue
		}
		if changedFrom != nil {
			p := queueSpec.prop(a.prop)
			if !p.changed(changedFrom, n) {
				continue
			}
		}
		switch a.kind {
		case kInt:
			v, _ := n.number(a.prop)
			out[string(a.attr)] = strconv.FormatInt(v, 10)
		case kBool:
			b := n.boolean(a.prop)
			if !b && (a.prop == "fifoQueue" || a.prop == "contentBasedDeduplication") {
				continue
			}
			out[string(a.attr)] = strconv.FormatBool(b)
		default:
			v := n.str(a.prop)
			if a.prop == "policy" && v != "" {
				normalized, err := normalizeJSON(v)
				if err != nil {
					return nil, fmt.Errorf("policy is invalid JSON: %w", err)
				}
				v = normalized
			}
			out[string(a.attr)] = v
		}
	}
	return out, nil
}

func (queueResource) create(ctx context.Context, c *clients, news resource.PropertyMap) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	api, err := c.sqsClient()
	if err != nil {
		return "", nil, err
	}
	name := n.str("name")
	attributes, err := queueAttributesOf(n, nil)
	if err != nil {
		return "", nil, err
	}
	in := &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attributes}
	if tags := n.strMap("tags"); len(tags) > 0 {
		in.Tags = tags
	}
	create, _, _ := sqsTimeouts()
	out, err := retryWhile(ctx, create/2, func(err error) bool {
		return hasCode(err, "QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently")
	}, func(ctx context.Context) (*sqs.CreateQueueOutput, error) { return api.CreateQueue(ctx, in) })
	if err != nil {
		return "", nil, fmt.Errorf("creating SQS Queue (%s): %w", name, apiError(err))
	}
	id := aws.ToString(out.QueueUrl)
	state, err := retryWhile(ctx, time.Minute, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return queueRead(ctx, c, id, n) })
	if err != nil {
		return id, nil, fmt.Errorf("reading SQS Queue (%s): %w", id, err)
	}
	return id, state, nil
}

// queueNameFromURL is the queue's name, the last part of its URL's path.
func queueNameFromURL(u string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	parts := strings.Split(parsed.Path, "/")
	if len(parts) != 3 {
		return "", fmt.Errorf("SQS Queue URL (%s) is in the incorrect format", u)
	}
	return parts[2], nil
}

func queueRead(ctx context.Context, c *clients, id string, args view) (resource.PropertyMap, error) {
	api, err := c.sqsClient()
	if err != nil {
		return nil, err
	}
	out, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(id), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if isQueueGone(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading SQS Queue (%s): %w", id, apiError(err))
	}
	name, err := queueNameFromURL(id)
	if err != nil {
		return nil, err
	}
	tagsOut, err := api.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(id)})
	if isQueueGone(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("listing tags for SQS Queue (%s): %w", id, apiError(err))
	}
	attrs := out.Attributes
	number := func(attr sqstypes.QueueAttributeName, def int64) resource.PropertyValue {
		if v, err := strconv.ParseInt(attrs[string(attr)], 10, 64); err == nil {
			return numProp(v)
		}
		return numProp(def)
	}
	flag := func(attr sqstypes.QueueAttributeName) resource.PropertyValue {
		b, _ := strconv.ParseBool(attrs[string(attr)])
		return boolProp(b)
	}
	policy := attrs[string(sqstypes.QueueAttributeNamePolicy)]
	if given := args.str("policy"); given != "" && policy != "" && policyEquivalent(given, policy) {
		policy = given
	}
	if normalized, err := normalizeJSON(policy); err == nil {
		policy = normalized
	}
	tags := map[string]string{}
	for k, v := range tagsOut.Tags {
		if !strings.HasPrefix(k, "aws:") {
			tags[k] = v
		}
	}
	m := resource.PropertyMap{
		"name":                         strProp(name),
		"url":                          strProp(id),
		"arn":                          strProp(attrs[string(sqstypes.QueueAttributeNameQueueArn)]),
		"fifoQueue":                    flag(sqstypes.QueueAttributeNameFifoQueue),
		"contentBasedDeduplication":    flag(sqstypes.QueueAttributeNameContentBasedDeduplication),
		"delaySeconds":                 number(sqstypes.QueueAttributeNameDelaySeconds, 0),
		"maxMessageSize":               number(sqstypes.QueueAttributeNameMaximumMessageSize, 262144),
		"messageRetentionSeconds":      number(sqstypes.QueueAttributeNameMessageRetentionPeriod, 345600),
		"receiveWaitTimeSeconds":       number(sqstypes.QueueAttributeNameReceiveMessageWaitTimeSeconds, 0),
		"visibilityTimeoutSeconds":     number(sqstypes.QueueAttributeNameVisibilityTimeout, 30),
		"sqsManagedSseEnabled":         flag(sqstypes.QueueAttributeNameSqsManagedSseEnabled),
		"kmsMasterKeyId":               optStr(attrs[string(sqstypes.QueueAttributeNameKmsMasterKeyId)]),
		"kmsDataKeyReusePeriodSeconds": number(sqstypes.QueueAttributeNameKmsDataKeyReusePeriodSeconds, 300),
		"policy":                       strProp(policy),
		"region":                       strProp(c.region),
		"tags":                         strMapProp(tags),
		"tagsAll":                      strMapProp(tags),
	}
	if v, ok := m["kmsDataKeyReusePeriodSeconds"]; ok && v.NumberValue() == 0 {
		m["kmsDataKeyReusePeriodSeconds"] = numProp(300)
	}
	return m, nil
}

func (queueResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	for _, k := range []resource.PropertyKey{"arn", "url"} {
		out[k] = unknown()
	}
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	if v, ok := out["policy"]; ok && v.IsString() {
		if normalized, err := normalizeJSON(v.StringValue()); err == nil {
			out["policy"] = strProp(normalized)
		}
	}
	return withDefaults(out, resource.PropertyMap{
		"region": strProp(region), "sqsManagedSseEnabled": unknown(), "policy": unknown(),
		"kmsDataKeyReusePeriodSeconds": unknown(), "tags": strMapProp(nil), "tagsAll": strMapProp(nil),
	})
}

func (queueResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap) (resource.PropertyMap, error) {
	return queueRead(ctx, c, id, view(revealMap(state)))
}

func (queueResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	api, err := c.sqsClient()
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (resource.PropertyMap, error) {
		state, _ := queueRead(ctx, c, id, n)
		return state, fmt.Errorf("updating SQS Queue (%s) %s: %w", id, what, apiError(err))
	}
	attributes, err := queueAttributesOf(n, o)
	if err != nil {
		return nil, err
	}
	if len(attributes) > 0 {
		if _, err := api.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{
			QueueUrl: aws.String(id), Attributes: attributes}); err != nil {
			return fail("attributes", err)
		}
	}
	removed, set := tagChanges(o.strMap("tags"), n.strMap("tags"))
	if len(removed) > 0 {
		if _, err := api.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(id), TagKeys: removed}); err != nil {
			return fail("tags", err)
		}
	}
	if len(set) > 0 {
		if _, err := api.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(id), Tags: set}); err != nil {
			return fail("tags", err)
		}
	}
	return queueRead(ctx, c, id, n)
}

func (queueResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	keys := []resource.PropertyKey{"tags", "contentBasedDeduplication"}
	for _, a := range queueAttributes {
		keys = append(keys, resource.PropertyKey(a.prop))
	}
	out := updatePreview(olds, news, keys...)
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (queueResource) delete(ctx context.Context, c *clients, id string, _ resource.PropertyMap) error {
	api, err := c.sqsClient()
	if err != nil {
		return err
	}
	if _, err := api.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(id)}); err != nil {
		if isQueueGone(err) {
			return nil
		}
		return fmt.Errorf("deleting SQS Queue (%s): %w", id, apiError(err))
	}
	return poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(id),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
		if isQueueGone(err) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("waiting for SQS Queue (%s) delete: %w", id, apiError(err))
		}
		return false, nil
	})
}

// --- QueuePolicy ----------------------------------------------------------------------------

type queuePolicyResource struct{}

var queuePolicySpec = &resourceSpec{
	token: queuePolicyToken,
	props: []prop{
		{name: "queueUrl", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "URL of the queue the policy is set on."},
		{name: "policy", kind: kString, input: true, output: true, required: true, equal: policyEqual,
			desc: "The queue's access policy (JSON); kept in the state normalized."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the queue; the provider's (the only one this stand-in serves)."},
	},
	keepInputs: []string{"policy"},
}

func (queuePolicyResource) spec() *resourceSpec { return queuePolicySpec }

func (queuePolicyResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return sqsTimeouts()
}

func (queuePolicyResource) check(_ *pulumirpc.CheckRequest, _, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	n := view(revealMap(news))
	var failures []*pulumirpc.CheckFailure
	if n.known("policy") {
		if f := checkPolicyJSON("policy", n.str("policy")); f != nil {
			failures = append(failures, f)
		}
	}
	return copyMap(news), failures
}

func (queuePolicyResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return queuePolicySpec.diff(olds, news, ignore)
}

// setQueuePolicy sets a queue's Policy attribute ("" removes it).
func setQueuePolicy(ctx context.Context, c *clients, queueURL, policy string) error {
	api, err := c.sqsClient()
	if err != nil {
		return err
	}
	_, err = api.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(queueURL),
		Attributes: map[string]string{string(sqstypes.QueueAttributeNamePolicy): policy}})
	return err
}

func queuePolicyRead(ctx context.Context, c *clients, id string, args view) (resource.PropertyMap, error) {
	api, err := c.sqsClient()
	if err != nil {
		return nil, err
	}
	out, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(id),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNamePolicy}})
	if isQueueGone(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading SQS Queue Policy (%s): %w", id, apiError(err))
	}
	policy := out.Attributes[string(sqstypes.QueueAttributeNamePolicy)]
	if policy == "" {
		return nil, errNotFound
	}
	if given := args.str("policy"); given != "" && policyEquivalent(given, policy) {
		policy = given
	}
	if normalized, err := normalizeJSON(policy); err == nil {
		policy = normalized
	}
	return resource.PropertyMap{
		"queueUrl": strProp(id),
		"policy":   strProp(policy),
		"region":   strProp(c.region),
	}, nil
}

func (queuePolicyResource) create(ctx context.Context, c *clients, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	id := n.str("queueUrl")
	policy, err := normalizeJSON(n.str("policy"))
	if err != nil {
		return "", nil, fmt.Errorf("policy is invalid JSON: %w", err)
	}
	if err := setQueuePolicy(ctx, c, id, policy); err != nil {
		return "", nil, fmt.Errorf("setting SQS Queue Policy (%s): %w", id, apiError(err))
	}
	state, err := retryWhile(ctx, time.Minute, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return queuePolicyRead(ctx, c, id, n) })
	if err != nil {
		return id, nil, fmt.Errorf("reading SQS Queue Policy (%s): %w", id, err)
	}
	return id, state, nil
}

func (queuePolicyResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	if v, ok := out["policy"]; ok && v.IsString() {
		if normalized, err := normalizeJSON(v.StringValue()); err == nil {
			out["policy"] = strProp(normalized)
		}
	}
	return withDefaults(out, resource.PropertyMap{"region": strProp(region)})
}

func (queuePolicyResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	return queuePolicyRead(ctx, c, id, view(revealMap(state)))
}

func (queuePolicyResource) update(ctx context.Context, c *clients, id string, _, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	n := view(revealMap(news))
	policy, err := normalizeJSON(n.str("policy"))
	if err != nil {
		return nil, fmt.Errorf("policy is invalid JSON: %w", err)
	}
	if err := setQueuePolicy(ctx, c, id, policy); err != nil {
		state, _ := queuePolicyRead(ctx, c, id, n)
		return state, fmt.Errorf("updating SQS Queue Policy (%s): %w", id, apiError(err))
	}
	return queuePolicyRead(ctx, c, id, n)
}

func (queuePolicyResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	return updatePreview(olds, news, "policy")
}

func (queuePolicyResource) delete(ctx context.Context, c *clients, id string, _ resource.PropertyMap) error {
	if err := setQueuePolicy(ctx, c, id, ""); err != nil && !isQueueGone(err) {
		return fmt.Errorf("deleting SQS Queue Policy (%s): %w", id, apiError(err))
	}
	return nil
}
