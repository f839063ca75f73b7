package main

// The provider's configuration, read as pulumi-aws reads it: aws:region (else AWS_REGION,
// AWS_DEFAULT_REGION), aws:accessKey / aws:secretKey / aws:token / aws:profile and the shared
// files, else the SDK's standard credential chain (AWS_ACCESS_KEY_ID..., AWS_PROFILE, the shared
// files), aws:endpoints (a list of maps; this stand-in calls EC2, IAM, STS, SQS and EventBridge
// only, so those keys are the ones it takes: ec2, iam, sts, sqs, and events or its aliases
// cloudwatchevents and eventbridge; AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> work too,
// as in the SDK), and the skip* switches. Every other pulumi-aws key is refused with a message
// naming this stand-in. Every service it calls must be at a loopback test endpoint (moto's
// server): AWS itself, or any other host, is refused before any request, in one line naming the
// official plugin (testEndpoints): in Configure for EC2, IAM and STS, which every stack calls;
// for SQS and EventBridge when a resource of theirs is first used (a stack without one need
// not name their endpoints).
//
// A default provider's configuration reaches the plugin as strings (lists and maps
// JSON-encoded, booleans "true"/"false"); an explicit provider's as typed values. Both are read.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// configKinds are the configuration keys this stand-in reads, with their types.
var configKinds = map[string]kind{
	"region":                    kString,
	"accessKey":                 kString,
	"secretKey":                 kString,
	"token":                     kString,
	"profile":                   kString,
	"sharedCredentialsFiles":    kStringList,
	"sharedConfigFiles":         kStringList,
	"endpoints":                 kObjectList,
	"skipCredentialsValidation": kBool,
	"skipMetadataApiCheck":      kBool,
	"skipRequestingAccountId":   kBool,
	"skipRegionValidation":      kBool,
}

// secretConfigKeys are the configuration keys pulumi-aws marks secret.
var secretConfigKeys = []string{"accessKey", "secretKey", "token"}

// unsupportedConfigKeys are pulumi-aws 7's other configuration keys.
var unsupportedConfigKeys = []string{
	"allowedAccountIds", "assumeRoleWithWebIdentity", "assumeRoles", "customCaBundle", "defaultTags",
	"ec2MetadataServiceEndpoint", "ec2MetadataServiceEndpointMode", "forbiddenAccountIds",
	"httpProxy", "httpsProxy", "ignoreTags", "insecure", "maxRetries", "noProxy", "retryMode",
	"s3UsEast1RegionalEndpoint", "s3UsePathStyle", "stsRegion", "tagPolicyCompliance",
	"tokenBucketRateLimiterCapacity", "useDualstackEndpoint", "useFipsEndpoint", "userAgents",
}

// engineConfigKeys are set by the engine on every provider, not by users.
var engineConfigKeys = []string{"version", "pluginDownloadURL"}

// endpointServices are the services this stand-in calls, so the endpoints it takes, each with
// the name of its AWS_ENDPOINT_URL_<SERVICE> variable (the SDK's service id).
var endpointServices = map[string]string{
	"ec2": "EC2", "iam": "IAM", "sts": "STS", "sqs": "SQS", "events": "EVENTBRIDGE",
}

// endpointAliases are pulumi-aws's other keys of a service's endpoint (terraform-provider-aws
// names/data: events is also known as cloudwatchevents and eventbridge).
var endpointAliases = map[string]string{"cloudwatchevents": "events", "eventbridge": "events"}

// laterServices are called only by some resources: their endpoints are checked when first used.
var laterServices = []string{"sqs", "events"}

var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)

// normalizeConfig turns string-encoded values into typed ones (see the file comment); a value
// that cannot be read is left as it is, for checkConfig to report.
func normalizeConfig(cfg resource.PropertyMap) resource.PropertyMap {
	out := resource.PropertyMap{}
	for k, v := range cfg {
		out[k] = v
		kd, ok := configKinds[string(k)]
		if !ok || !v.IsString() || v.ContainsUnknowns() {
			continue
		}
		s := v.StringValue()
		switch kd {
		case kBool:
			if b, err := strconv.ParseBool(s); err == nil {
				out[k] = boolProp(b)
			}
		case kStringList, kObjectList:
			var decoded any
			if err := json.Unmarshal([]byte(s), &decoded); err == nil {
				out[k] = resource.NewPropertyValue(decoded)
			}
		}
	}
	return out
}

