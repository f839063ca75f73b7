package main

// hcloud:index/firewall:Firewall, as terraform-provider-hcloud's hcloud_firewall for name,
// labels and rules (a set: order does not matter): all three update in place (rules with the
// set_rules action). applyTos is not supported: this project applies firewalls through the
// servers' firewallIds. Deleting retries while the firewall is still in use (servers being
// deleted), as the terraform provider does.

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const firewallToken = "hcloud:index/firewall:Firewall"

type firewallResource struct{}

var firewallSpec = &resourceSpec{
	token: firewallToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, desc: "Name of the firewall; autonamed when absent."},
		{name: "labels", kind: kStringMap, input: true, output: true, desc: "User-defined labels."},
		{name: "rules", kind: kRuleList, input: true, output: true, equal: rulesPropEqual,
			desc: "The firewall's rules (a set)."},
	},
	unsupported: []string{"applyTos"},
}

func (firewallResource) spec() *resourceSpec { return firewallSpec }

type rule struct {
	direction, protocol, port, description string
	sourceIPs, destinationIPs              []string
}

func rulesOf(v view, key string) []rule {
	var rules []rule
	for _, o := range v.objects(key) {
		rules = append(rules, rule{
			direction:      o.str("direction"),
			protocol:       o.str("protocol"),
			port:           o.str("port"),
			description:    o.str("description"),
			sourceIPs:      o.strs("sourceIps"),
			destinationIPs: o.strs("destinationIps"),
		})
	}
	return rules
}

func canonicalCIDRs(ips []string) string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		if _, n, err := net.ParseCIDR(ip); err == nil {
			out[i] = n.String()
		} else {
			out[i] = ip
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// key identifies a rule up to the order and spelling of its addresses.
func (r rule) key() string {
	return strings.Join([]string{r.direction, r.protocol, r.port, canonicalCIDRs(r.sourceIPs),
		canonicalCIDRs(r.destinationIPs), r.description}, "|")
}

func rulesEqual(a, b []rule) bool {
	return slices.Equal(sortedRuleKeys(a), sortedRuleKeys(b))
}

func sortedRuleKeys(rules []rule) []string {
	keys := make([]string, len(rules))
	for i, r := range rules {
		keys[i] = r.key()
	}
	slices.Sort(keys)
	return keys
}

func rulesPropEqual(old, new resource.PropertyValue, _ view) bool {
	return rulesEqual(rulesOf(view{"r": old}, "r"), rulesOf(view{"r": new}, "r"))
}

func (r rule) prop() resource.PropertyValue {
	m := resource.PropertyMap{
		"direction": strProp(r.direction),
		"protocol":  strProp(r.protocol),
	}
	if r.port != "" {
		m["port"] = strProp(r.port)
	}
	if r.description != "" {
		m["description"] = strProp(r.description)
	}
	if len(r.sourceIPs) > 0 {
		m["sourceIps"] = strsProp(r.sourceIPs)
	}
	if len(r.destinationIPs) > 0 {
		m["destinationIps"] = strsProp(r.destinationIPs)
	}
	return resource.NewObjectProperty(m)
}

func rulesProp(rules []rule) resource.PropertyValue {
	out := make([]resource.PropertyValue, len(rules))
	for i, r := range rules {
		out[i] = r.prop()
	}
	return resource.NewArrayProperty(out)
}

func parseCIDRs(ips []string) ([]net.IPNet, error) {
	out := make([]net.IPNet, 0, len(ips))
	for _, ip := range ips {
		_, n, err := net.ParseCIDR(ip)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP network in CIDR notation (e.g. 203.0.113.0/24, ::/0)", ip)
		}
		out = append(out, *n)
	}
	return out, nil
}

func (r rule) api() (hcloud.FirewallRule, error) {
	src, err := parseCIDRs(r.sourceIPs)
	if err != nil {
		return hcloud.FirewallRule{}, err
	}
	dst, err := parseCIDRs(r.destinationIPs)
	if err != nil {
		return hcloud.FirewallRule{}, err
	}
	out := hcloud.FirewallRule{
		Direction:      hcloud.FirewallRuleDirection(r.direction),
		Protocol:       hcloud.FirewallRuleProtocol(r.protocol),
		SourceIPs:      src,
		DestinationIPs: dst,
	}
	if r.port != "" {
		out.Port = hcloud.Ptr(r.port)
	}
	if r.description != "" {
		out.Description = hcloud.Ptr(r.description)
	}
	return out, nil
}

