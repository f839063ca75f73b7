package main

// The SQS queue, its policy, and EventBridge rules and targets against moto's server, called as
// the engine calls them: what a stack with spot pools makes for EC2's notices.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const interruptionPattern = `{"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}`

func (h *harness) queue(name string) (string, resource.PropertyMap, resource.PropertyMap) {
	h.t.Helper()
	in := h.check(queueToken, name, nil, resource.PropertyMap{
		"name": strProp("prod-" + name), "messageRetentionSeconds": numProp(300),
		"sqsManagedSseEnabled": boolProp(true), "tags": strMapProp(map[string]string{"orca-owner": "prod"}),
	})
	id, state := h.create(queueToken, name, in)
	return id, state, in
}

func (h *harness) queueAttributes(url string) map[string]string {
	h.t.Helper()
	out, err := h.c.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		h.t.Fatalf("queue %s: %v", url, err)
	}
	return out.Attributes
}

func TestQueueHasItsAttributesAndDefaultsAndNoDiffAgainstItself(t *testing.T) {
	h := newHarness(t)
	id, state, in := h.queue("events")

	if in["visibilityTimeoutSeconds"].NumberValue() != 30 || in["maxMessageSize"].NumberValue() != 262144 ||
		in["delaySeconds"].NumberValue() != 0 || in["fifoQueue"].BoolValue() {
		t.Fatalf("Check's defaults: %v", in)
	}
	attrs := h.queueAttributes(id)
	if attrs["MessageRetentionPeriod"] != "300" || attrs["VisibilityTimeout"] != "30" ||
		attrs["MaximumMessageSize"] != "262144" || attrs["SqsManagedSseEnabled"] != "true" {
		t.Fatalf("attributes %v", attrs)
	}
	if state["url"].StringValue() != id || !strings.HasSuffix(id, "/prod-events") ||
		state["arn"].StringValue() != attrs["QueueArn"] || state["name"].StringValue() != "prod-events" ||
		state["tags"].ObjectValue()["orca-owner"].StringValue() != "prod" {
		t.Fatalf("state %v", state)
	}
	if d := h.diff(queueToken, "events", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v", d.Diffs)
	}
}

func TestQueueAttributeChangesUpdateInPlaceAndANameChangeReplaces(t *testing.T) {
	h := newHarness(t)
	id, state, in := h.queue("events")

	changed := copyMap(in)
	changed["messageRetentionSeconds"] = numProp(600)
	changed["tags"] = strMapProp(map[string]string{"orca-owner": "prod", "team": "ci"})
	d := h.diff(queueToken, "events", id, state, changed)
	if d.Changes != pulumirpc.DiffResponse_DIFF_SOME || len(d.Replaces) != 0 {
		t.Fatalf("an attribute change is in place: %v %v", d.Diffs, d.Replaces)
	}
	state = h.update(queueToken, "events", id, state, changed)
	if h.queueAttributes(id)["MessageRetentionPeriod"] != "600" ||
		state["tags"].ObjectValue()["team"].StringValue() != "ci" {
		t.Fatalf("after the update %v", state)
	}

	renamed := copyMap(changed)
	renamed["name"] = strProp("prod-other")
	if d := h.diff(queueToken, "events", id, state, renamed); len(d.Replaces) != 1 || d.Replaces[0] != "name" {
		t.Fatalf("a name change replaces: %v", d.Replaces)
	}
	fifo := copyMap(changed)
	fifo["fifoQueue"] = boolProp(true)
	if d := h.diff(queueToken, "events", id, state, fifo); len(d.Replaces) != 1 || d.Replaces[0] != "fifoQueue" {
		t.Fatalf("a fifoQueue change replaces: %v", d.Replaces)
	}
}

func TestQueueChecksWhatTheProviderValidates(t *testing.T) {
	h := newHarness(t)
	_, failures := h.checkFailures(queueToken, "bad", nil, resource.PropertyMap{
		"name": strProp("prod.events"), "messageRetentionSeconds": numProp(30),
		"contentBasedDeduplication": boolProp(true),
	})
	got := map[string]string{}
	for _, f := range failures {
		got[f.Property] = f.Reason
	}
	for key, part := range map[string]string{
		"name":                      "invalid queue name: prod.events",
		"messageRetentionSeconds":   "expected messageRetentionSeconds to be in the range (60 - 1209600), got 30",
		"contentBasedDeduplication": "content-based deduplication can only be set for FIFO queue",
	} {
		if !strings.Contains(got[key], part) {
			t.Errorf("%s: %q does not say %q", key, got[key], part)
		}
	}
	_, failures = h.checkFailures(queueToken, "dead", nil, resource.PropertyMap{"redrivePolicy": strProp("{}")})
	if len(failures) != 1 || !strings.Contains(failures[0].Reason, standIn) {
		t.Errorf("an input outside the stand-in's subset names it: %v", failures)
	}
}

func TestQueueDeleteRemovesItAndAGoneQueueReadsAsGone(t *testing.T) {
	h := newHarness(t)
	id, state, in := h.queue("events")
	h.delete(queueToken, "events", id, state)
	if got, _ := h.read(queueToken, "events", id, state, in); got != nil {
		t.Fatalf("a deleted queue reads as gone, got %v", got)
	}
	h.delete(queueToken, "events", id, state) // gone already: no error
}