// checkConfig validates a revealed, normalized configuration (unknown values are skipped).
func checkConfig(cfg view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	for _, k := range sortedKeys(cfg) {
		key := string(k)
		v, ok := cfg.get(key)
		if !ok || slices.Contains(engineConfigKeys, key) || strings.HasPrefix(key, "__") {
			continue
		}
		kd, known := configKinds[key]
		switch {
		case slices.Contains(unsupportedConfigKeys, key):
			failures = append(failures, failure(key,
				"aws:%s is not supported by %s; it reads only aws:region, the credentials "+
					"(accessKey, secretKey, token, profile, shared files), aws:endpoints (ec2, iam, sts, "+
					"sqs, events) "+
					"and the skip* switches", key, standIn))
			continue
		case !known:
			failures = append(failures, failure(key, "aws:%s is not a configuration key of the aws provider", key))
			continue
		case v.ContainsUnknowns():
			continue
		}
		if msg := checkKind(kd, v); msg != "" {
			failures = append(failures, failure(key, "aws:%s %s", key, msg))
		}
	}
	if r := cfg.str("region"); r != "" && !cfg.boolean("skipRegionValidation") && !regionPattern.MatchString(r) {
		failures = append(failures, failure("region",
			"aws:region %q is not a region name such as eu-central-1", r))
	}
	if _, err := endpointsOf(cfg); err != nil {
		failures = append(failures, failure("endpoints", "%v", err))
	}
	return failures
}

// endpointsOf reads aws:endpoints: a list of maps from a service's name to its URL.
func endpointsOf(cfg view) (map[string]string, error) {
	out := map[string]string{}
	for i, entry := range cfg.objects("endpoints") {
		for _, k := range sortedKeys(entry) {
			service := string(k)
			v, ok := entry.get(service)
			if !ok || v.ContainsUnknowns() {
				continue
			}
			name := service
			if alias, ok := endpointAliases[service]; ok {
				name = alias
			}
			if _, ok := endpointServices[name]; !ok {
				return nil, fmt.Errorf("aws:endpoints[%d].%s is not supported by %s: it calls only "+
					"EC2, IAM, STS, SQS and EventBridge, so it takes endpoints for ec2, iam, sts, sqs "+
					"and events (or cloudwatchevents, eventbridge)", i, service, standIn)
			}
			if !v.IsString() {
				return nil, fmt.Errorf("aws:endpoints[%d].%s must be a URL", i, service)
			}
			u, err := url.Parse(v.StringValue())
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("aws:endpoints[%d].%s %q is not an http(s) URL such as "+
					"http://127.0.0.1:5000", i, service, v.StringValue())
			}
			out[name] = v.StringValue()
		}
	}
	return out, nil
}

// providerConfig is what Configure needs, environment fallbacks applied.
type providerConfig struct {
	region                      string
	accessKey, secretKey, token string
	profile                     string
	sharedCredentialsFiles      []string
	sharedConfigFiles           []string
	endpoints                   map[string]string
	skipCredentialsValidation   bool
	skipRequestingAccountID     bool
	unknown                     bool // a value depends on another resource's output
}

