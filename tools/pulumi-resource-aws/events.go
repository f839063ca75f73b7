package main

// The EventBridge resources pulumi-aws keeps under cloudwatch, as terraform-provider-aws v6
// behaves (internal/service/events/rule.go, target.go):
//
//	aws:cloudwatch/eventRule:EventRule      id: the rule's name (<bus>/<name> off the default
//	    bus). name and eventBusName (default "default") replace; the event pattern is kept as
//	    JSON re-encoded without the escapes of <, > and & (ruleEventPatternJSONDecoder) and
//	    compares as JSON; a pattern or a schedule is required; state (ENABLED, DISABLED,
//	    ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS) left out keeps the rule's (isEnabled, its
//	    deprecated form, likewise); a change is one PutRule with every field, tags change with
//	    TagResource / UntagResource; delete retries "Rule can't be deleted since it has
//	    targets" for 5 minutes (forceDestroy deletes a managed rule).
//	aws:cloudwatch/eventTarget:EventTarget  id: <rule>-<targetId> (<bus>-<rule>-<targetId> off
//	    the default bus). rule, targetId (generated as terraform's id.UniqueId when absent) and
//	    eventBusName replace; arn, input, inputPath, roleArn and sqsTarget change in place with
//	    PutTargets; a failed entry is the error; delete is RemoveTargets. A target its rule no
//	    longer lists reads as gone.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	eventRuleToken   = "aws:cloudwatch/eventRule:EventRule"
	eventTargetToken = "aws:cloudwatch/eventTarget:EventTarget"
	defaultEventBus  = "default"
)

func eventsTimeouts() (time.Duration, time.Duration, time.Duration) {
	return 5 * time.Minute, 5 * time.Minute, 5 * time.Minute
}

func isEventsNotFound(err error) bool {
	var gone *ebtypes.ResourceNotFoundException
	return errors.As(err, &gone) || hasCode(err, "ResourceNotFoundException")
}

// eventPatternJSON is a pattern as the state keeps it: re-encoded JSON, with <, > and &
// written as themselves (terraform's ruleEventPatternJSONDecoder).
func eventPatternJSON(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	for escaped, plain := range map[string]string{`\u003c`: "<", `\u003e`: ">", `\u0026`: "&"} {
		b = bytes.ReplaceAll(b, []byte(escaped), []byte(plain))
	}
	return string(b), nil
}

func eventPatternEqual(old, new resource.PropertyValue, _ view) bool {
	a, errA := eventPatternJSON(stringOr(old))
	b, errB := eventPatternJSON(stringOr(new))
	if errA != nil || errB != nil {
		return stringOr(old) == stringOr(new)
	}
	return a == b
}

// --- EventRule ----------------------------------------------------------------------------------

type eventRuleResource struct{}

var ruleStates = []string{"DISABLED", "ENABLED", "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS"}

var ruleNamePattern = regexp.MustCompile(`^[\.\-_A-Za-z0-9]+$`)

var eventRuleSpec = &resourceSpec{
	token: eventRuleToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Name of the rule; autonamed when absent."},
		{name: "description", kind: kString, input: true, output: true, desc: "Description of the rule."},
		{name: "eventBusName", kind: kString, input: true, output: true, replace: true,
			def: defaultOf(strProp(defaultEventBus)), desc: "The event bus, by name or ARN; default \"default\"."},
		{name: "eventPattern", kind: kString, input: true, output: true, equal: eventPatternEqual,
			desc: "The event pattern (JSON)."},
		{name: "scheduleExpression", kind: kString, input: true, output: true,
			desc: "A schedule: cron(...) or rate(...)."},
		{name: "state", kind: kString, input: true, output: true, computed: true,
			desc: "ENABLED, DISABLED or ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS; the rule's own when absent."},
		{name: "isEnabled", kind: kBool, input: true, output: true, computed: true,
			desc: "Deprecated: use state."},
		{name: "roleArn", kind: kString, input: true, output: true, desc: "The role EventBridge assumes for the rule."},
		{name: "forceDestroy", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Delete the rule even when a service manages it."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the rule."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the rule; the provider's (the only one this stand-in serves)."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the rule."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
	},
	unsupported: []string{"namePrefix"},
	keepInputs:  []string{"eventPattern"},
}

