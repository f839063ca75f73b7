// Command pulumi-resource-aws is the project's stand-in for the Pulumi aws resource provider
// plugin, built by scripts/install-pulumi.
//
// Why it exists: the official plugin (github.com/pulumi/pulumi-aws/provider, a bridge over
// github.com/hashicorp/terraform-provider-aws) cannot be built here: the Go module proxy this
// project's machines reach does not serve that module, and its go.mod replaces the terraform
// provider with a source tree it does not publish. The official AWS SDK for Go v2 and the Pulumi
// SDK are served, so this plugin speaks the provider gRPC protocol itself and drives EC2, IAM,
// STS, SQS and EventBridge (or moto's server) through the SDK.
//
// It answers to the plugin name the Python SDK asks for (aws), installed under the pinned
// pulumi-aws version with the build suffix +orca.standin (see README.md), with pulumi-aws's
// type tokens and wire property names, for exactly the subset this project's program
// (machines/components.py) uses:
//
//	aws:ec2/instance:Instance
//	aws:ec2/securityGroup:SecurityGroup
//	aws:iam/role:Role
//	aws:iam/rolePolicyAttachment:RolePolicyAttachment
//	aws:iam/instanceProfile:InstanceProfile
//	aws:sqs/queue:Queue
//	aws:sqs/queuePolicy:QueuePolicy
//	aws:cloudwatch/eventRule:EventRule
//	aws:cloudwatch/eventTarget:EventTarget
//	aws:ec2/getAmi:getAmi                   (invoke)
//	aws:ec2/getInstanceType:getInstanceType (invoke)
//
// Anything else (other resources, invokes, inputs and configuration keys) is refused with a
// message naming this stand-in, never ignored. Behaviour follows terraform-provider-aws v6
// as pulumi-aws 7 bridges it; README.md lists every known difference.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/diag"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// version is the provider version the engine sees; scripts/install-pulumi sets it to the
// pulumi-aws version pinned in requirements.txt plus +orca.standin, with
// -ldflags "-X main.version=...".
var version = "7.51.1+orca.standin"

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(version)
		return
	}
	err := provider.Main("aws", func(host *provider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		return newProvider(host), nil
	})
	if err != nil {
		cmdutil.ExitError(err.Error())
	}
}

type awsProvider struct {
	pulumirpc.UnimplementedResourceProviderServer

	host *provider.HostClient

	// cancelled by Cancel: every operation in flight stops waiting.
	stop     context.Context
	stopFunc context.CancelFunc

	mu         sync.Mutex
	configured bool
	region     string   // the configured region, known even when the clients are not
	clients    *clients // nil until configured with a known configuration
}

func newProvider(host *provider.HostClient) *awsProvider {
	stop, stopFunc := context.WithCancel(context.Background())
	return &awsProvider{host: host, stop: stop, stopFunc: stopFunc}
}

// op derives an operation's context: cancelled by the request, by Cancel, or at the timeout.
func (p *awsProvider) op(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(p.stop, cancel)
	if timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, timeout)
		inner := cancel
		cancel = func() { cancelTimeout(); inner() }
	}
	return ctx, func() { unhook(); cancel() }
}

// api returns the configured clients, or an error saying why there are none.
func (p *awsProvider) api() (*clients, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clients == nil {
		if !p.configured {
			return nil, status.Error(codes.FailedPrecondition, "aws: the provider is not configured yet")
		}
		return nil, status.Error(codes.FailedPrecondition,
			"aws: the provider's configuration is not known yet (it depends on another resource's output)")
	}
	return p.clients, nil
}

// start begins an operation that needs the API: its context (the caller calls done when it
// ends) and the configured clients.
func (p *awsProvider) start(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, *clients, error) {
	c, err := p.api()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, done := p.op(ctx, timeout)
	return ctx, done, c, nil
}

func (p *awsProvider) state() (*clients, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clients, p.region
}

func (p *awsProvider) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetSchema answers the same document for every schema version asked for.
func (p *awsProvider) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	s, err := schemaJSON()
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetSchemaResponse{Schema: s}, nil
}