// envBool reads a boolean environment variable; absent or unreadable is false.
func envBool(name string) bool {
	b, _ := strconv.ParseBool(os.Getenv(name))
	return b
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func readConfig(cfg view) (providerConfig, error) {
	pc := providerConfig{
		region:                 cfg.str("region"),
		accessKey:              cfg.str("accessKey"),
		secretKey:              cfg.str("secretKey"),
		token:                  cfg.str("token"),
		profile:                cfg.str("profile"),
		sharedCredentialsFiles: cfg.strs("sharedCredentialsFiles"),
		sharedConfigFiles:      cfg.strs("sharedConfigFiles"),
	}
	for _, k := range []string{"region", "accessKey", "secretKey", "token", "profile", "endpoints"} {
		if cfg.isUnknown(k) {
			pc.unknown = true
		}
	}
	if pc.region == "" {
		pc.region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	pc.skipCredentialsValidation = cfg.boolean("skipCredentialsValidation")
	if !cfg.has("skipCredentialsValidation") {
		pc.skipCredentialsValidation = envBool("AWS_SKIP_CREDENTIALS_VALIDATION")
	}
	pc.skipRequestingAccountID = cfg.boolean("skipRequestingAccountId")
	if !cfg.has("skipRequestingAccountId") {
		pc.skipRequestingAccountID = envBool("AWS_SKIP_REQUESTING_ACCOUNT_ID")
	}
	endpoints, err := endpointsOf(cfg)
	if err != nil {
		return pc, err
	}
	pc.endpoints = endpoints
	return pc, nil
}

// noRegion and noCredentials are pulumi-aws's own messages (provider/errors/*.txt), plus
// what this stand-in reads.
const (
	noRegion = "Missing region information\nMake sure you have set your AWS region, e.g. " +
		"`pulumi config set aws:region us-west-2` (or AWS_REGION)."
	noCredentials = "No valid credential sources found.\nSet aws:accessKey and aws:secretKey " +
		"(as secrets), aws:profile, or the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_PROFILE " +
		"environment variables; " + standIn + " never asks the instance metadata service."
)

// clients are the configured API clients and what the resources need to know of the account.
type clients struct {
	ec2       *ec2.Client
	iam       *iam.Client
	sqs       *sqs.Client         // nil when its endpoint was refused (refused says why)
	events    *eventbridge.Client // likewise
	refused   map[string]string   // a later service's refusal, by service
	region    string
	partition string
	accountID string
	types     *instanceTypes
}

// newClients builds the SDK clients of a configuration and, unless skipped, validates the
// credentials and learns the account ID with STS GetCallerIdentity, as the terraform provider
// does when it is configured.
func newClients(ctx context.Context, pc providerConfig) (*clients, error) {
	if pc.region == "" {
		return nil, errors.New(noRegion)
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithRegion(pc.region),
		// Never the instance metadata service: it is off this machine's loopback.
		awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled),
		awsconfig.WithAppID("pulumi-resource-aws-standin"),
	}
	if pc.accessKey != "" || pc.secretKey != "" {
		if pc.accessKey == "" || pc.secretKey == "" {
			return nil, errors.New("aws:accessKey and aws:secretKey go together: set both, or neither")
		}
		opts = append(opts, awsconfig.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(pc.accessKey, pc.secretKey, pc.token)))
	}
	if pc.profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(pc.profile))
	}
	if len(pc.sharedCredentialsFiles) > 0 {
		opts = append(opts, awsconfig.WithSharedCredentialsFiles(pc.sharedCredentialsFiles))
	}
	if len(pc.sharedConfigFiles) > 0 {
		opts = append(opts, awsconfig.WithSharedConfigFiles(pc.sharedConfigFiles))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the AWS configuration: %w", err)
	}
	// Before any request: every service it will call must be a test endpoint on loopback.
	endpoints, err := testEndpoints(pc, cfg.BaseEndpoint)
	if err != nil {
		return nil, err
	}
	c := &clients{
		ec2: ec2.NewFromConfig(cfg, func(o *ec2.Options) {
			o.BaseEndpoint = aws.String(endpoints["ec2"])
		}),
		iam: iam.NewFromConfig(cfg, func(o *iam.Options) {
			o.BaseEndpoint = aws.String(endpoints["iam"])
		}),
		refused:   map[string]string{},
		region:    pc.region,
		partition: partitionOf(pc.region),
	}
	for _, service := range laterServices {
		ep, err := testEndpoint(pc, cfg.BaseEndpoint, service)
		if err != nil {
			c.refused[service] = err.Error()
			continue
		}
		switch service {
		case "sqs":
			c.sqs = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(ep) })
		case "events":
			c.events = eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(ep) })
		}
	}
	c.types = newInstanceTypes(c.ec2)
	if pc.skipCredentialsValidation && pc.skipRequestingAccountID {
		return c, nil
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		if pc.skipCredentialsValidation {
			return c, nil
		}
		return nil, fmt.Errorf("%s\n(%v)", noCredentials, err)
	}
	stsClient := sts.NewFromConfig(cfg, func(o *sts.Options) {
		o.BaseEndpoint = aws.String(endpoints["sts"])
	})
	who, err := stsClient.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		if pc.skipCredentialsValidation {
			return c, nil
		}
		return nil, fmt.Errorf("validating provider credentials: retrieving caller identity from STS: %w "+
			"(set aws:skipCredentialsValidation and aws:skipRequestingAccountId to skip this call, "+
			"or point aws:endpoints' sts at the same server)", apiError(err))
	}
	if !pc.skipRequestingAccountID {
		c.accountID = aws.ToString(who.Account)
	}
	return c, nil
}