func eventsPolicy(queueArn, ruleArn string) string {
	policy, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect": "Allow", "Principal": map[string]any{"Service": "events.amazonaws.com"},
			"Action": "sqs:SendMessage", "Resource": queueArn,
			"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": []string{ruleArn}}},
		}},
	})
	return string(policy)
}

func TestQueuePolicyIsSetComparesAsAPolicyAndIsRemovedOnDelete(t *testing.T) {
	h := newHarness(t)
	queueID, queueState, _ := h.queue("events")
	policy := eventsPolicy(queueState["arn"].StringValue(), "arn:aws:events:eu-central-1:123456789012:rule/prod-x")
	in := h.check(queuePolicyToken, "events", nil, resource.PropertyMap{
		"queueUrl": strProp(queueID), "policy": strProp(policy)})
	id, state := h.create(queuePolicyToken, "events", in)
	if id != queueID || !policyEquivalent(h.queueAttributes(queueID)["Policy"], policy) {
		t.Fatalf("policy %s on %s", h.queueAttributes(queueID)["Policy"], id)
	}
	spaced := copyMap(in)
	spaced["policy"] = strProp(strings.ReplaceAll(policy, ",", ", "))
	if d := h.diff(queuePolicyToken, "events", id, state, spaced); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("an equivalent policy is no change: %v", d.Diffs)
	}
	moved := copyMap(in)
	moved["queueUrl"] = strProp(queueID + "-other")
	if d := h.diff(queuePolicyToken, "events", id, state, moved); len(d.Replaces) != 1 || d.Replaces[0] != "queueUrl" {
		t.Fatalf("another queue replaces: %v", d.Replaces)
	}

	h.delete(queuePolicyToken, "events", id, state)
	if got := h.queueAttributes(queueID)["Policy"]; got != "" {
		t.Fatalf("policy after delete: %q", got)
	}
	if got, _ := h.read(queuePolicyToken, "events", id, state, in); got != nil {
		t.Fatalf("a queue without a policy reads as gone, got %v", got)
	}
}

func (h *harness) rule(name, pattern string) (string, resource.PropertyMap, resource.PropertyMap) {
	h.t.Helper()
	in := h.check(eventRuleToken, name, nil, resource.PropertyMap{
		"name": strProp("prod-" + name), "eventPattern": strProp(pattern),
		"description": strProp("EC2's notices"), "tags": strMapProp(map[string]string{"orca-owner": "prod"}),
	})
	id, state := h.create(eventRuleToken, name, in)
	return id, state, in
}

func TestEventRuleKeepsItsPatternAndUpdatesInPlace(t *testing.T) {
	h := newHarness(t)
	id, state, in := h.rule("spot-interruption", interruptionPattern)

	out, err := h.c.events.DescribeRule(context.Background(), &eventbridge.DescribeRuleInput{Name: aws.String(id)})
	if err != nil || !eventPatternEqual(strProp(aws.ToString(out.EventPattern)), strProp(interruptionPattern), nil) {
		t.Fatalf("rule %v %v", out, err)
	}
	if id != "prod-spot-interruption" || state["eventBusName"].StringValue() != "default" ||
		state["state"].StringValue() != "ENABLED" || !strings.HasSuffix(state["arn"].StringValue(), ":rule/prod-spot-interruption") ||
		state["tags"].ObjectValue()["orca-owner"].StringValue() != "prod" {
		t.Fatalf("state %v", state)
	}
	if d := h.diff(eventRuleToken, "r", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state, got %v", d.Diffs)
	}
	compact := copyMap(in)
	compact["eventPattern"] = strProp(`{"detail-type":["EC2 Spot Instance Interruption Warning"],"source":["aws.ec2"]}`)
	if d := h.diff(eventRuleToken, "r", id, state, compact); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("the same pattern written otherwise is no change: %v", d.Diffs)
	}

	changed := copyMap(in)
	changed["eventPattern"] = strProp(`{"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}`)
	d := h.diff(eventRuleToken, "r", id, state, changed)
	if d.Changes != pulumirpc.DiffResponse_DIFF_SOME || len(d.Replaces) != 0 {
		t.Fatalf("a pattern change is in place: %v %v", d.Diffs, d.Replaces)
	}
	state = h.update(eventRuleToken, "r", id, state, changed)
	if !strings.Contains(state["eventPattern"].StringValue(), "Rebalance") {
		t.Fatalf("after the update %v", state)
	}
	renamed := copyMap(changed)
	renamed["name"] = strProp("prod-other")
	if d := h.diff(eventRuleToken, "r", id, state, renamed); len(d.Replaces) != 1 || d.Replaces[0] != "name" {
		t.Fatalf("a name change replaces: %v", d.Replaces)
	}
}