func (p *awsProvider) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	p.stopFunc()
	return &emptypb.Empty{}, nil
}

func (p *awsProvider) Attach(context.Context, *pulumirpc.PluginAttach) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// --- provider configuration -------------------------------------------------------------------

func (p *awsProvider) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	news, err := unmarshal(req.GetNews(), "CheckConfig.news")
	if err != nil {
		return nil, err
	}
	failures := checkConfig(view(normalizeConfig(revealMap(news))))
	for _, k := range secretConfigKeys {
		if v, ok := news[resource.PropertyKey(k)]; ok {
			news[resource.PropertyKey(k)] = secret(v)
		}
	}
	inputs, err := marshal(news, "CheckConfig.inputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CheckResponse{Inputs: inputs, Failures: failures}, nil
}

func (p *awsProvider) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	olds, err := unmarshal(req.GetOldInputs(), "DiffConfig.olds")
	if err != nil {
		return nil, err
	}
	if len(olds) == 0 {
		if olds, err = unmarshal(req.GetOlds(), "DiffConfig.olds"); err != nil {
			return nil, err
		}
	}
	news, err := unmarshal(req.GetNews(), "DiffConfig.news")
	if err != nil {
		return nil, err
	}
	o, n := normalizeConfig(revealMap(olds)), normalizeConfig(revealMap(news))
	resp := &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}
	for _, k := range sortedKeys(configKinds) {
		key := resource.PropertyKey(k)
		ov, oOK := o[key]
		nv, nOK := n[key]
		switch {
		case nOK && nv.ContainsUnknowns():
		case oOK != nOK:
		case oOK && !ov.DeepEquals(nv):
		default:
			continue
		}
		resp.Diffs = append(resp.Diffs, k)
	}
	if len(resp.Diffs) > 0 {
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	return resp, nil
}

func (p *awsProvider) Configure(ctx context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	var cfg resource.PropertyMap
	if req.GetArgs() != nil {
		m, err := unmarshal(req.GetArgs(), "Configure.args")
		if err != nil {
			return nil, err
		}
		cfg = revealMap(m)
	} else {
		// Older engines: "aws:config:region" = "..." (unknowns as the unknown sentinel).
		cfg = resource.PropertyMap{}
		for k, v := range req.GetVariables() {
			key := k[strings.LastIndex(k, ":")+1:]
			if v == "04da6b54-80e4-46f7-96ec-b56ff0331ba9" {
				cfg[resource.PropertyKey(key)] = unknown()
			} else {
				cfg[resource.PropertyKey(key)] = strProp(v)
			}
		}
	}
	c := view(normalizeConfig(cfg))
	if failures := checkConfig(c); len(failures) > 0 {
		msgs := make([]string, len(failures))
		for i, f := range failures {
			msgs[i] = f.Reason
		}
		return nil, status.Error(codes.InvalidArgument, strings.Join(msgs, "; "))
	}
	pc, err := readConfig(c)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.configured = true
	p.region = pc.region
	if pc.unknown {
		// Only a preview can run like this; anything needing the API says why it can't.
		p.clients = nil
		return configureResponse(), nil
	}
	ctx, done := p.op(ctx, 2*time.Minute)
	defer done()
	clients, err := newClients(ctx, pc)
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	p.clients = clients
	return configureResponse(), nil
}

func configureResponse() *pulumirpc.ConfigureResponse {
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, SupportsPreview: true}
}

// --- dispatch by type token -------------------------------------------------------------------

