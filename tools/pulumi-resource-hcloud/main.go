// Command pulumi-resource-hcloud is the project's stand-in for the Pulumi hcloud resource
// provider plugin, built by scripts/install-pulumi.
//
// Why it exists: the official plugin (github.com/pulumi/pulumi-hcloud/provider, a bridge over
// github.com/hetznercloud/terraform-provider-hcloud) cannot be built here, because the Go
// module proxy this project's machines reach refuses both modules. The official Hetzner Cloud
// Go client (github.com/hetznercloud/hcloud-go/v2) and the Pulumi SDK are served, so this
// plugin speaks the provider gRPC protocol itself and drives the real Hetzner Cloud API (or
// the project's emulator) through hcloud-go.
//
// It follows terraform-provider-hcloud v1.68.0, which pulumi-hcloud 1.43.3 (the Python SDK this
// project pins) wraps, with the same type tokens and wire property names, for exactly the
// subset of the provider this project's program (machines/components.py) uses:
//
//	hcloud:index/server:Server
//	hcloud:index/sshKey:SshKey
//	hcloud:index/firewall:Firewall
//	hcloud:index/getServerType:getServerType   (invoke)
//	hcloud:index/getFirewall:getFirewall       (invoke)
//
// Its version is the SDK's with the build metadata "+orca.standin" (1.43.3+orca.standin): the
// engine's version match ignores build metadata, so the SDK's request for hcloud 1.43.3 finds
// it, while its plugin directory, `pulumi plugin ls` and --version never pass for the
// official binary (see README.md).
//
// Anything else (other resources and invokes, and inputs such as networks, publicNets or
// placementGroupId) is refused with a message naming this stand-in, never ignored.
//
// Secrets: the API token and a server's userData never appear in plain text in outputs or in
// this plugin's own messages; userData is kept in the state as the terraform provider keeps
// it (base64 of its SHA-1), as a secret.
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
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
// pulumi-hcloud version pinned in requirements.txt plus standInBuild, with
// -ldflags "-X main.version=...".
var version = "1.43.3" + standInBuild

// standInBuild is the semver build metadata that marks this binary as the stand-in.
const standInBuild = "+orca.standin"

const (
	defaultPollInterval = 500 * time.Millisecond
	tokenLength         = 64
)

func main() {
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(version)
		return
	}
	err := provider.Main("hcloud", func(host *provider.HostClient) (pulumirpc.ResourceProviderServer, error) {
		return newProvider(host), nil
	})
	if err != nil {
		cmdutil.ExitError(err.Error())
	}
}

type hcloudProvider struct {
	pulumirpc.UnimplementedResourceProviderServer

	host *provider.HostClient

	// cancelled by Cancel: every operation in flight stops waiting.
	stop     context.Context
	stopFunc context.CancelFunc

	// warned receives the warnings when there is no engine to log them to (tests).
	warned func(urn, msg string)

	mu         sync.Mutex
	client     *hcloud.Client // nil until configured with a known token
	configured bool
	cat        *catalogue
}

func newProvider(host *provider.HostClient) *hcloudProvider {
	stop, stopFunc := context.WithCancel(context.Background())
	return &hcloudProvider{host: host, stop: stop, stopFunc: stopFunc}
}

// op derives an operation's context: cancelled by the request, by Cancel, or at the timeout.
func (p *hcloudProvider) op(ctx context.Context, timeoutSeconds float64) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(p.stop, cancel)
	if timeoutSeconds > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, time.Duration(timeoutSeconds*float64(time.Second)))
		inner := cancel
		cancel = func() { cancelTimeout(); inner() }
	}
	return ctx, func() { unhook(); cancel() }
}

// api returns the configured client, or an error saying why there is none.
func (p *hcloudProvider) api() (*hcloud.Client, *catalogue, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.client == nil {
		if !p.configured {
			return nil, nil, status.Error(codes.FailedPrecondition, "hcloud: the provider is not configured yet")
		}
		return nil, nil, status.Error(codes.FailedPrecondition,
			"hcloud: the API token is not known yet (it depends on another resource's output)")
	}
	return p.client, p.cat, nil
}

// start begins an operation that needs the API: its context (see op; the caller calls done
// when it ends), the configured client and catalogue, or api's error saying why there is none.
func (p *hcloudProvider) start(ctx context.Context, timeoutSeconds float64,
) (context.Context, context.CancelFunc, *hcloud.Client, *catalogue, error) {
	c, cat, err := p.api()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, done := p.op(ctx, timeoutSeconds)
	return ctx, done, c, cat, nil
}