func ruleFromAPI(r hcloud.FirewallRule) rule {
	out := rule{direction: string(r.Direction), protocol: string(r.Protocol)}
	if r.Port != nil {
		out.port = *r.Port
	}
	if r.Description != nil {
		out.description = *r.Description
	}
	for _, n := range r.SourceIPs {
		out.sourceIPs = append(out.sourceIPs, n.String())
	}
	for _, n := range r.DestinationIPs {
		out.destinationIPs = append(out.destinationIPs, n.String())
	}
	return out
}

func rulesFromAPI(rules []hcloud.FirewallRule) []rule {
	out := make([]rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, ruleFromAPI(r))
	}
	return out
}

func apiRules(rules []rule) ([]hcloud.FirewallRule, error) {
	out := make([]hcloud.FirewallRule, 0, len(rules))
	for i, r := range rules {
		a, err := r.api()
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		out = append(out, a)
	}
	return out, nil
}

var portPattern = regexp.MustCompile(`^(any|[0-9]{1,5}(-[0-9]{1,5})?)$`)

var ruleKeys = []string{"direction", "protocol", "port", "sourceIps", "destinationIps", "description"}

func checkRules(rules resource.PropertyValue) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	bad := func(i int, format string, args ...any) {
		failures = append(failures, failure(fmt.Sprintf("rules[%d]", i), format, args...))
	}
	for i, e := range rules.ArrayValue() {
		if e.ContainsUnknowns() || !e.IsObject() {
			continue
		}
		o := view(e.ObjectValue())
		for _, k := range sortedKeys(o) {
			if !slices.Contains(ruleKeys, string(k)) && o.has(string(k)) {
				bad(i, "unknown property %q (a rule has %s)", k, quoteAll(ruleKeys))
			}
		}
		for _, k := range []string{"direction", "protocol", "port", "description"} {
			if v, ok := o.get(k); ok && !v.ContainsUnknowns() && !v.IsString() {
				bad(i, "%s must be a string", k)
			}
		}
		for _, k := range []string{"sourceIps", "destinationIps"} {
			if v, ok := o.get(k); ok && !v.ContainsUnknowns() {
				if msg := checkKind(kStringList, v); msg != "" {
					bad(i, "%s %s", k, msg)
				} else if _, err := parseCIDRs(o.strs(k)); err != nil {
					bad(i, "%s: %v", k, err)
				}
			}
		}
		dir, proto := o.str("direction"), o.str("protocol")
		if !o.isUnknown("direction") && dir != "in" && dir != "out" {
			bad(i, "direction must be \"in\" or \"out\", not %q", dir)
		}
		if !o.isUnknown("protocol") {
			switch proto {
			case "tcp", "udp":
				if !o.isUnknown("port") && !portPattern.MatchString(o.str("port")) {
					bad(i, "a %s rule needs a port: a number, a range such as 8000-8100, or \"any\"", proto)
				}
			case "icmp", "esp", "gre":
				if o.has("port") && !o.isUnknown("port") && o.str("port") != "" {
					bad(i, "a %s rule has no port: remove it", proto)
				}
			default:
				bad(i, "protocol must be one of tcp, udp, icmp, esp, gre; not %q", proto)
			}
		}
		if dir == "in" && !o.isUnknown("sourceIps") && len(o.strs("sourceIps")) == 0 {
			bad(i, "an inbound rule needs sourceIps")
		}
		if dir == "out" && !o.isUnknown("destinationIps") && len(o.strs("destinationIps")) == 0 {
			bad(i, "an outbound rule needs destinationIps")
		}
	}
	return failures
}

func (firewallResource) check(_ context.Context, _ *hcloud.Client, _ *catalogue, req *pulumirpc.CheckRequest,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, _, failures := checkInputs(req, olds, news, func(n view) []*pulumirpc.CheckFailure {
		if v, ok := n.get("rules"); ok && !v.IsComputed() {
			return checkRules(v)
		}
		return nil
	})
	return checked, failures
}

// firewallState: the API's firewall, with the rules as the inputs wrote them while they are
// the same set.
func firewallState(f *hcloud.Firewall, given []rule) resource.PropertyMap {
	rules := rulesFromAPI(f.Rules)
	if rulesEqual(rules, given) {
		rules = given
	}
	return resource.PropertyMap{
		"name":   strProp(f.Name),
		"labels": strMapProp(f.Labels),
		"rules":  rulesProp(rules),
	}
}

