package main

// hcloud:index/firewall:Firewall, as terraform-provider-hcloud v1.68.0's hcloud_firewall for
// name, labels and rules (internal/firewall/resource.go and validation.go there):
//
//   - rules are a set (order does not matter); an address without a prefix length is a
//     single host (/32, /128), addresses compare in the API's spelling (lower case, shortest
//     IPv6), and a CIDR with host bits set is refused at Check, as are a direction other than
//     in/out and an unknown protocol (ports and which addresses a rule needs meet the API);
//   - name, rules (set_rules) and labels update in place, in that order; an empty rule set
//     leaves the firewall's rules as they are (the official provider skips set_rules then);
//     labels are computed: without a labels input the firewall keeps its own;
//   - delete first removes the firewall from every resource it is applied to (servers and
//     label selectors, including servers the runtime made with ORCA_HCLOUD_FIREWALL), waits
//     for that, then deletes it, retrying while the API still says resource_in_use or conflict.
//
// applyTos is not supported: this project applies firewalls through the servers' firewallIds.

import (
	"context"
	"fmt"
	"net"
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
		{name: "labels", kind: kStringMap, input: true, output: true, computed: true,
			desc: "User-defined labels; without them the firewall keeps its own."},
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

// normalizeIP writes an address or network as the API does: a network in CIDR notation, its
// host bits kept (so that validateIP can refuse them), lower case, IPv6 shortest; a bare
// address is a single host (/32 or /128). Anything else is returned unchanged.
func normalizeIP(s string) string {
	if ip, n, err := net.ParseCIDR(s); err == nil {
		return (&net.IPNet{IP: ip, Mask: n.Mask}).String()
	}
	ip := net.ParseIP(s)
	switch {
	case ip == nil:
		return s
	case ip.To4() != nil:
		return (&net.IPNet{IP: ip.To4(), Mask: net.CIDRMask(32, 32)}).String()
	}
	return (&net.IPNet{IP: ip, Mask: net.CIDRMask(128, 128)}).String()
}

// validateIP says what is wrong with a rule's address (nil when nothing is).
func validateIP(s string) error {
	ip, n, err := net.ParseCIDR(normalizeIP(s))
	if err != nil {
		return fmt.Errorf("%q is not an IP address or network (such as 203.0.113.7, 203.0.113.0/24 or ::/0)", s)
	}
	if !ip.Equal(n.IP) {
		return fmt.Errorf("%s is not the start of the network %s: remove the host bits", s, n)
	}
	return nil
}

func normalizeIPs(ips []string) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = normalizeIP(ip)
	}
	return out
}

func canonicalCIDRs(ips []string) string {
	out := normalizeIPs(ips)
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
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
		if err := validateIP(ip); err != nil {
			return nil, err
		}
		_, n, _ := net.ParseCIDR(normalizeIP(ip))
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

var protocols = []string{"tcp", "udp", "icmp", "esp", "gre"}

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
				} else {
					for _, ip := range o.strs(k) {
						if err := validateIP(ip); err != nil {
							bad(i, "%s: %v", k, err)
						}
					}
				}
			}
		}
		dir, proto := o.str("direction"), o.str("protocol")
		if !o.isUnknown("direction") && dir != "in" && dir != "out" {
			bad(i, "direction must be \"in\" or \"out\", not %q", dir)
		}
		if !o.isUnknown("protocol") && !slices.Contains(protocols, proto) {
			bad(i, "protocol must be one of %s; not %q", strings.Join(protocols, ", "), proto)
		}
	}
	return failures
}

func (firewallResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, _, failures := checkInputs(req, olds, news, func(n view) []*pulumirpc.CheckFailure {
		if v, ok := n.get("rules"); ok && !v.IsComputed() {
			return checkRules(v)
		}
		return nil
	})
	return checked, failures
}