// warnFunc reports a warning about the resource an operation works on.
type warnFunc func(msg string)

// warner sends an operation's warnings to the engine's log, on the resource's URN (urn may be
// empty: an invoke's), as the official provider reports its diagnostics of severity warning.
func (p *hcloudProvider) warner(ctx context.Context, urn string) warnFunc {
	return func(msg string) {
		switch {
		case p.host != nil:
			_ = p.host.Log(ctx, diag.Warning, resource.URN(urn), msg)
		case p.warned != nil:
			p.warned(urn, msg)
		}
	}
}

func (p *hcloudProvider) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetSchema answers the same document for every schema version asked for.
func (p *hcloudProvider) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	s, err := schemaJSON()
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetSchemaResponse{Schema: s}, nil
}

func (p *hcloudProvider) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	p.stopFunc()
	return &emptypb.Empty{}, nil
}

func (p *hcloudProvider) Attach(context.Context, *pulumirpc.PluginAttach) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// --- provider configuration -------------------------------------------------------------------

// providerConfig is the provider's configuration: hcloud:token, hcloud:endpoint,
// hcloud:pollInterval, hcloud:pollFunction (hcloud:endpointHetzner is accepted and unused:
// it only serves resources this stand-in does not have).
type providerConfig struct {
	token         string
	tokenUnknown  bool
	endpoint      string
	pollInterval  time.Duration
	pollFunction  string
	unknownConfig bool
}

var configKeys = []string{"token", "endpoint", "endpointHetzner", "pollInterval", "pollFunction"}

// checkConfigValues validates configuration values (revealed; unknown ones are skipped).
func checkConfigValues(cfg view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	for _, k := range configKeys {
		v, ok := cfg.get(k)
		if !ok || v.ContainsUnknowns() {
			continue
		}
		if !v.IsString() {
			failures = append(failures, failure(k, "hcloud:%s must be a string", k))
		}
	}
	if s := cfg.str("endpoint"); s != "" && !cfg.isUnknown("endpoint") {
		if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			failures = append(failures, failure("endpoint",
				"hcloud:endpoint %q is not an http(s) URL such as http://127.0.0.1:4080/v1", s))
		}
	}
	if s := cfg.str("pollInterval"); s != "" && !cfg.isUnknown("pollInterval") {
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			failures = append(failures, failure("pollInterval",
				"hcloud:pollInterval %q is not a positive duration such as 500ms or 2s", s))
		}
	}
	if s := cfg.str("pollFunction"); s != "" && !cfg.isUnknown("pollFunction") &&
		s != "constant" && s != "exponential" {
		failures = append(failures, failure("pollFunction",
			"hcloud:pollFunction %q must be \"constant\" or \"exponential\"", s))
	}
	if t := cfg.str("token"); t != "" && !cfg.isUnknown("token") && len(t) != tokenLength {
		// The same rule as the terraform provider's; the message never shows the token.
		failures = append(failures, failure("token",
			"hcloud:token is invalid: it must be exactly %d characters long (it has %d)", tokenLength, len(t)))
	}
	return failures
}

func (p *hcloudProvider) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	news, err := unmarshal(req.GetNews(), "CheckConfig.news")
	if err != nil {
		return nil, err
	}
	failures := checkConfigValues(view(revealMap(news)))
	if t, ok := news["token"]; ok {
		news["token"] = secret(t)
	}
	inputs, err := marshal(news, "CheckConfig.inputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CheckResponse{Inputs: inputs, Failures: failures}, nil
}

func (p *hcloudProvider) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
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
	o, n := view(revealMap(olds)), view(revealMap(news))
	resp := &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE}
	for _, k := range configKeys {
		if n.isUnknown(k) || o.str(k) != n.str(k) {
			resp.Diffs = append(resp.Diffs, k)
		}
	}
	if len(resp.Diffs) > 0 {
		resp.Changes = pulumirpc.DiffResponse_DIFF_SOME
	}
	return resp, nil
}