// calledServices are the services a configuration makes the stand-in call: EC2 and IAM by the
// resources, STS to validate the credentials unless both STS checks are skipped.
func calledServices(pc providerConfig) []string {
	if pc.skipCredentialsValidation && pc.skipRequestingAccountID {
		return []string{"ec2", "iam"}
	}
	return []string{"ec2", "iam", "sts"}
}

// testEndpoints resolves, for each service it will call, the endpoint the SDK would use
// (aws:endpoints, else AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL or the shared config's
// endpoint_url, which the SDK has put in base, else AWS itself) and refuses every one that is
// not on loopback (127.0.0.0/8, ::1, localhost): this stand-in exists for tests against moto's
// server, and never talks to a real cloud. The clients are then pinned to exactly these.
func testEndpoints(pc providerConfig, base *string) (map[string]string, error) {
	out := map[string]string{}
	for _, service := range calledServices(pc) {
		ep, err := testEndpoint(pc, base, service)
		if err != nil {
			return nil, err
		}
		out[service] = ep
	}
	return out, nil
}

// testEndpoint is testEndpoints' answer for one service.
func testEndpoint(pc providerConfig, base *string, service string) (string, error) {
	ep, from := pc.endpoints[service], "aws:endpoints"
	if variable := "AWS_ENDPOINT_URL_" + endpointServices[service]; ep == "" &&
		!envBool("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") {
		ep, from = os.Getenv(variable), variable
	}
	if ep == "" && base != nil && *base != "" {
		ep, from = *base, "AWS_ENDPOINT_URL or the shared config's endpoint_url"
	}
	if ep == "" {
		ep, from = awsEndpoint(service, pc.region), "AWS itself: no endpoint configured"
	}
	if !isLoopbackURL(ep) {
		return "", errors.New(notATestEndpoint(service, ep, from))
	}
	return ep, nil
}

// sqsClient is the SQS client, or why there is none (its endpoint is not a test endpoint).
func (c *clients) sqsClient() (*sqs.Client, error) {
	if c.sqs == nil {
		return nil, errors.New(c.refused["sqs"])
	}
	return c.sqs, nil
}

// eventsClient is the EventBridge client, or why there is none.
func (c *clients) eventsClient() (*eventbridge.Client, error) {
	if c.events == nil {
		return nil, errors.New(c.refused["events"])
	}
	return c.events, nil
}

// awsEndpoint is AWS's own endpoint of a service, for the refusal's message.
func awsEndpoint(service, region string) string {
	if service == "iam" {
		return "https://iam.amazonaws.com"
	}
	return fmt.Sprintf("https://%s.%s.amazonaws.com", service, region)
}

// isLoopbackURL: an http(s) URL whose host is a loopback address or localhost (not resolved:
// a name that only resolves to loopback today could point elsewhere tomorrow).
func isLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// notATestEndpoint is the one-line refusal: what was refused, and the official plugin to use.
func notATestEndpoint(service, endpoint, from string) string {
	pin, _, _ := strings.Cut(version, "+")
	return fmt.Sprintf("%s refuses the %s endpoint %s (%s): it exists only for tests against a "+
		"loopback endpoint (aws:endpoints at 127.0.0.1, ::1 or localhost, e.g. moto's server); for "+
		"AWS itself install the official aws plugin: pulumi plugin install resource aws %s",
		standIn, service, endpoint, from, pin)
}

// partitionOf is the ARN partition of a region.
func partitionOf(region string) string {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov"
	}
	return "aws"
}