func TestEventRuleChecksWhatTheProviderValidates(t *testing.T) {
	h := newHarness(t)
	_, failures := h.checkFailures(eventRuleToken, "bad", nil, resource.PropertyMap{
		"name": strProp("prod events"), "state": strProp("ON"),
	})
	got := map[string]string{}
	for _, f := range failures {
		got[f.Property] = f.Reason
	}
	for key, part := range map[string]string{
		"name":         "must be 1 to 64 letters",
		"eventPattern": "one of `event_pattern,schedule_expression` must be specified",
		"state":        "expected state to be one of [DISABLED ENABLED ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS], got ON",
	} {
		if !strings.Contains(got[key], part) {
			t.Errorf("%s: %q does not say %q", key, got[key], part)
		}
	}
}

func TestEventTargetSendsTheRulesEventsToTheQueueAndGoesOnDelete(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	queueID, queueState, _ := h.queue("events")
	ruleID, ruleState, _ := h.rule("spot-interruption", interruptionPattern)
	in := h.check(eventTargetToken, "t", nil, resource.PropertyMap{
		"rule": strProp(ruleID), "arn": queueState["arn"]})
	if in["eventBusName"].StringValue() != "default" {
		t.Fatalf("Check's default bus: %v", in)
	}
	if d := h.diff(eventTargetToken, "t", "", resource.PropertyMap{}, in); d.Changes != pulumirpc.DiffResponse_DIFF_SOME {
		t.Fatalf("a new target is a change: %v", d)
	}
	id, state := h.create(eventTargetToken, "t", in)
	targetID := state["targetId"].StringValue()
	if !strings.HasPrefix(targetID, "terraform-") || id != ruleID+"-"+targetID {
		t.Fatalf("target %s, id %s", targetID, id)
	}
	if d := h.diff(eventTargetToken, "t", id, state, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("no diff against its own state (its generated id kept), got %v", d.Diffs)
	}

	detail := `{"instance-id": "i-0123456789abcdef0", "instance-action": "terminate"}`
	for _, kind := range []string{"EC2 Spot Instance Interruption Warning", "EC2 Instance Rebalance Recommendation"} {
		if _, err := h.c.events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			Source: aws.String("aws.ec2"), DetailType: aws.String(kind), Detail: aws.String(detail)}}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := h.c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueID), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 1 || !strings.Contains(aws.ToString(got.Messages[0].Body), "Interruption Warning") {
		t.Fatalf("the rule's events reach the queue, the others not: %v %v", got, err)
	}

	moved := copyMap(in)
	moved["rule"] = strProp("prod-other")
	if d := h.diff(eventTargetToken, "t", id, state, moved); len(d.Replaces) != 1 || d.Replaces[0] != "rule" {
		t.Fatalf("another rule replaces: %v", d.Replaces)
	}
	h.delete(eventTargetToken, "t", id, state)
	if got, _ := h.read(eventTargetToken, "t", id, state, in); got != nil {
		t.Fatalf("a removed target reads as gone, got %v", got)
	}
	h.delete(eventRuleToken, "r", ruleID, ruleState)
	if _, err := h.c.events.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(ruleID)}); !isEventsNotFound(err) {
		t.Fatalf("rule after delete: %v", err)
	}
}

func TestAStackWithoutSQSEndpointsConfiguresAndAQueueIsRefusedNamingTheStandIn(t *testing.T) {
	clearEndpointEnv(t)
	url := motoURL(t)
	if err := configure(t, []map[string]string{{"ec2": url, "iam": url, "sts": url}}); err != nil {
		t.Fatalf("EC2, IAM and STS at moto are enough to configure: %v", err)
	}
	p := newProvider(nil)
	raw, _ := json.Marshal([]map[string]string{{"ec2": url, "iam": url, "sts": url}})
	args, _ := marshal(resource.PropertyMap{"region": strProp("eu-central-1"), "accessKey": strProp("testing"),
		"secretKey": strProp("testing"), "endpoints": strProp(string(raw))}, "test")
	if _, err := p.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	props, _ := marshal(resource.PropertyMap{"name": strProp("prod-events")}, "test")
	_, err := p.Create(context.Background(), &pulumirpc.CreateRequest{
		Urn: urn(queueToken, "events"), Type: queueToken, Properties: props})
	wantRefusal(t, err, "sqs", "https://sqs.eu-central-1.amazonaws.com")
}

func TestEndpointsTakeEventsUnderItsAliases(t *testing.T) {
	for _, key := range []string{"events", "eventbridge", "cloudwatchevents"} {
		raw, _ := json.Marshal([]map[string]string{{key: "http://127.0.0.1:5000"}})
		got, err := endpointsOf(view(normalizeConfig(resource.PropertyMap{"endpoints": strProp(string(raw))})))
		if err != nil || got["events"] != "http://127.0.0.1:5000" {
			t.Errorf("%s: %v %v", key, got, err)
		}
	}
	raw, _ := json.Marshal([]map[string]string{{"sns": "http://127.0.0.1:5000"}})
	if _, err := endpointsOf(view(normalizeConfig(resource.PropertyMap{"endpoints": strProp(string(raw))}))); err == nil ||
		!strings.Contains(err.Error(), "sqs and events") {
		t.Errorf("sns: %v", err)
	}
}