func (eventRuleResource) spec() *resourceSpec { return eventRuleSpec }

func (eventRuleResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return eventsTimeouts()
}

func (eventRuleResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	var failures []*pulumirpc.CheckFailure
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	eventRuleSpec.applyDefaults(checked)
	n := view(revealMap(checked))
	if n.known("name") && (len(n.str("name")) > 64 || !ruleNamePattern.MatchString(n.str("name"))) {
		failures = append(failures, failure("name",
			"%q must be 1 to 64 letters, digits, '.', '-' or '_', got %q", "name", n.str("name")))
	}
	if !n.has("eventPattern") && !n.has("scheduleExpression") {
		failures = append(failures, failure("eventPattern",
			"one of `event_pattern,schedule_expression` must be specified"))
	}
	if n.known("eventPattern") {
		pattern, err := eventPatternJSON(n.str("eventPattern"))
		switch {
		case err != nil:
			failures = append(failures, failure("eventPattern", "%q contains an invalid JSON: %v", "eventPattern", err))
		case len(pattern) > 4096:
			failures = append(failures, failure("eventPattern", "%q cannot be longer than 4096 characters", "eventPattern"))
		}
	}
	if n.known("description") && len(n.str("description")) > 512 {
		failures = append(failures, failure("description", "expected length of description to be in the range (0 - 512)"))
	}
	if n.known("state") && !containsString(ruleStates, n.str("state")) {
		failures = append(failures, failure("state", "expected state to be one of [%s], got %s",
			strings.Join(ruleStates, " "), n.str("state")))
	}
	if n.has("state") && n.has("isEnabled") {
		failures = append(failures, failure("isEnabled", "\"is_enabled\": conflicts with state"))
	}
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	return checked, failures
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (eventRuleResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return eventRuleSpec.diff(olds, news, ignore)
}

// ruleID is a rule's id: its name on the default bus, else <bus>/<name>.
func ruleID(bus, name string) string {
	if bus == "" || bus == defaultEventBus {
		return name
	}
	return bus + "/" + name
}

// ruleOfID is a rule's bus and name from its id.
func ruleOfID(id string) (bus, name string) {
	i := strings.LastIndex(id, "/")
	if i < 0 {
		return defaultEventBus, id
	}
	return id[:i], id[i+1:]
}

func putRuleInput(n view, tags bool) (*eventbridge.PutRuleInput, error) {
	in := &eventbridge.PutRuleInput{Name: aws.String(n.str("name")), EventBusName: aws.String(n.str("eventBusName"))}
	if v := n.str("description"); v != "" {
		in.Description = aws.String(v)
	}
	if v := n.str("eventPattern"); v != "" {
		pattern, err := eventPatternJSON(v)
		if err != nil {
			return nil, fmt.Errorf("event_pattern is invalid JSON: %w", err)
		}
		in.EventPattern = aws.String(pattern)
	}
	if v := n.str("scheduleExpression"); v != "" {
		in.ScheduleExpression = aws.String(v)
	}
	if v := n.str("roleArn"); v != "" {
		in.RoleArn = aws.String(v)
	}
	switch {
	case n.has("state"):
		in.State = ebtypes.RuleState(n.str("state"))
	case n.has("isEnabled") && n.boolean("isEnabled"):
		in.State = ebtypes.RuleStateEnabled
	case n.has("isEnabled"):
		in.State = ebtypes.RuleStateDisabled
	}
	if t := n.strMap("tags"); tags && len(t) > 0 {
		for _, k := range sortedKeys(t) {
			in.Tags = append(in.Tags, ebtypes.Tag{Key: aws.String(k), Value: aws.String(t[k])})
		}
	}
	return in, nil
}

func putRule(ctx context.Context, api *eventbridge.Client, in *eventbridge.PutRuleInput) (string, error) {
	out, err := retryWhile(ctx, propagationTimeout, func(err error) bool {
		return hasMessage(err, "ValidationException", "cannot be assumed by principal")
	}, func(ctx context.Context) (*eventbridge.PutRuleOutput, error) { return api.PutRule(ctx, in) })
	if err != nil {
		return "", err
	}
	return aws.ToString(out.RuleArn), nil
}

func (eventRuleResource) create(ctx context.Context, c *clients, news resource.PropertyMap) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	api, err := c.eventsClient()
	if err != nil {
		return "", nil, err
	}
	in, err := putRuleInput(n, true)
	if err != nil {
		return "", nil, err
	}
	if _, err := putRule(ctx, api, in); err != nil {
		return "", nil, fmt.Errorf("creating EventBridge Rule (%s): %w", n.str("name"), apiError(err))
	}
	id := ruleID(n.str("eventBusName"), n.str("name"))
	state, err := retryWhile(ctx, 2*time.Minute, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return eventRuleRead(ctx, c, id, n) })
	if err != nil {
		return id, nil, fmt.Errorf("waiting for EventBridge Rule (%s) create: %w", id, err)
	}
	return id, state, nil
}