// firewallState: the API's firewall, with the rules in the order the inputs gave them (their
// addresses as the API writes them) while they are the same set.
func firewallState(f *hcloud.Firewall, given []rule) resource.PropertyMap {
	rules := rulesFromAPI(f.Rules)
	if rulesEqual(rules, given) {
		rules = make([]rule, len(given))
		for i, r := range given {
			r.sourceIPs, r.destinationIPs = normalizeIPs(r.sourceIPs), normalizeIPs(r.destinationIPs)
			rules[i] = r
		}
	}
	return resource.PropertyMap{
		"name":   strProp(f.Name),
		"labels": strMapProp(f.Labels),
		"rules":  rulesProp(rules),
	}
}

func (firewallResource) create(ctx context.Context, c *hcloud.Client, _ *catalogue, _ warnFunc, news resource.PropertyMap,
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

func (firewallResource) update(ctx context.Context, c *hcloud.Client, _ *catalogue, _ warnFunc, id string,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	fid, err := parseID("firewall", id)
	if err != nil {
		return nil, err
	}
	o, n := view(revealMap(olds)), view(revealMap(news))
	what := fmt.Sprintf("updating firewall %q (%s)", n.str("name"), id)
	f, err := getByID(ctx, fid, c.Firewall.GetByID, what)
	if err != nil {
		return nil, err
	}
	if n.str("name") != f.Name {
		if f, _, err = c.Firewall.Update(ctx, f, hcloud.FirewallUpdateOpts{Name: n.str("name")}); err != nil {
			return nil, fmt.Errorf("%s: renaming it: %w", what, apiError(err))
		}
	}
	given := rulesOf(n, "rules")
	// No rules at all leaves the firewall's rules alone, as the official provider does.
	if len(given) > 0 && !rulesEqual(rulesOf(o, "rules"), given) {
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
	}
	if n.has("labels") && !labelsEqual(n.strMap("labels"), f.Labels) {
		if f, _, err = c.Firewall.Update(ctx, f, hcloud.FirewallUpdateOpts{Labels: n.strMap("labels")}); err != nil {
			return nil, fmt.Errorf("%s: setting its labels: %w", what, apiError(err))
		}
	}
	return firewallState(latest(ctx, c, fid, f), given), nil
}

func (firewallResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, []resource.PropertyKey{"name", "labels"}, nil)
	if v, ok := news["rules"]; ok && len(reveal(v).ArrayValue()) > 0 {
		out["rules"] = v
	}
	return out
}

// Deleting retries a firewall still in use (its removals settling) or in conflict as the
// official provider does: up to 10 attempts, waiting 1 s, 2 s, 4 s... between them.
const (
	deleteAttempts = 10
	deleteBackoff  = time.Second
)

func (firewallResource) delete(ctx context.Context, c *hcloud.Client, id string, _ resource.PropertyMap) error {
	fid, err := parseID("firewall", id)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("deleting firewall %s", id)
	f, err := getByID(ctx, fid, c.Firewall.GetByID, what)
	if err == errNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	if err := detachAll(ctx, c, f); err != nil {
		return fmt.Errorf("%s: removing it from the resources it is applied to: %w", what, err)
	}
	delay := deleteBackoff
	for attempt := 1; ; attempt++ {
		_, err := c.Firewall.Delete(ctx, f)
		switch {
		case err == nil || isNotFound(err):
			return nil
		case attempt < deleteAttempts &&
			(hcloud.IsError(err, hcloud.ErrorCodeResourceInUse) || hcloud.IsError(err, hcloud.ErrorCodeConflict)):
			if err := sleep(ctx, delay); err != nil {
				return fmt.Errorf("%s: %w", what, apiError(err))
			}
			delay *= 2
		default:
			return fmt.Errorf("%s: %w", what, apiError(err))
		}
	}
}

// detachAll removes firewall f from every resource it is applied to, in one request, and
// waits for it; resources already gone are fine.
func detachAll(ctx context.Context, c *hcloud.Client, f *hcloud.Firewall) error {
	if len(f.AppliedTo) == 0 {
		return nil
	}
	actions, _, err := c.Firewall.RemoveResources(ctx, f, f.AppliedTo)
	if err != nil {
		if hcloud.IsError(err, hcloud.ErrorCodeFirewallResourceNotFound) || isNotFound(err) {
			return nil
		}
		return apiError(err)
	}
	if err := c.Action.WaitFor(ctx, actions...); err != nil {
		return apiError(err)
	}
	return nil
}
