package main

// aws:ec2/securityGroup:SecurityGroup with inline ingress and egress rules, as
// terraform-provider-aws v6's aws_security_group behaves (internal/service/ec2/vpc_security_group.go):
//
//   - created with its tags; the allow-all egress rule AWS adds is revoked (IPv4, and IPv6 when
//     there is one), then the configured rules are authorized;
//   - name, description, vpcId and region changes replace; description defaults to
//     "Managed by Pulumi" (pulumi-aws's default, provider/resources.go);
//   - ingress and egress are sets: a change revokes the rules that went and authorizes the new
//     ones; protocols compare by number or name ("all" is "-1", "6" is "tcp"), CIDR lists in
//     any order; absent, they are left as they are (computed), an empty list removes them all;
//   - delete retries DependencyViolation and InvalidGroup.InUse (instances still using the
//     group) for its timeout, as the terraform provider does.
//   - unlike it, a rule change the group read back already shows counts as done (README,
//     difference 17).

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const securityGroupToken = "aws:ec2/securityGroup:SecurityGroup"

type securityGroupResource struct{}

var ruleFields = []prop{
	{name: "fromPort", kind: kInt, input: true, required: true, desc: "Start of the port range (ICMP type)."},
	{name: "toPort", kind: kInt, input: true, required: true, desc: "End of the port range (ICMP code)."},
	{name: "protocol", kind: kString, input: true, required: true, desc: "tcp, udp, icmp, icmpv6, a number, or -1 (all)."},
	{name: "cidrBlocks", kind: kStringList, input: true, desc: "IPv4 CIDR blocks."},
	{name: "ipv6CidrBlocks", kind: kStringList, input: true, desc: "IPv6 CIDR blocks."},
	{name: "prefixListIds", kind: kStringList, input: true, desc: "Not supported by this stand-in (only empty)."},
	{name: "securityGroups", kind: kStringSet, input: true, desc: "Not supported by this stand-in (only empty)."},
	{name: "self", kind: kBool, input: true, desc: "Whether the group itself is a source/destination."},
	{name: "description", kind: kString, input: true, desc: "Description of the rule."},
}