func eventRuleRead(ctx context.Context, c *clients, id string, args view) (resource.PropertyMap, error) {
	api, err := c.eventsClient()
	if err != nil {
		return nil, err
	}
	bus, name := ruleOfID(id)
	out, err := api.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name), EventBusName: aws.String(bus)})
	if isEventsNotFound(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading EventBridge Rule (%s): %w", id, apiError(err))
	}
	arn := aws.ToString(out.Arn)
	tagsOut, err := api.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if isEventsNotFound(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("listing tags of EventBridge Rule (%s): %w", id, apiError(err))
	}
	tags := map[string]string{}
	for _, t := range tagsOut.Tags {
		if k := aws.ToString(t.Key); !strings.HasPrefix(k, "aws:") {
			tags[k] = aws.ToString(t.Value)
		}
	}
	pattern, err := eventPatternJSON(aws.ToString(out.EventPattern))
	if err != nil {
		return nil, err
	}
	if given := args.str("eventPattern"); given != "" && eventPatternEqual(strProp(given), strProp(pattern), nil) {
		pattern = given
	}
	state := string(out.State)
	return resource.PropertyMap{
		"name":               strProp(aws.ToString(out.Name)),
		"arn":                strProp(arn),
		"description":        optStr(aws.ToString(out.Description)),
		"eventBusName":       strProp(bus),
		"eventPattern":       optStr(pattern),
		"scheduleExpression": optStr(aws.ToString(out.ScheduleExpression)),
		"state":              strProp(state),
		"isEnabled":          boolProp(state != string(ebtypes.RuleStateDisabled)),
		"roleArn":            optStr(aws.ToString(out.RoleArn)),
		"forceDestroy":       boolProp(args.boolean("forceDestroy")),
		"region":             strProp(c.region),
		"tags":               strMapProp(tags),
		"tagsAll":            strMapProp(tags),
	}, nil
}

func (eventRuleResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	out["arn"] = unknown()
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	return withDefaults(out, resource.PropertyMap{
		"region": strProp(region), "state": unknown(), "isEnabled": unknown(),
		"tags": strMapProp(nil), "tagsAll": strMapProp(nil),
	})
}

func (eventRuleResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap) (resource.PropertyMap, error) {
	return eventRuleRead(ctx, c, id, view(revealMap(state)))
}