func (p *hcloudProvider) Configure(_ context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	var cfg resource.PropertyMap
	if req.GetArgs() != nil {
		m, err := unmarshal(req.GetArgs(), "Configure.args")
		if err != nil {
			return nil, err
		}
		cfg = revealMap(m)
	} else {
		// Older engines: "hcloud:config:token" = "..." (unknowns as the unknown sentinel).
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
	c := view(cfg)
	if failures := checkConfigValues(c); len(failures) > 0 {
		msgs := make([]string, len(failures))
		for i, f := range failures {
			msgs[i] = f.Reason
		}
		return nil, status.Error(codes.InvalidArgument, strings.Join(msgs, "; "))
	}

	pc := providerConfig{
		token:        c.str("token"),
		tokenUnknown: c.isUnknown("token"),
		endpoint:     c.str("endpoint"),
		pollInterval: defaultPollInterval,
		pollFunction: c.str("pollFunction"),
	}
	if pc.token == "" && !pc.tokenUnknown {
		pc.token = os.Getenv("HCLOUD_TOKEN")
	}
	if pc.endpoint == "" && !c.isUnknown("endpoint") {
		pc.endpoint = os.Getenv("HCLOUD_ENDPOINT")
	}
	// Only hcloud:pollInterval sets it: the official provider reads no environment variable
	// for it (checkConfigValues has validated it).
	if interval := c.str("pollInterval"); interval != "" {
		pc.pollInterval, _ = time.ParseDuration(interval)
	}
	pc.unknownConfig = pc.tokenUnknown || c.isUnknown("endpoint")

	p.mu.Lock()
	defer p.mu.Unlock()
	p.configured = true
	if pc.unknownConfig {
		// Only a preview can run like this; anything needing the API says why it can't.
		p.client = nil
		return configureResponse(), nil
	}
	if pc.token == "" {
		return nil, status.Error(codes.FailedPrecondition,
			"hcloud: no API token: set the HCLOUD_TOKEN environment variable, or "+
				"`pulumi config set --secret hcloud:token <token>`")
	}
	if len(pc.token) != tokenLength {
		return nil, status.Errorf(codes.InvalidArgument,
			"hcloud: the API token is invalid: it must be exactly %d characters long (it has %d)",
			tokenLength, len(pc.token))
	}
	// As the official provider polls actions for servers and firewalls: exponential from the
	// interval (hcloud-go caps it at a minute), or constant.
	backoff := hcloud.ExponentialBackoff(2, pc.pollInterval)
	if pc.pollFunction == "constant" {
		backoff = hcloud.ConstantBackoff(pc.pollInterval)
	}
	opts := []hcloud.ClientOption{
		hcloud.WithToken(pc.token),
		hcloud.WithApplication("pulumi-resource-hcloud", version),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: backoff}),
	}
	if pc.endpoint != "" {
		opts = append(opts, hcloud.WithEndpoint(pc.endpoint))
	}
	p.client = hcloud.NewClient(opts...)
	p.cat = newCatalogue(p.client)
	return configureResponse(), nil
}

func configureResponse() *pulumirpc.ConfigureResponse {
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, SupportsPreview: true}
}

// --- dispatch by type token -------------------------------------------------------------------

// A managed resource type.
type resourceType interface {
	spec() *resourceSpec
	// check fills in defaults and validates the inputs alone: like the official provider's
	// plan, it never calls the API, so a preview fails only where a real one fails.
	check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap) (resource.PropertyMap, []*pulumirpc.CheckFailure)
	create(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc, news resource.PropertyMap) (string, resource.PropertyMap, error)
	// preview is what a create in preview reports: the inputs plus unknown computed outputs.
	preview(news resource.PropertyMap) resource.PropertyMap
	read(ctx context.Context, c *hcloud.Client, cat *catalogue, id string, state, inputs resource.PropertyMap) (resource.PropertyMap, error)
	update(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error)
	previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap
	delete(ctx context.Context, c *hcloud.Client, id string, state resource.PropertyMap) error
}

var resourceTypes = map[string]resourceType{
	serverToken:   serverResource{},
	sshKeyToken:   sshKeyResource{},
	firewallToken: firewallResource{},
}

func resourceTypeOf(urnOrType, typ string) (resourceType, error) {
	if typ == "" {
		typ = string(resource.URN(urnOrType).Type())
	}
	r, ok := resourceTypes[typ]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented,
			"%s is not implemented by %s: it has only %s", typ, standIn,
			"Server, SshKey and Firewall (and the getServerType and getFirewall invokes)")
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

