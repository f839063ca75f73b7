package main

// The data sources (invokes) this project's program uses, with pulumi-hcloud 1.43.3's tokens
// and wire names:
//
//	hcloud:index/getServerType:getServerType  (id | name)
//	hcloud:index/getFirewall:getFirewall      (id | name | withSelector [, mostRecent])

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/exp/deprecationutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	getServerTypeToken = "hcloud:index/getServerType:getServerType"
	getFirewallToken   = "hcloud:index/getFirewall:getFirewall"
)

type invokeFunc func(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc, args view,
) (resource.PropertyMap, []*pulumirpc.CheckFailure, error)

var invokes = map[string]invokeFunc{
	getServerTypeToken: getServerType,
	getFirewallToken:   getFirewall,
}

func (p *hcloudProvider) Invoke(ctx context.Context, req *pulumirpc.InvokeRequest) (*pulumirpc.InvokeResponse, error) {
	fn, ok := invokes[req.GetTok()]
	if !ok {
		return nil, status.Errorf(codes.Unimplemented,
			"%s is not implemented by %s: it has only the getServerType and getFirewall invokes "+
				"(and the Server, SshKey and Firewall resources)", req.GetTok(), standIn)
	}
	args, err := unmarshal(req.GetArgs(), "Invoke.args")
	if err != nil {
		return nil, err
	}
	ctx, done, c, cat, err := p.start(ctx, 0)
	if err != nil {
		return nil, err
	}
	defer done()
	result, failures, err := fn(ctx, c, cat, p.warner(ctx, ""), view(revealMap(args)))
	if err != nil {
		return nil, err
	}
	if len(failures) > 0 {
		return &pulumirpc.InvokeResponse{Failures: failures}, nil
	}
	ret, err := marshal(result, "Invoke.return")
	if err != nil {
		return nil, err
	}
	return &pulumirpc.InvokeResponse{Return: ret}, nil
}

func getServerType(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc, args view,
) (resource.PropertyMap, []*pulumirpc.CheckFailure, error) {
	id, hasID := args.number("id")
	name := args.str("name")
	if !hasID && name == "" {
		return nil, []*pulumirpc.CheckFailure{failure("name",
			"give the server type's name or id")}, nil
	}
	var (
		t   *hcloud.ServerType
		err error
	)
	if hasID {
		t, _, err = c.ServerType.GetByID(ctx, id)
	} else {
		t, err = cat.serverTypes.find(ctx, name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading server types: %w", apiError(err))
	}
	if t == nil {
		which := fmt.Sprintf("name %q", name)
		if hasID {
			which = fmt.Sprintf("id %d", id)
		}
		return nil, nil, status.Errorf(codes.NotFound, "no server type with %s; the API has: %s",
			which, strings.Join(cat.serverTypes.names(ctx), ", "))
	}
	// As the official data source: a warning when the type is deprecated in every location.
	if msg, unavailable := deprecationutil.ServerTypeMessage(t, ""); unavailable {
		warn("Server Type unavailable: " + msg + ".")
	} else if msg != "" {
		warn("Server Type deprecated: " + msg + ".")
	}
	locations := make([]resource.PropertyValue, 0, len(t.Locations))
	for _, l := range t.Locations {
		if l.Location == nil {
			continue
		}
		locations = append(locations, resource.NewObjectProperty(resource.PropertyMap{
			"id":                   numProp(l.Location.ID),
			"name":                 strProp(l.Location.Name),
			"available":            boolProp(l.Available),
			"recommended":          boolProp(l.Recommended),
			"isDeprecated":         boolProp(l.IsDeprecated()),
			"deprecationAnnounced": strProp(dateOrEmpty(l.DeprecationAnnounced())),
			"unavailableAfter":     strProp(dateOrEmpty(l.UnavailableAfter())),
		}))
	}
	return resource.PropertyMap{
		"id":                   numProp(t.ID),
		"name":                 strProp(t.Name),
		"description":          strProp(t.Description),
		"category":             strProp(t.Category),
		"cores":                numProp(int64(t.Cores)),
		"memory":               numProp(int64(t.Memory)),
		"disk":                 numProp(int64(t.Disk)),
		"storageType":          strProp(string(t.StorageType)),
		"cpuType":              strProp(string(t.CPUType)),
		"architecture":         strProp(string(t.Architecture)),
		"includedTraffic":      numProp(t.IncludedTraffic), //nolint:staticcheck // still in the SDK's result
		"isDeprecated":         boolProp(t.IsDeprecated()),
		"deprecationAnnounced": strProp(dateOrEmpty(t.DeprecationAnnounced())),
		"unavailableAfter":     strProp(dateOrEmpty(t.UnavailableAfter())),
		"locations":            resource.NewArrayProperty(locations),
	}, nil, nil
}

func getFirewall(ctx context.Context, c *hcloud.Client, _ *catalogue, _ warnFunc, args view,
) (resource.PropertyMap, []*pulumirpc.CheckFailure, error) {
	id, hasID := args.number("id")
	name, selector := args.str("name"), args.str("withSelector")
	mostRecent := args.boolean("mostRecent")
	var (
		f     *hcloud.Firewall
		err   error
		which string
	)
	switch {
	case hasID:
		which = fmt.Sprintf("id %d", id)
		f, _, err = c.Firewall.GetByID(ctx, id)
	case name != "":
		which = fmt.Sprintf("name %q", name)
		f, _, err = c.Firewall.GetByName(ctx, name)
	case selector != "":
		which = fmt.Sprintf("label selector %q", selector)
		var all []*hcloud.Firewall
		all, err = c.Firewall.AllWithOpts(ctx, hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: selector}})
		if err == nil {
			switch {
			case len(all) == 1:
				f = all[0]
			case len(all) > 1 && mostRecent:
				sort.Slice(all, func(i, j int) bool { return all[i].Created.After(all[j].Created) })
				f = all[0]
			case len(all) > 1:
				return nil, nil, status.Errorf(codes.FailedPrecondition,
					"%d firewalls match %s; set mostRecent to take the newest", len(all), which)
			}
		}
	default:
		return nil, []*pulumirpc.CheckFailure{failure("name",
			"give the firewall's id, name or withSelector")}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading firewalls: %w", apiError(err))
	}
	if f == nil {
		return nil, nil, status.Errorf(codes.NotFound, "no firewall with %s", which)
	}
	applyTos := []resource.PropertyValue{}
	for _, a := range f.AppliedTo {
		m := resource.PropertyMap{}
		switch {
		case a.Type == hcloud.FirewallResourceTypeServer && a.Server != nil:
			m["server"] = numProp(a.Server.ID)
		case a.Type == hcloud.FirewallResourceTypeLabelSelector && a.LabelSelector != nil:
			m["labelSelector"] = strProp(a.LabelSelector.Selector)
		default:
			continue
		}
		applyTos = append(applyTos, resource.NewObjectProperty(m))
	}
	out := resource.PropertyMap{
		"id":       numProp(f.ID),
		"name":     strProp(f.Name),
		"labels":   strMapProp(f.Labels),
		"rules":    rulesProp(rulesFromAPI(f.Rules)),
		"applyTos": resource.NewArrayProperty(applyTos),
	}
	if selector != "" {
		out["withSelector"] = strProp(selector)
	}
	if args.has("mostRecent") {
		out["mostRecent"] = boolProp(mostRecent)
	}
	return out, nil, nil
}