func (eventRuleResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	api, err := c.eventsClient()
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (resource.PropertyMap, error) {
		state, _ := eventRuleRead(ctx, c, id, n)
		return state, fmt.Errorf("updating EventBridge Rule (%s) %s: %w", id, what, apiError(err))
	}
	for _, k := range []string{"description", "eventPattern", "scheduleExpression", "state", "isEnabled", "roleArn"} {
		if !eventRuleSpec.prop(k).changed(o, n) {
			continue
		}
		in, err := putRuleInput(n, false)
		if err != nil {
			return nil, err
		}
		if _, err := putRule(ctx, api, in); err != nil {
			return fail("", err)
		}
		break
	}
	arn := o.str("arn")
	removed, set := tagChanges(o.strMap("tags"), n.strMap("tags"))
	if len(removed) > 0 {
		if _, err := api.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: removed}); err != nil {
			return fail("tags", err)
		}
	}
	if len(set) > 0 {
		var tags []ebtypes.Tag
		for _, k := range sortedKeys(set) {
			tags = append(tags, ebtypes.Tag{Key: aws.String(k), Value: aws.String(set[k])})
		}
		if _, err := api.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: aws.String(arn), Tags: tags}); err != nil {
			return fail("tags", err)
		}
	}
	return eventRuleRead(ctx, c, id, n)
}

func (eventRuleResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, "description", "eventPattern", "scheduleExpression", "state",
		"isEnabled", "roleArn", "forceDestroy", "tags")
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (eventRuleResource) delete(ctx context.Context, c *clients, id string, state resource.PropertyMap) error {
	api, err := c.eventsClient()
	if err != nil {
		return err
	}
	bus, name := ruleOfID(id)
	in := &eventbridge.DeleteRuleInput{Name: aws.String(name), EventBusName: aws.String(bus),
		Force: view(revealMap(state)).boolean("forceDestroy")}
	_, err = retryWhile(ctx, 5*time.Minute, func(err error) bool {
		return hasMessage(err, "ValidationException", "Rule can't be deleted since it has targets")
	}, func(ctx context.Context) (*eventbridge.DeleteRuleOutput, error) { return api.DeleteRule(ctx, in) })
	if err != nil && !isEventsNotFound(err) {
		return fmt.Errorf("deleting EventBridge Rule (%s): %w", id, apiError(err))
	}
	return nil
}

// --- EventTarget --------------------------------------------------------------------------------

type eventTargetResource struct{}

var sqsTargetFields = []prop{
	{name: "messageGroupId", kind: kString, input: true, desc: "The message group of a FIFO queue."},
}

const sqsTargetType = "aws:cloudwatch/EventTargetSqsTarget:EventTargetSqsTarget"