// A managed resource type.
type resourceType interface {
	spec() *resourceSpec
	// timeouts are the official provider's default create, update and delete timeouts.
	timeouts() (create, update, del time.Duration)
	// check fills in defaults and validates the inputs alone, as the official provider does.
	check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap) (resource.PropertyMap, []*pulumirpc.CheckFailure)
	// diff compares; c may be nil (then no API lookups are made).
	diff(ctx context.Context, c *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse
	create(ctx context.Context, c *clients, news resource.PropertyMap) (string, resource.PropertyMap, error)
	// preview is what a create in preview reports: the inputs plus unknown computed outputs.
	preview(region string, news resource.PropertyMap) resource.PropertyMap
	read(ctx context.Context, c *clients, id string, state, inputs resource.PropertyMap) (resource.PropertyMap, error)
	update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error)
	previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap
	delete(ctx context.Context, c *clients, id string, state resource.PropertyMap) error
}

var resourceTypes = map[string]resourceType{
	instanceToken:         instanceResource{},
	securityGroupToken:    securityGroupResource{},
	roleToken:             roleResource{},
	rolePolicyAttachToken: rolePolicyAttachmentResource{},
	instanceProfileToken:  instanceProfileResource{},
	queueToken:            queueResource{},
	queuePolicyToken:      queuePolicyResource{},
	eventRuleToken:        eventRuleResource{},
	eventTargetToken:      eventTargetResource{},
}

const coverage = "Instance, SecurityGroup, Role, RolePolicyAttachment, InstanceProfile, Queue, " +
	"QueuePolicy, EventRule and EventTarget (and the getAmi and getInstanceType invokes)"

func resourceTypeOf(urnOrType, typ string) (resourceType, error) {
	if typ == "" {
		typ = string(resource.URN(urnOrType).Type())
	}
	r, ok := resourceTypes[typ]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "%s is not implemented by %s: it has only %s",
			typ, standIn, coverage)
	}
	return r, nil
}

// changeRequest is what Check, Diff and Update ask about: a resource's old and new properties.
type changeRequest interface {
	GetUrn() string
	GetType() string
	GetOlds() *structpb.Struct
	GetNews() *structpb.Struct
}

func decodeChange(method string, req changeRequest) (r resourceType, olds, news resource.PropertyMap, err error) {
	if r, err = resourceTypeOf(req.GetUrn(), req.GetType()); err != nil {
		return nil, nil, nil, err
	}
	if olds, err = unmarshal(req.GetOlds(), method+".olds"); err != nil {
		return nil, nil, nil, err
	}
	if news, err = unmarshal(req.GetNews(), method+".news"); err != nil {
		return nil, nil, nil, err
	}
	return r, olds, news, nil
}

// stateRequest is what Create, Read and Delete ask about: a resource's properties.
type stateRequest interface {
	GetUrn() string
	GetType() string
	GetProperties() *structpb.Struct
}

func decodeState(method string, req stateRequest) (resourceType, resource.PropertyMap, error) {
	r, err := resourceTypeOf(req.GetUrn(), req.GetType())
	if err != nil {
		return nil, nil, err
	}
	props, err := unmarshal(req.GetProperties(), method+".properties")
	if err != nil {
		return nil, nil, err
	}
	return r, props, nil
}

// errNotFound is what read returns for a resource that no longer exists.
var errNotFound = errors.New("not found")

// timeoutOr is the request's timeout (customTimeouts) when it has one, else the default.
func timeoutOr(seconds float64, def time.Duration) time.Duration {
	if seconds > 0 {
		return time.Duration(seconds * float64(time.Second))
	}
	return def
}

func (p *awsProvider) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	r, olds, news, err := decodeChange("Check", req)
	if err != nil {
		return nil, err
	}
	failures := r.spec().checkTypes(view(revealMap(news)))
	checked := news
	if len(failures) == 0 {
		checked, failures = r.check(req, olds, news)
	}
	inputs, err := marshal(checked, "Check.inputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CheckResponse{Inputs: inputs, Failures: failures}, nil
}

func (p *awsProvider) Diff(ctx context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	r, olds, news, err := decodeChange("Diff", req)
	if err != nil {
		return nil, err
	}
	c, _ := p.state()
	ctx, done := p.op(ctx, time.Minute)
	defer done()
	return r.diff(ctx, c, view(revealMap(olds)), view(revealMap(news)), req.GetIgnoreChanges()), nil
}