// decodeChange reads a changeRequest: the resource's type, its olds and its news (labelled
// <method>.olds and <method>.news).
func decodeChange(method string, req changeRequest,
) (r resourceType, olds, news resource.PropertyMap, err error) {
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

// decodeState reads a stateRequest: the resource's type and its properties (labelled
// <method>.properties).
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
var errNotFound = fmt.Errorf("not found")

func (p *hcloudProvider) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	r, olds, news, err := decodeChange("Check", req)
	if err != nil {
		return nil, err
	}
	failures := r.spec().checkTypes(view(revealMap(news)))
	checked := news
	if len(failures) == 0 {
		checked, failures = r.check(req, olds, news)
	}
	// Secret properties are secrets in the checked inputs too, hence in the state.
	for _, pr := range r.spec().props {
		if v, ok := checked[resource.PropertyKey(pr.name)]; ok && pr.secret {
			checked[resource.PropertyKey(pr.name)] = secret(v)
		}
	}
	inputs, err := marshal(checked, "Check.inputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CheckResponse{Inputs: inputs, Failures: failures}, nil
}

func (p *hcloudProvider) Diff(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	r, olds, news, err := decodeChange("Diff", req)
	if err != nil {
		return nil, err
	}
	return r.spec().diff(view(revealMap(olds)), view(revealMap(news)), req.GetIgnoreChanges()), nil
}

func (p *hcloudProvider) Create(ctx context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	r, news, err := decodeState("Create", req)
	if err != nil {
		return nil, err
	}
	if req.GetPreview() {
		props, err := marshal(r.preview(news), "Create.preview")
		if err != nil {
			return nil, err
		}
		return &pulumirpc.CreateResponse{Properties: props}, nil
	}
	ctx, done, c, cat, err := p.start(ctx, req.GetTimeout())
	if err != nil {
		return nil, err
	}
	defer done()
	id, state, err := r.create(ctx, c, cat, p.warner(ctx, req.GetUrn()), news)
	if err != nil {
		if id != "" {
			// Created but not finished: the engine records it, a later run can refresh/replace it.
			return nil, initFailed(id, state, nil, err)
		}
		return nil, err
	}
	props, err := marshal(state, "Create.outputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.CreateResponse{Id: id, Properties: props}, nil
}

func (p *hcloudProvider) Read(ctx context.Context, req *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	r, state, err := decodeState("Read", req)
	if err != nil {
		return nil, err
	}
	inputs, err := unmarshal(req.GetInputs(), "Read.inputs")
	if err != nil {
		return nil, err
	}
	ctx, done, c, cat, err := p.start(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer done()
	newState, err := r.read(ctx, c, cat, req.GetId(), state, inputs)
	if err == errNotFound {
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

func (p *hcloudProvider) Update(ctx context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
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
	ctx, done, c, cat, err := p.start(ctx, req.GetTimeout())
	if err != nil {
		return nil, err
	}
	defer done()
	state, err := r.update(ctx, c, cat, p.warner(ctx, req.GetUrn()), req.GetId(), olds, news)
	if err == errNotFound {
		return nil, status.Errorf(codes.NotFound,
			"%s %s no longer exists: run `pulumi refresh`, then `pulumi up` creates it again",
			req.GetType(), req.GetId())
	}
	if err != nil {
		if state != nil {
			return nil, initFailed(req.GetId(), state, nil, err)
		}
		return nil, err
	}
	props, err := marshal(state, "Update.outputs")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.UpdateResponse{Properties: props}, nil
}

func (p *hcloudProvider) Delete(ctx context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	r, state, err := decodeState("Delete", req)
	if err != nil {
		return nil, err
	}
	ctx, done, c, _, err := p.start(ctx, req.GetTimeout())
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
func initFailed(id string, state, inputs resource.PropertyMap, cause error) error {
	detail := &pulumirpc.ErrorResourceInitFailed{Id: id, Reasons: []string{cause.Error()}}
	if state != nil {
		if s, err := marshal(state, "initFailed.outputs"); err == nil {
			detail.Properties = s
		}
	}
	if inputs != nil {
		if s, err := marshal(inputs, "initFailed.inputs"); err == nil {
			detail.Inputs = s
		}
	}
	st, err := status.New(codes.Unknown, cause.Error()).WithDetails(detail)
	if err != nil {
		return cause
	}
	return st.Err()
}