var eventTargetSpec = &resourceSpec{
	token: eventTargetToken,
	props: []prop{
		{name: "rule", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "Name of the rule."},
		{name: "arn", kind: kString, input: true, output: true, required: true,
			desc: "ARN of the target."},
		{name: "targetId", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Id of the target in its rule; generated when absent."},
		{name: "eventBusName", kind: kString, input: true, output: true, replace: true,
			def: defaultOf(strProp(defaultEventBus)), desc: "The rule's event bus; default \"default\"."},
		{name: "input", kind: kString, input: true, output: true, desc: "JSON sent instead of the event."},
		{name: "inputPath", kind: kString, input: true, output: true, desc: "JSONPath of the part of the event sent."},
		{name: "roleArn", kind: kString, input: true, output: true, desc: "The role EventBridge assumes for the target."},
		{name: "sqsTarget", kind: kObject, input: true, output: true, fields: sqsTargetFields, ref: sqsTargetType,
			desc: "SQS parameters of the target."},
		{name: "forceDestroy", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Remove the target even when a service manages its rule."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the target; the provider's (the only one this stand-in serves)."},
	},
	unsupported: []string{"appsyncTarget", "batchTarget", "deadLetterConfig", "ecsTarget", "httpTarget",
		"inputTransformer", "kinesisTarget", "redshiftTarget", "retryPolicy", "runCommandTargets",
		"sagemakerPipelineTarget"},
}

var targetIDPattern = regexp.MustCompile(`^[\.\-_A-Za-z0-9]+$`)

func (eventTargetResource) spec() *resourceSpec { return eventTargetSpec }

func (eventTargetResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return eventsTimeouts()
}

func (eventTargetResource) check(_ *pulumirpc.CheckRequest, _, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	eventTargetSpec.applyDefaults(checked)
	n := view(revealMap(checked))
	var failures []*pulumirpc.CheckFailure
	if n.known("arn") && !strings.HasPrefix(n.str("arn"), "arn:") {
		failures = append(failures, failure("arn", "%q (%s) is an invalid ARN: arn: invalid prefix", "arn", n.str("arn")))
	}
	if n.known("targetId") && (len(n.str("targetId")) > 64 || !targetIDPattern.MatchString(n.str("targetId"))) {
		failures = append(failures, failure("targetId",
			"%q must be 1 to 64 letters, digits, '.', '-' or '_', got %q", "targetId", n.str("targetId")))
	}
	if n.known("input") && n.str("input") != "" && !json.Valid([]byte(n.str("input"))) {
		failures = append(failures, failure("input", "%q contains an invalid JSON", "input"))
	}
	if n.has("input") && n.has("inputPath") {
		failures = append(failures, failure("inputPath", "\"input_path\": conflicts with input"))
	}
	return checked, failures
}

func (eventTargetResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return eventTargetSpec.diff(olds, news, ignore)
}

var uniqueIDs struct {
	sync.Mutex
	n int
}

// uniqueTargetID is what terraform's id.UniqueId gives a target left without an id:
// "terraform-", a UTC timestamp to the 0.1 ms and a counter of the process, in hex.
func uniqueTargetID() string {
	uniqueIDs.Lock()
	defer uniqueIDs.Unlock()
	uniqueIDs.n++
	stamp := strings.Replace(time.Now().UTC().Format("20060102150405.0000"), ".", "", 1)
	return fmt.Sprintf("terraform-%s%08x", stamp, uniqueIDs.n)
}

// targetID is a target's resource id (terraform's targetCreateResourceID).
func targetID(bus, rule, id string) string {
	if bus == "" || bus == defaultEventBus {
		return rule + "-" + id
	}
	return bus + "-" + rule + "-" + id
}

func putTargetsInput(n view) *eventbridge.PutTargetsInput {
	target := ebtypes.Target{Arn: aws.String(n.str("arn")), Id: aws.String(n.str("targetId"))}
	if v := n.str("input"); v != "" {
		target.Input = aws.String(v)
	}
	if v := n.str("inputPath"); v != "" {
		target.InputPath = aws.String(v)
	}
	if v := n.str("roleArn"); v != "" {
		target.RoleArn = aws.String(v)
	}
	if p, ok := n.get("sqsTarget"); ok && p.IsObject() {
		target.SqsParameters = &ebtypes.SqsParameters{}
		if g := view(p.ObjectValue()).str("messageGroupId"); g != "" {
			target.SqsParameters.MessageGroupId = aws.String(g)
		}
	}
	return &eventbridge.PutTargetsInput{Rule: aws.String(n.str("rule")),
		EventBusName: aws.String(n.str("eventBusName")), Targets: []ebtypes.Target{target}}
}

func putTargets(ctx context.Context, api *eventbridge.Client, n view) error {
	out, err := api.PutTargets(ctx, putTargetsInput(n))
	if err != nil {
		return err
	}
	var failed []error
	for _, e := range out.FailedEntries {
		failed = append(failed, fmt.Errorf("%s: %s: %s", aws.ToString(e.TargetId), aws.ToString(e.ErrorCode),
			aws.ToString(e.ErrorMessage)))
	}
	return errors.Join(failed...)
}

func (eventTargetResource) create(ctx context.Context, c *clients, news resource.PropertyMap) (string, resource.PropertyMap, error) {
	m := copyMap(news)
	if v, ok := m["targetId"]; !ok || v.IsNull() {
		m["targetId"] = strProp(uniqueTargetID())
	}
	n := view(revealMap(m))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	api, err := c.eventsClient()
	if err != nil {
		return "", nil, err
	}
	id := targetID(n.str("eventBusName"), n.str("rule"), n.str("targetId"))
	if err := putTargets(ctx, api, n); err != nil {
		return "", nil, fmt.Errorf("creating EventBridge Target (%s): %w", id, apiError(err))
	}
	state, err := eventTargetRead(ctx, c, n)
	if err != nil {
		return id, nil, fmt.Errorf("reading EventBridge Target (%s): %w", id, err)
	}
	return id, state, nil
}

func eventTargetRead(ctx context.Context, c *clients, args view) (resource.PropertyMap, error) {
	api, err := c.eventsClient()
	if err != nil {
		return nil, err
	}
	bus, rule, want := args.str("eventBusName"), args.str("rule"), args.str("targetId")
	if bus == "" {
		bus = defaultEventBus
	}
	in := &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rule), EventBusName: aws.String(bus), Limit: aws.Int32(100)}
	for {
		out, err := api.ListTargetsByRule(ctx, in)
		if isEventsNotFound(err) || hasCode(err, "ValidationException") {
			return nil, errNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("reading EventBridge Targets of Rule (%s): %w", rule, apiError(err))
		}
		for _, t := range out.Targets {
			if aws.ToString(t.Id) != want {
				continue
			}
			state := resource.PropertyMap{
				"rule":         strProp(rule),
				"arn":          strProp(aws.ToString(t.Arn)),
				"targetId":     strProp(want),
				"eventBusName": strProp(bus),
				"input":        optStr(aws.ToString(t.Input)),
				"inputPath":    optStr(aws.ToString(t.InputPath)),
				"roleArn":      optStr(aws.ToString(t.RoleArn)),
				"forceDestroy": boolProp(args.boolean("forceDestroy")),
				"region":       strProp(c.region),
			}
			if t.SqsParameters != nil {
				state["sqsTarget"] = resource.NewObjectProperty(resource.PropertyMap{
					"messageGroupId": optStr(aws.ToString(t.SqsParameters.MessageGroupId))})
			}
			return state, nil
		}
		if aws.ToString(out.NextToken) == "" {
			return nil, errNotFound
		}
		in.NextToken = out.NextToken
	}
}