func (p *awsProvider) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	r, news, err := decodeState("Create", req)
	if err != nil {
		return nil, err
	}
	if req.GetPreview() {
		_, region := p.state()
		props, err := marshal(r.preview(region, news), "Create.preview")
		if err != nil {
			return nil, err
		}
		return &pulumirpc.CreateResponse{Properties: props}, nil
	}
	create, _, _ := r.timeouts()
	ctx, done, c, err := p.start(ctx, timeoutOr(req.GetTimeout(), create))
	if err != nil {
		return nil, err
	}
	defer done()
	id, state, err := r.create(ctx, c, news)
	if err != nil {
		if id != "" {
			// Created but not finished: the engine records it, a later run can refresh/replace it.
			return nil, initFailed(id, state, err)
		}
		return nil, err
	}
	props, err := marshal(state, "Create.outputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CreateResponse{Id: id, Properties: props}, nil
}

func (p *awsProvider) Read(ctx context.Context, req *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	r, state, err := decodeState("Read", req)
	if err != nil {
		return nil, err
	}
	inputs, err := unmarshal(req.GetInputs(), "Read.inputs")
	if err != nil {
		return nil, err
	}
	ctx, done, c, err := p.start(ctx, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	defer done()
	newState, err := r.read(ctx, c, req.GetId(), state, inputs)
	if errors.Is(err, errNotFound) {
		var gone goneError
		if errors.As(err, &gone) && gone.notice() != "" && p.host != nil {
			_ = p.host.Log(ctx, diag.Warning, resource.URN(req.GetUrn()), gone.notice())
		}
		return &pulumirpc.ReadResponse{Id: ""}, nil
	}
	if err != nil {
		return nil, err
	}
	props, err := marshal(newState, "Read.outputs")
	if err != nil {
		return nil, err
	}
	newInputs, err := marshal(r.spec().inputsFromState(inputs, newState), "Read.inputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.ReadResponse{Id: req.GetId(), Properties: props, Inputs: newInputs}, nil
}

func (p *awsProvider) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	r, olds, news, err := decodeChange("Update", req)
	if err != nil {
		return nil, err
	}
	if req.GetPreview() {
		props, err := marshal(r.previewUpdate(olds, news), "Update.preview")
		if err != nil {
			return nil, err
		}
		return &pulumirpc.UpdateResponse{Properties: props}, nil
	}
	_, update, _ := r.timeouts()
	ctx, done, c, err := p.start(ctx, timeoutOr(req.GetTimeout(), update))
	if err != nil {
		return nil, err
	}
	defer done()
	state, err := r.update(ctx, c, req.GetId(), olds, news)
	if errors.Is(err, errNotFound) {
		return nil, status.Errorf(codes.NotFound,
			"%s %s no longer exists: run `pulumi refresh`, then `pulumi up` creates it again",
			req.GetType(), req.GetId())
	}
	if err != nil {
		if state != nil {
			return nil, initFailed(req.GetId(), state, err)
		}
		return nil, err
	}
	props, err := marshal(state, "Update.outputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.UpdateResponse{Properties: props}, nil
}

func (p *awsProvider) Delete(ctx context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	r, state, err := decodeState("Delete", req)
	if err != nil {
		return nil, err
	}
	_, _, del := r.timeouts()
	ctx, done, c, err := p.start(ctx, timeoutOr(req.GetTimeout(), del))
	if err != nil {
		return nil, err
	}
	defer done()
	if err := r.delete(ctx, c, req.GetId(), state); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// initFailed reports a resource that exists but did not reach the state asked for.
func initFailed(id string, state resource.PropertyMap, cause error) error {
	detail := &pulumirpc.ErrorResourceInitFailed{Id: id, Reasons: []string{cause.Error()}}
	if state != nil {
		if s, err := marshal(state, "initFailed.outputs"); err == nil {
			detail.Properties = s
		}
	}
	st, err := status.New(codes.Unknown, cause.Error()).WithDetails(detail)
	if err != nil {
		return cause
	}
	return st.Err()
}