func (firewallResource) create(ctx context.Context, c *hcloud.Client, _ *catalogue, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	what := fmt.Sprintf("creating firewall %q", n.str("name"))
	given := rulesOf(n, "rules")
	rules, err := apiRules(given)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, err)
	}
	res, _, err := c.Firewall.Create(ctx, hcloud.FirewallCreateOpts{
		Name:   n.str("name"),
		Labels: n.strMap("labels"),
		Rules:  rules,
	})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, apiError(err))
	}
	id := formatID(res.Firewall.ID)
	if err := waitFor(ctx, c, what, res.Actions...); err != nil {
		return id, firewallState(res.Firewall, given), err
	}
	return id, firewallState(latest(ctx, c, res.Firewall.ID, res.Firewall), given), nil
}

// latest is firewall id as the API has it now; f, as last seen, when it can't be read.
func latest(ctx context.Context, c *hcloud.Client, id int64, f *hcloud.Firewall) *hcloud.Firewall {
	if now, _, err := c.Firewall.GetByID(ctx, id); err == nil && now != nil {
		return now
	}
	return f
}

func (firewallResource) preview(news resource.PropertyMap) resource.PropertyMap {
	return withDefaults(copyMap(news), firewallCleared())
}

// firewallCleared: what an absent labels or rules input stands for in the state.
func firewallCleared() resource.PropertyMap {
	return resource.PropertyMap{"labels": strMapProp(nil), "rules": rulesProp(nil)}
}

func (firewallResource) read(ctx context.Context, c *hcloud.Client, _ *catalogue, id string,
	state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	f, err := fetch(ctx, "firewall", id, c.Firewall.GetByID)
	if err != nil {
		return nil, err
	}
	return firewallState(f, rulesOf(view(revealMap(state)), "rules")), nil
}

func (firewallResource) update(ctx context.Context, c *hcloud.Client, _ *catalogue, id string,
	_, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	fid, err := parseID("firewall", id)
	if err != nil {
		return nil, err
	}
	n := view(revealMap(news))
	what := fmt.Sprintf("updating firewall %q (%s)", n.str("name"), id)
	f, err := getByID(ctx, fid, c.Firewall.GetByID, what)
	if err != nil {
		return nil, err
	}
	labels := n.strMap("labels")
	if n.str("name") != f.Name || !labelsEqual(labels, f.Labels) {
		opts := hcloud.FirewallUpdateOpts{Labels: labels}
		if n.str("name") != f.Name {
			opts.Name = n.str("name")
		}
		if f, _, err = c.Firewall.Update(ctx, f, opts); err != nil {
			return nil, fmt.Errorf("%s: %w", what, apiError(err))
		}
	}
	given := rulesOf(n, "rules")
	if !rulesEqual(rulesFromAPI(f.Rules), given) {
		rules, err := apiRules(given)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		actions, _, err := c.Firewall.SetRules(ctx, f, hcloud.FirewallSetRulesOpts{Rules: rules})
		if err != nil {
			return firewallState(f, nil), fmt.Errorf("%s: setting its rules: %w", what, apiError(err))
		}
		if err := waitFor(ctx, c, what, actions...); err != nil {
			return firewallState(f, nil), err
		}
		f = latest(ctx, c, fid, f)
	}
	return firewallState(f, given), nil
}

func (firewallResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	return updatePreview(olds, news, []resource.PropertyKey{"name", "labels", "rules"}, firewallCleared())
}

func (firewallResource) delete(ctx context.Context, c *hcloud.Client, id string, _ resource.PropertyMap) error {
	fid, err := parseID("firewall", id)
	if err != nil {
		return err
	}
	// Still in use while the servers it was applied to are being deleted: retry for 2 minutes.
	deadline := time.Now().Add(2 * time.Minute)
	for delay := 500 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		_, err := c.Firewall.Delete(ctx, &hcloud.Firewall{ID: fid})
		switch {
		case err == nil || isNotFound(err):
			return nil
		case hcloud.IsError(err, hcloud.ErrorCodeResourceInUse) && time.Now().Before(deadline):
			if err := sleep(ctx, delay); err != nil {
				return fmt.Errorf("deleting firewall %s: %w", id, apiError(err))
			}
		default:
			return fmt.Errorf("deleting firewall %s: %w", id, apiError(err))
		}
	}
}