func (eventTargetResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	return withDefaults(copyMap(news), resource.PropertyMap{"region": strProp(region), "targetId": unknown()})
}

func (eventTargetResource) read(ctx context.Context, c *clients, _ string, state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	return eventTargetRead(ctx, c, view(revealMap(state)))
}

func (eventTargetResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	m := copyMap(news)
	if v, ok := m["targetId"]; !ok || v.IsNull() {
		m["targetId"] = olds["targetId"]
	}
	n := view(revealMap(m))
	api, err := c.eventsClient()
	if err != nil {
		return nil, err
	}
	if err := putTargets(ctx, api, n); err != nil {
		state, _ := eventTargetRead(ctx, c, n)
		return state, fmt.Errorf("updating EventBridge Target (%s): %w", id, apiError(err))
	}
	return eventTargetRead(ctx, c, n)
}

func (eventTargetResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	return updatePreview(olds, news, "arn", "input", "inputPath", "roleArn", "sqsTarget", "forceDestroy")
}

func (eventTargetResource) delete(ctx context.Context, c *clients, id string, state resource.PropertyMap) error {
	api, err := c.eventsClient()
	if err != nil {
		return err
	}
	s := view(revealMap(state))
	bus := s.str("eventBusName")
	if bus == "" {
		bus = defaultEventBus
	}
	out, err := api.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(s.str("rule")),
		EventBusName: aws.String(bus), Ids: []string{s.str("targetId")}, Force: s.boolean("forceDestroy")})
	if err == nil && out != nil && len(out.FailedEntries) > 0 {
		e := out.FailedEntries[0]
		err = fmt.Errorf("%s: %s", aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
	}
	if err != nil && !isEventsNotFound(err) {
		return fmt.Errorf("deleting EventBridge Target (%s): %w", id, apiError(err))
	}
	return nil
}