var securityGroupSpec = &resourceSpec{
	token: securityGroupToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, replace: true,
			desc: "Name of the security group; autonamed when absent."},
		{name: "description", kind: kString, input: true, output: true, replace: true,
			def: defaultOf(strProp("Managed by Pulumi")), desc: "Description; default \"Managed by Pulumi\"."},
		{name: "vpcId", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "VPC of the group; the default VPC when absent."},
		{name: "ingress", kind: kObjectList, input: true, output: true, computed: true, fields: ruleFields,
			equal: rulesPropEqual, desc: "Inbound rules (a set)."},
		{name: "egress", kind: kObjectList, input: true, output: true, computed: true, fields: ruleFields,
			equal: rulesPropEqual, desc: "Outbound rules (a set)."},
		{name: "revokeRulesOnDelete", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Revoke the group's rules before deleting it."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the group."},
		{name: "region", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Region of the group; the provider's (the only one this stand-in serves)."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the group."},
		{name: "ownerId", kind: kString, output: true, desc: "Owner (account) ID."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
	},
	unsupported: []string{"namePrefix"},
}

func (securityGroupResource) spec() *resourceSpec { return securityGroupSpec }

func (securityGroupResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return 10 * time.Minute, 10 * time.Minute, 15 * time.Minute
}

// --- rules ------------------------------------------------------------------------------------

type sgRule struct {
	fromPort, toPort int64
	protocol         string // as given (normalized when read from the API)
	cidrBlocks       []string
	ipv6CidrBlocks   []string
	self             bool
	description      string
}

var protocolNumbers = map[string]int{"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}

// protocolForValue is the terraform provider's canonical protocol: "-1" for all, the name of
// a numbered protocol it knows, else the value in lower case.
func protocolForValue(v string) string {
	p := strings.ToLower(v)
	if p == "-1" || p == "all" {
		return "-1"
	}
	if _, ok := protocolNumbers[p]; ok {
		return p
	}
	if n, err := strconv.Atoi(p); err == nil {
		for name, num := range protocolNumbers {
			if num == n {
				return name
			}
		}
	}
	return p
}

func rulesOf(v view, key string) []sgRule {
	var rules []sgRule
	for _, o := range v.objects(key) {
		from, _ := o.number("fromPort")
		to, _ := o.number("toPort")
		rules = append(rules, sgRule{
			fromPort:       from,
			toPort:         to,
			protocol:       o.str("protocol"),
			cidrBlocks:     o.strs("cidrBlocks"),
			ipv6CidrBlocks: o.strs("ipv6CidrBlocks"),
			self:           o.boolean("self"),
			description:    o.str("description"),
		})
	}
	return rules
}

func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// head is what the API groups a rule's sources by.
func (r sgRule) head() string {
	return fmt.Sprintf("%s|%d|%d|%s", protocolForValue(r.protocol), r.fromPort, r.toPort, r.description)
}

// key identifies a rule in a set (the terraform provider's SecurityGroupRuleHash).
func (r sgRule) key() string {
	return fmt.Sprintf("%s|%t|%s|%s", r.head(), r.self,
		strings.Join(sortedCopy(r.cidrBlocks), ","), strings.Join(sortedCopy(r.ipv6CidrBlocks), ","))
}

func ruleKeys(rules []sgRule) []string {
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = r.key()
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func rulesPropEqual(old, new resource.PropertyValue, _ view) bool {
	o := rulesOf(view{"r": old}, "r")
	n := rulesOf(view{"r": new}, "r")
	return slices.Equal(ruleKeys(o), ruleKeys(n))
}

func (r sgRule) prop() resource.PropertyValue {
	return resource.NewObjectProperty(resource.PropertyMap{
		"fromPort":       numProp(r.fromPort),
		"toPort":         numProp(r.toPort),
		"protocol":       strProp(protocolForValue(r.protocol)),
		"cidrBlocks":     strsProp(r.cidrBlocks),
		"ipv6CidrBlocks": strsProp(r.ipv6CidrBlocks),
		"prefixListIds":  strsProp(nil),
		"securityGroups": strsProp(nil),
		"self":           boolProp(r.self),
		"description":    strProp(r.description),
	})
}

func rulesProp(rules []sgRule) resource.PropertyValue {
	out := make([]resource.PropertyValue, len(rules))
	for i, r := range rules {
		out[i] = r.prop()
	}
	return resource.NewArrayProperty(out)
}

// permission is the API form of a rule.
func (r sgRule) permission(groupID string) (ec2types.IpPermission, error) {
	protocol := protocolForValue(r.protocol)
	if protocol == "-1" && (r.fromPort != 0 || r.toPort != 0) {
		return ec2types.IpPermission{}, fmt.Errorf(
			"from_port (%d) and to_port (%d) must both be 0 to use the 'ALL' \"-1\" protocol!", r.fromPort, r.toPort)
	}
	p := ec2types.IpPermission{
		IpProtocol: aws.String(protocol),
		FromPort:   aws.Int32(int32(r.fromPort)),
		ToPort:     aws.Int32(int32(r.toPort)),
	}
	desc := func() *string {
		if r.description == "" {
			return nil
		}
		return aws.String(r.description)
	}
	for _, c := range r.cidrBlocks {
		p.IpRanges = append(p.IpRanges, ec2types.IpRange{CidrIp: aws.String(c), Description: desc()})
	}
	for _, c := range r.ipv6CidrBlocks {
		p.Ipv6Ranges = append(p.Ipv6Ranges, ec2types.Ipv6Range{CidrIpv6: aws.String(c), Description: desc()})
	}
	if r.self {
		p.UserIdGroupPairs = []ec2types.UserIdGroupPair{{GroupId: aws.String(groupID), Description: desc()}}
	}
	return p, nil
}

// rulesFromAPI gathers the API's permissions into rules, one per protocol, ports and
// description (SecurityGroupIPPermGather).
func rulesFromAPI(groupID string, perms []ec2types.IpPermission) []sgRule {
	byHead := map[string]*sgRule{}
	var order []string
	get := func(p ec2types.IpPermission, desc *string) *sgRule {
		r := sgRule{
			fromPort:    int64(aws.ToInt32(p.FromPort)),
			toPort:      int64(aws.ToInt32(p.ToPort)),
			protocol:    protocolForValue(aws.ToString(p.IpProtocol)),
			description: aws.ToString(desc),
		}
		if found, ok := byHead[r.head()]; ok {
			return found
		}
		byHead[r.head()] = &r
		order = append(order, r.head())
		return &r
	}
	for _, p := range perms {
		for _, ip := range p.IpRanges {
			r := get(p, ip.Description)
			r.cidrBlocks = append(r.cidrBlocks, aws.ToString(ip.CidrIp))
		}
		for _, ip := range p.Ipv6Ranges {
			r := get(p, ip.Description)
			r.ipv6CidrBlocks = append(r.ipv6CidrBlocks, aws.ToString(ip.CidrIpv6))
		}
		for _, g := range p.UserIdGroupPairs {
			if aws.ToString(g.GroupId) == groupID {
				get(p, g.Description).self = true
			}
		}
	}
	rules := make([]sgRule, 0, len(order))
	for _, h := range order {
		rules = append(rules, *byHead[h])
	}
	return rules
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func containsAll(a, b []string) bool {
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

// covers reports whether r, as the API gathers rules, holds all of l's sources.
func (r sgRule) covers(l sgRule) bool {
	return r.head() == l.head() && containsAll(r.cidrBlocks, l.cidrBlocks) &&
		containsAll(r.ipv6CidrBlocks, l.ipv6CidrBlocks) && (!l.self || r.self)
}

// matchRules keeps the configured form of every rule the API still has (the order of its
// CIDR blocks, its protocol's spelling), as the terraform provider's MatchRules does; what
// is left of the API's rules follows as read.
func matchRules(local, remote []sgRule) []sgRule {
	left := slices.Clone(remote)
	var out []sgRule
	for _, l := range local {
		for i := range left {
			r := &left[i]
			if !r.covers(l) {
				continue
			}
			out = append(out, l)
			r.cidrBlocks = minus(r.cidrBlocks, l.cidrBlocks)
			r.ipv6CidrBlocks = minus(r.ipv6CidrBlocks, l.ipv6CidrBlocks)
			if l.self {
				r.self = false
			}
			break
		}
	}
	for _, r := range left {
		if len(r.cidrBlocks) > 0 || len(r.ipv6CidrBlocks) > 0 || r.self {
			out = append(out, r)
		}
	}
	return out
}

// --- the resource -----------------------------------------------------------------------------

func (securityGroupResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	var failures []*pulumirpc.CheckFailure
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	securityGroupSpec.applyDefaults(checked)
	n := view(revealMap(checked))
	if n.known("name") && len(n.str("name")) > 255 {
		failures = append(failures, failure("name", "expected length of name to be in the range (0 - 255)"))
	}
	if n.known("description") && len(n.str("description")) > 255 {
		failures = append(failures, failure("description", "expected length of description to be in the range (0 - 255)"))
	}
	for _, key := range []string{"ingress", "egress"} {
		for i, o := range n.objects(key) {
			for _, f := range []string{"prefixListIds", "securityGroups"} {
				if o.known(f) && len(o.strs(f)) > 0 {
					failures = append(failures, unsupportedFailure(fmt.Sprintf("%s[%d].%s", key, i, f)))
				}
			}
			for _, f := range []string{"fromPort", "toPort"} {
				if p, ok := o.number(f); ok && (p < -1 || p > 65535) {
					failures = append(failures, failure(fmt.Sprintf("%s[%d].%s", key, i, f),
						"expected %s to be in the range (-1 - 65535), got %d", f, p))
				}
			}
		}
	}
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	return checked, failures
}

func (securityGroupResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return securityGroupSpec.diff(olds, news, ignore)
}

func findSecurityGroup(ctx context.Context, c *clients, id string) (*ec2types.SecurityGroup, error) {
	out, err := c.ec2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
	if hasCode(err, "InvalidGroup.NotFound", "InvalidGroupId.Malformed", "InvalidGroupId.NotFound") {
		return nil, errNotFound
	}
	if err != nil {
		return nil, apiError(err)
	}
	for i := range out.SecurityGroups {
		if aws.ToString(out.SecurityGroups[i].GroupId) == id {
			return &out.SecurityGroups[i], nil
		}
	}
	return nil, errNotFound
}

// authorize and revoke change one direction's rules.
func authorize(ctx context.Context, c *clients, id string, egress bool, rules []sgRule) error {
	return changeRules(ctx, c, id, egress, rules, true)
}

func revoke(ctx context.Context, c *clients, id string, egress bool, rules []sgRule) error {
	return changeRules(ctx, c, id, egress, rules, false)
}

func changeRules(ctx context.Context, c *clients, id string, egress bool, rules []sgRule, add bool) error {
	if len(rules) == 0 {
		return nil
	}
	perms := make([]ec2types.IpPermission, 0, len(rules))
	for _, r := range rules {
		p, err := r.permission(id)
		if err != nil {
			return err
		}
		perms = append(perms, p)
	}
	var err error
	switch {
	case add && egress:
		_, err = c.ec2.AuthorizeSecurityGroupEgress(ctx, &ec2.AuthorizeSecurityGroupEgressInput{GroupId: aws.String(id), IpPermissions: perms})
	case add:
		_, err = c.ec2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: perms})
	case egress:
		_, err = c.ec2.RevokeSecurityGroupEgress(ctx, &ec2.RevokeSecurityGroupEgressInput{GroupId: aws.String(id), IpPermissions: perms})
	default:
		_, err = c.ec2.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(id), IpPermissions: perms})
	}
	if err != nil && hasCode(err, "InvalidPermission.Duplicate", "InvalidPermission.NotFound") &&
		rulesAlready(ctx, c, id, egress, rules, add) {
		err = nil
	}
	if err != nil {
		verb, direction := "revoking", "ingress"
		if add {
			verb = "authorizing"
		}
		if egress {
			direction = "egress"
		}
		return fmt.Errorf("%s Security Group (%s) %s rules: %w", verb, id, direction, apiError(err))
	}
	return nil
}

// rulesAlready reports whether the group already is as the refused change would leave it:
// every rule present (an authorize answered InvalidPermission.Duplicate) or every rule gone
// (a revoke answered InvalidPermission.NotFound). The SDK retries a request whose answer was
// lost, and its retry meets the first try's work; the group read back decides, as a rule
// the caller never added is still refused.
func rulesAlready(ctx context.Context, c *clients, id string, egress bool, rules []sgRule, add bool) bool {
	group, err := findSecurityGroup(ctx, c, id)
	if err != nil {
		return false
	}
	perms := group.IpPermissions
	if egress {
		perms = group.IpPermissionsEgress
	}
	remote := rulesFromAPI(id, perms)
	for _, r := range rules {
		if present(r, remote) != add {
			return false
		}
	}
	return true
}

// present reports whether the API's rules hold all of the rule's sources.
func present(r sgRule, remote []sgRule) bool {
	return slices.ContainsFunc(remote, func(a sgRule) bool { return a.covers(r) })
}

// updateRules revokes the rules that went and authorizes the new ones, for each direction
// the inputs give.
func updateRules(ctx context.Context, c *clients, id string, olds, news view) error {
	for _, dir := range []struct {
		key    string
		egress bool
	}{{"ingress", false}, {"egress", true}} {
		if !news.has(dir.key) {
			continue
		}
		oldRules, newRules := rulesOf(olds, dir.key), rulesOf(news, dir.key)
		oldKeys, newKeys := ruleKeys(oldRules), ruleKeys(newRules)
		var gone, added []sgRule
		for _, r := range oldRules {
			if !slices.Contains(newKeys, r.key()) {
				gone = append(gone, r)
			}
		}
		for _, r := range newRules {
			if !slices.Contains(oldKeys, r.key()) {
				added = append(added, r)
			}
		}
		if err := revoke(ctx, c, id, dir.egress, gone); err != nil {
			return err
		}
		if err := authorize(ctx, c, id, dir.egress, added); err != nil {
			return err
		}
	}
	return nil
}

func (securityGroupResource) create(ctx context.Context, c *clients, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	if err := requireRegion(c, n); err != nil {
		return "", nil, err
	}
	name := n.str("name")
	in := &ec2.CreateSecurityGroupInput{
		GroupName:         aws.String(name),
		Description:       aws.String(n.str("description")),
		TagSpecifications: tagSpec(ec2types.ResourceTypeSecurityGroup, n.strMap("tags")),
	}
	if v := n.str("vpcId"); v != "" {
		in.VpcId = aws.String(v)
	}
	out, err := c.ec2.CreateSecurityGroup(ctx, in)
	if err != nil {
		return "", nil, fmt.Errorf("creating Security Group (%s): %w", name, apiError(err))
	}
	id := aws.ToString(out.GroupId)
	var group *ec2types.SecurityGroup
	err = poll(ctx, func(ctx context.Context) (bool, error) {
		g, err := findSecurityGroup(ctx, c, id)
		if err == errNotFound {
			return false, nil
		}
		group = g
		return err == nil, err
	})
	if err != nil {
		return id, nil, fmt.Errorf("waiting for Security Group (%s) create: %w", id, err)
	}
	partial := func(err error) (string, resource.PropertyMap, error) {
		state, _ := securityGroupRead(ctx, c, id, n)
		return id, state, err
	}
	if aws.ToString(group.VpcId) != "" {
		// AWS gives every VPC group an allow-all egress rule; the terraform provider revokes it
		// so that only the configured rules exist.
		allIPv4 := sgRule{protocol: "-1", cidrBlocks: []string{"0.0.0.0/0"}}
		if err := revoke(ctx, c, id, true, []sgRule{allIPv4}); err != nil {
			return partial(fmt.Errorf("revoking default IPv4 egress rule for Security Group (%s): %w", id, err))
		}
		allIPv6 := sgRule{protocol: "-1", ipv6CidrBlocks: []string{"::/0"}}
		if err := revoke(ctx, c, id, true, []sgRule{allIPv6}); err != nil &&
			!hasCode(err, "InvalidPermission.NotFound") && !hasMessage(err, "InvalidParameterValue", "remote-ipv6-range") {
			return partial(fmt.Errorf("revoking default IPv6 egress rule for Security Group (%s): %w", id, err))
		}
	}
	if err := updateRules(ctx, c, id, view{}, n); err != nil {
		return partial(fmt.Errorf("updating Security Group (%s) rules: %w", id, err))
	}
	state, err := securityGroupRead(ctx, c, id, n)
	if err != nil {
		return id, nil, fmt.Errorf("reading Security Group (%s): %w", id, err)
	}
	return id, state, nil
}

// securityGroupRead reads the group's state; local are the inputs (or old state) whose rules'
// form is kept.
func securityGroupRead(ctx context.Context, c *clients, id string, local view) (resource.PropertyMap, error) {
	g, err := findSecurityGroup(ctx, c, id)
	if err != nil {
		return nil, err
	}
	tags := tagsFromEC2(g.Tags)
	owner := aws.ToString(g.OwnerId)
	return resource.PropertyMap{
		"name":                strProp(aws.ToString(g.GroupName)),
		"description":         strProp(aws.ToString(g.Description)),
		"vpcId":               strProp(aws.ToString(g.VpcId)),
		"ingress":             rulesProp(matchRules(rulesOf(local, "ingress"), rulesFromAPI(id, g.IpPermissions))),
		"egress":              rulesProp(matchRules(rulesOf(local, "egress"), rulesFromAPI(id, g.IpPermissionsEgress))),
		"revokeRulesOnDelete": boolProp(local.boolean("revokeRulesOnDelete")),
		"tags":                strMapProp(tags),
		"tagsAll":             strMapProp(tags),
		"region":              strProp(c.region),
		"ownerId":             strProp(owner),
		"arn":                 strProp(fmt.Sprintf("arn:%s:ec2:%s:%s:security-group/%s", c.partition, c.region, owner, id)),
	}, nil
}

func (securityGroupResource) preview(region string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	for _, k := range []resource.PropertyKey{"arn", "ownerId"} {
		out[k] = unknown()
	}
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	return withDefaults(out, resource.PropertyMap{
		"region":  strProp(region),
		"vpcId":   unknown(),
		"ingress": unknown(),
		"egress":  unknown(),
		"tags":    strMapProp(nil),
		"tagsAll": strMapProp(nil),
	})
}

func (securityGroupResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	return securityGroupRead(ctx, c, id, view(revealMap(state)))
}

func (securityGroupResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	if _, err := findSecurityGroup(ctx, c, id); err != nil {
		return nil, err
	}
	fail := func(err error) (resource.PropertyMap, error) {
		state, _ := securityGroupRead(ctx, c, id, n)
		return state, fmt.Errorf("updating Security Group (%s): %w", id, err)
	}
	if err := updateRules(ctx, c, id, o, n); err != nil {
		return fail(err)
	}
	if newTags := n.strMap("tags"); !equalValues(strMapProp(o.strMap("tags")), strMapProp(newTags)) {
		if err := updateEC2Tags(ctx, c, []string{id}, o.strMap("tags"), newTags); err != nil {
			return fail(err)
		}
	}
	return securityGroupRead(ctx, c, id, n)
}

func (securityGroupResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, "ingress", "egress", "tags", "revokeRulesOnDelete")
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (securityGroupResource) delete(ctx context.Context, c *clients, id string, state resource.PropertyMap) error {
	s := view(revealMap(state))
	if s.boolean("revokeRulesOnDelete") {
		if g, err := findSecurityGroup(ctx, c, id); err == nil {
			if err := revoke(ctx, c, id, false, rulesFromAPI(id, g.IpPermissions)); err != nil {
				return err
			}
			if err := revoke(ctx, c, id, true, rulesFromAPI(id, g.IpPermissionsEgress)); err != nil {
				return err
			}
		}
	}
	// Instances still using the group (being terminated, or the autoscaler's) keep it in use.
	_, err := retryWhile(ctx, 24*time.Hour, func(err error) bool {
		return hasCode(err, "DependencyViolation", "InvalidGroup.InUse")
	}, func(ctx context.Context) (*ec2.DeleteSecurityGroupOutput, error) {
		return c.ec2.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(id)})
	})
	if hasCode(err, "InvalidGroup.NotFound") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting Security Group (%s): %w", id, apiError(err))
	}
	return poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := findSecurityGroup(ctx, c, id)
		if err == errNotFound {
			return true, nil
		}
		return false, err
	})
}
