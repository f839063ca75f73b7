package main

// hcloud:index/server:Server, as terraform-provider-hcloud's hcloud_server behaves for the
// inputs this project uses:
//
//   - image is resolved by name (or ID) for the server type's architecture;
//   - create waits for the create action and its next actions (start, firewalls), then for
//     the server to leave "initializing"/"starting";
//   - userData is kept in the state as base64(SHA-1(userData)), always as a secret;
//   - replaced on a change of: serverType, image, location, datacenter, sshKeys, userData.
//     (The terraform provider resizes in place on a serverType change, with the change_type
//     action; this stand-in replaces instead, which the project's emulator can do too.)
//   - updated in place: name, labels (one PUT), firewallIds (apply_to_resources /
//     remove_from_resources per firewall), and the state-only flags.

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const serverToken = "hcloud:index/server:Server"

const maxUserData = 32 * 1024

type serverResource struct{}

var serverSpec = &resourceSpec{
	token: serverToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true,
			desc: "Name of the server (unique per project, a valid hostname); autonamed when absent."},
		{name: "serverType", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "Name of the server type. A change replaces the server (the official provider resizes in place)."},
		{name: "image", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "Name or ID of the image, resolved for the server type's architecture."},
		{name: "location", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Location name."},
		{name: "datacenter", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Datacenter name (the server is created in its location)."},
		{name: "sshKeys", kind: kStringList, input: true, output: true, replace: true,
			desc: "SSH key IDs or names injected at creation."},
		{name: "firewallIds", kind: kIntList, input: true, output: true, computed: true, equal: firewallIDsEqual,
			desc: "IDs of the firewalls applied to the server."},
		{name: "userData", kind: kString, input: true, output: true, replace: true, secret: true, equal: userDataEqual,
			desc: "Cloud-init user data (at most 32 KiB); the state keeps base64(SHA-1) of it, as a secret."},
		{name: "labels", kind: kStringMap, input: true, output: true, desc: "User-defined labels."},
		{name: "ignoreRemoteFirewallIds", kind: kBool, input: true, output: true,
			desc: "Ignore firewalls applied to the server from elsewhere."},
		{name: "shutdownBeforeDeletion", kind: kBool, input: true, output: true,
			desc: "Shut the server down gracefully before deleting it."},
		{name: "allowDeprecatedImages", kind: kBool, input: true, output: true,
			desc: "Allow a deprecated image."},
		{name: "keepDisk", kind: kBool, input: true, output: true, desc: "Unused: serverType changes replace."},
		{name: "backups", kind: kBool, input: true, output: true, onlyDefault: true, desc: "Only false."},
		{name: "deleteProtection", kind: kBool, input: true, output: true, onlyDefault: true, desc: "Only false."},
		{name: "rebuildProtection", kind: kBool, input: true, output: true, onlyDefault: true, desc: "Only false."},
		{name: "ipv4Address", kind: kString, output: true, desc: "The public IPv4 address."},
		{name: "ipv6Address", kind: kString, output: true, desc: "The first IPv6 address of the server's network."},
		{name: "ipv6Network", kind: kString, output: true, desc: "The public IPv6 network."},
		{name: "status", kind: kString, output: true, desc: "The server's status."},
		{name: "primaryDiskSize", kind: kInt, output: true, desc: "Size of the primary disk in GB."},
		{name: "backupWindow", kind: kString, output: true, desc: "The backup window, when backups are on."},
	},
	unsupported: []string{"iso", "rescue", "networks", "publicNets", "placementGroupId"},
}

func (serverResource) spec() *resourceSpec { return serverSpec }

// userDataHash is the terraform provider's state form of user data.
func userDataHash(userData string) string {
	sum := sha1.Sum([]byte(userData))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// userDataEqual: the state holds the hash (or, from an older state, the data itself).
func userDataEqual(old, new resource.PropertyValue, _ view) bool {
	o, n := stringOr(old), stringOr(new)
	if o == "" || n == "" {
		return strings.TrimSpace(o) == strings.TrimSpace(n)
	}
	return o == userDataHash(n) || strings.TrimSpace(o) == strings.TrimSpace(n)
}

// firewallIDsEqual compares as sets; with ignoreRemoteFirewallIds, two non-empty sets are equal.
func firewallIDsEqual(old, new resource.PropertyValue, news view) bool {
	o, n := idSet(old), idSet(new)
	if news.boolean("ignoreRemoteFirewallIds") && len(o) > 0 && len(n) > 0 {
		return true
	}
	return slices.Equal(o, n)
}

func idSet(v resource.PropertyValue) []int64 {
	var ids []int64
	if v.IsArray() {
		for _, e := range v.ArrayValue() {
			if e.IsNumber() {
				ids = append(ids, int64(e.NumberValue()))
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// serverArgs is what the provider keeps of a server beyond what the API reports.
type serverArgs struct {
	name, serverType, image, location, datacenter string
	sshKeys                                       []string
	firewallIDs                                   []int64
	hasFirewallIDs                                bool
	userDataHash                                  string
	labels                                        map[string]string
	ignoreRemote, shutdownBefore                  bool
	allowDeprecated, keepDisk                     bool
}

func serverArgsOf(v view, fromState bool) serverArgs {
	a := serverArgs{
		name:            v.str("name"),
		serverType:      v.str("serverType"),
		image:           v.str("image"),
		location:        v.str("location"),
		datacenter:      v.str("datacenter"),
		sshKeys:         v.strs("sshKeys"),
		firewallIDs:     v.ints("firewallIds"),
		hasFirewallIDs:  v.has("firewallIds"),
		labels:          v.strMap("labels"),
		ignoreRemote:    v.boolean("ignoreRemoteFirewallIds"),
		shutdownBefore:  v.boolean("shutdownBeforeDeletion"),
		allowDeprecated: v.boolean("allowDeprecatedImages"),
		keepDisk:        v.boolean("keepDisk"),
	}
	if ud := v.str("userData"); ud != "" {
		if fromState {
			a.userDataHash = ud
		} else {
			a.userDataHash = userDataHash(ud)
		}
	}
	return a
}

func (serverResource) check(ctx context.Context, c *hcloud.Client, cat *catalogue, req *pulumirpc.CheckRequest,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, n, failures := checkInputs(req, olds, news, checkServerInputs)
	if c == nil || len(failures) > 0 {
		return checked, failures
	}

	// Against the API's catalogue, so that a preview already names a wrong type, location or
	// image. Only a definite "there is none" fails; an unreachable API is left to create.
	var st *hcloud.ServerType
	if n.known("serverType") {
		t, err := cat.serverTypes.find(ctx, n.str("serverType"))
		switch {
		case err == nil && t == nil:
			failures = append(failures, failure("serverType",
				"server type %q not found; the API has: %s",
				n.str("serverType"), strings.Join(cat.serverTypes.names(ctx), ", ")))
		case err == nil:
			st = t
			if t.IsDeprecated() && time.Now().After(t.UnavailableAfter()) {
				failures = append(failures, failure("serverType",
					"server type %q is deprecated and can no longer be ordered", t.Name))
			}
		}
	}
	if n.known("location") {
		if l, err := cat.locations.find(ctx, n.str("location")); err == nil && l == nil {
			failures = append(failures, failure("location",
				"location %q not found; the API has: %s",
				n.str("location"), strings.Join(cat.locations.names(ctx), ", ")))
		}
	}
	if n.known("datacenter") {
		if d, err := cat.datacenters.find(ctx, n.str("datacenter")); err == nil && d == nil {
			failures = append(failures, failure("datacenter",
				"datacenter %q not found", n.str("datacenter")))
		}
	}
	if st != nil && n.known("image") {
		img, err := cat.image(ctx, n.str("image"), st.Architecture)
		switch {
		case err == nil && img == nil:
			failures = append(failures, failure("image",
				"image %q not found for architecture %s (server type %s)",
				n.str("image"), st.Architecture, st.Name))
		case err == nil && img.IsDeprecated() && !n.boolean("allowDeprecatedImages"):
			failures = append(failures, failure("image",
				"image %q is deprecated; set allowDeprecatedImages to use it anyway",
				n.str("image")))
		}
	}
	return checked, failures
}

// checkServerInputs is what Check can tell from the inputs alone.
func checkServerInputs(n view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	if n.known("name") && (!hostnamePattern.MatchString(n.str("name")) || len(n.str("name")) > 253) {
		failures = append(failures, failure("name",
			"name %q is not a valid hostname (RFC 1123: letters, digits and '-', dot-separated)",
			n.str("name")))
	}
	if n.has("location") && n.has("datacenter") {
		failures = append(failures, failure("datacenter",
			"give location or datacenter, not both"))
	}
	if n.known("image") && n.str("image") == "" {
		failures = append(failures, failure("image", "image must not be empty"))
	}
	if n.known("userData") && len(n.str("userData")) > maxUserData {
		failures = append(failures, failure("userData",
			"userData is %d bytes; the limit is 32 KiB", len(n.str("userData"))))
	}
	if n.known("sshKeys") {
		for i, k := range n.strs("sshKeys") {
			if k == "" {
				failures = append(failures, failure("sshKeys",
					"sshKeys item %d is empty: give an SSH key's name or ID", i))
			}
		}
	}
	return failures
}

func (serverResource) create(ctx context.Context, c *hcloud.Client, cat *catalogue, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	a := serverArgsOf(n, false)
	what := fmt.Sprintf("creating server %q", a.name)

	st, err := cat.serverTypes.find(ctx, a.serverType)
	if err != nil {
		return "", nil, fmt.Errorf("%s: reading server type %q: %w", what, a.serverType, apiError(err))
	}
	if st == nil {
		return "", nil, fmt.Errorf("%s: server type %q not found; the API has: %s",
			what, a.serverType, strings.Join(cat.serverTypes.names(ctx), ", "))
	}
	img, err := cat.image(ctx, a.image, st.Architecture)
	if err != nil {
		return "", nil, fmt.Errorf("%s: reading image %q: %w", what, a.image, apiError(err))
	}
	if img == nil {
		return "", nil, fmt.Errorf("%s: image %q for architecture %s not found", what, a.image, st.Architecture)
	}
	if img.IsDeprecated() && !a.allowDeprecated {
		return "", nil, fmt.Errorf("%s: image %q is deprecated; set allowDeprecatedImages to use it anyway",
			what, a.image)
	}
	opts := hcloud.ServerCreateOpts{
		Name:       a.name,
		ServerType: st,
		Image:      img,
		UserData:   n.str("userData"),
		Labels:     a.labels,
	}
	for _, k := range a.sshKeys {
		key, _, err := c.SSHKey.Get(ctx, k)
		if err != nil {
			return "", nil, fmt.Errorf("%s: reading SSH key %q: %w", what, k, apiError(err))
		}
		if key == nil {
			return "", nil, fmt.Errorf("%s: SSH key %q not found", what, k)
		}
		opts.SSHKeys = append(opts.SSHKeys, key)
	}
	switch {
	case a.location != "":
		opts.Location = &hcloud.Location{Name: a.location}
	case a.datacenter != "":
		dc, err := cat.datacenters.find(ctx, a.datacenter)
		if err != nil {
			return "", nil, fmt.Errorf("%s: reading datacenter %q: %w", what, a.datacenter, apiError(err))
		}
		if dc == nil || dc.Location == nil {
			return "", nil, fmt.Errorf("%s: datacenter %q not found", what, a.datacenter)
		}
		opts.Location = &hcloud.Location{Name: dc.Location.Name}
	}
	for _, id := range a.firewallIDs {
		opts.Firewalls = append(opts.Firewalls, &hcloud.ServerCreateFirewall{Firewall: hcloud.Firewall{ID: id}})
	}

	res, _, err := c.Server.Create(ctx, opts)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, apiError(err))
	}
	id := formatID(res.Server.ID)
	if err := waitFor(ctx, c, what, append([]*hcloud.Action{res.Action}, res.NextActions...)...); err != nil {
		return id, serverState(ctx, cat, res.Server, a), err
	}
	s, err := settle(ctx, c, res.Server.ID)
	if err != nil {
		return id, serverState(ctx, cat, res.Server, a), fmt.Errorf("%s: %w", what, err)
	}
	if s == nil {
		return "", nil, fmt.Errorf("%s: server %s vanished right after it was created", what, id)
	}
	return id, serverState(ctx, cat, s, a), nil
}

// settle reads the server until it has left the transient states of its first boot (for at
// most 5 minutes: then it reports the server as it is).
func settle(ctx context.Context, c *hcloud.Client, id int64) (*hcloud.Server, error) {
	deadline := time.Now().Add(5 * time.Minute)
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		s, _, err := c.Server.GetByID(ctx, id)
		if err != nil {
			return nil, apiError(err)
		}
		if s == nil || (s.Status != hcloud.ServerStatusInitializing && s.Status != hcloud.ServerStatusStarting) ||
			time.Now().After(deadline) {
			return s, nil
		}
		if err := sleep(ctx, delay); err != nil {
			return nil, apiError(err)
		}
	}
}

func (serverResource) preview(news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	if v, ok := out["userData"]; ok {
		out["userData"] = hashedUserData(v)
	}
	for _, k := range []resource.PropertyKey{"ipv4Address", "ipv6Address", "ipv6Network", "status",
		"primaryDiskSize", "backupWindow"} {
		out[k] = unknown()
	}
	return withDefaults(out, resource.PropertyMap{
		"location":                unknown(),
		"datacenter":              unknown(),
		"firewallIds":             unknown(),
		"sshKeys":                 strsProp(nil),
		"labels":                  strMapProp(nil),
		"backups":                 boolProp(false),
		"deleteProtection":        boolProp(false),
		"rebuildProtection":       boolProp(false),
		"ignoreRemoteFirewallIds": boolProp(false),
		"shutdownBeforeDeletion":  boolProp(false),
		"allowDeprecatedImages":   boolProp(false),
		"keepDisk":                boolProp(false),
	})
}

// hashedUserData turns a userData input (plain, secret or unknown) into its secret state form.
func hashedUserData(v resource.PropertyValue) resource.PropertyValue {
	r := reveal(v)
	if r.ContainsUnknowns() {
		return v
	}
	if !r.IsString() || r.StringValue() == "" {
		return resource.NewNullProperty()
	}
	return secret(strProp(userDataHash(r.StringValue())))
}

// serverState is the resource's state: what the API reports, plus what only the inputs know.
func serverState(ctx context.Context, cat *catalogue, s *hcloud.Server, a serverArgs) resource.PropertyMap {
	m := resource.PropertyMap{
		"name":                    strProp(s.Name),
		"image":                   strProp(imageOf(s, a.image)),
		"sshKeys":                 strsProp(a.sshKeys),
		"firewallIds":             intsProp(firewallIDsOf(s, a)),
		"labels":                  strMapProp(s.Labels),
		"status":                  strProp(string(s.Status)),
		"primaryDiskSize":         numProp(int64(s.PrimaryDiskSize)),
		"backups":                 boolProp(s.BackupWindow != ""),
		"backupWindow":            strProp(s.BackupWindow),
		"deleteProtection":        boolProp(s.Protection.Delete),
		"rebuildProtection":       boolProp(s.Protection.Rebuild),
		"ignoreRemoteFirewallIds": boolProp(a.ignoreRemote),
		"shutdownBeforeDeletion":  boolProp(a.shutdownBefore),
		"allowDeprecatedImages":   boolProp(a.allowDeprecated),
		"keepDisk":                boolProp(a.keepDisk),
	}
	if s.ServerType != nil {
		m["serverType"] = strProp(s.ServerType.Name)
	} else {
		m["serverType"] = strProp(a.serverType)
	}
	if s.Location != nil {
		m["location"] = strProp(s.Location.Name)
		dc := a.datacenter
		if d, err := cat.datacenters.find(ctx, dc); dc == "" || err != nil || d == nil || d.Location == nil ||
			d.Location.Name != s.Location.Name {
			dc = cat.datacenterOf(ctx, s.Location.Name)
		}
		m["datacenter"] = strProp(dc)
	}
	if !s.PublicNet.IPv4.IsUnspecified() {
		m["ipv4Address"] = strProp(s.PublicNet.IPv4.IP.String())
	}
	if v6 := s.PublicNet.IPv6; !v6.IsUnspecified() {
		if v6.Network != nil {
			m["ipv6Network"] = strProp(v6.Network.String())
		}
		// The first address of the network, as the terraform provider reports it.
		first := slices.Clone(v6.IP.To16())
		if first != nil {
			first[len(first)-1] |= 1
			m["ipv6Address"] = strProp(net.IP(first).String())
		}
	}
	if a.userDataHash != "" {
		m["userData"] = secret(strProp(a.userDataHash))
	}
	return m
}

// imageOf keeps the image as the program named it while it is still the server's image.
func imageOf(s *hcloud.Server, given string) string {
	switch {
	case s.Image == nil:
		return given
	case given != "" && matches(s.Image.ID, s.Image.Name, given):
		return given
	case s.Image.Name != "":
		return s.Image.Name
	}
	return formatID(s.Image.ID)
}

// firewallIDsOf: the server's firewalls, in the order the inputs gave them when it is the same set.
func firewallIDsOf(s *hcloud.Server, a serverArgs) []int64 {
	ids := []int64{}
	for _, f := range s.PublicNet.Firewalls {
		if f != nil {
			ids = append(ids, f.Firewall.ID)
		}
	}
	if a.ignoreRemote && len(a.firewallIDs) > 0 {
		return a.firewallIDs
	}
	if slices.Equal(idSet(intsProp(ids)), idSet(intsProp(a.firewallIDs))) {
		return a.firewallIDs
	}
	return ids
}

func (serverResource) read(ctx context.Context, c *hcloud.Client, cat *catalogue, id string,
	state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	s, err := fetch(ctx, "server", id, c.Server.GetByID)
	if err != nil {
		return nil, err
	}
	return serverState(ctx, cat, s, serverArgsOf(view(revealMap(state)), true)), nil
}

func (serverResource) update(ctx context.Context, c *hcloud.Client, cat *catalogue, id string,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	sid, err := parseID("server", id)
	if err != nil {
		return nil, err
	}
	o, n := view(revealMap(olds)), view(revealMap(news))
	a := serverArgsOf(n, false)
	if !n.has("userData") {
		a.userDataHash = ""
	}
	what := fmt.Sprintf("updating server %q (%s)", a.name, id)
	s, err := getByID(ctx, sid, c.Server.GetByID, what)
	if err != nil {
		return nil, err
	}
	upd := hcloud.ServerUpdateOpts{}
	if a.name != "" && a.name != s.Name {
		upd.Name = a.name
	}
	if !labelsEqual(a.labels, s.Labels) {
		upd.Labels = a.labels
	}
	if upd.Name != "" || upd.Labels != nil {
		if s, _, err = c.Server.Update(ctx, s, upd); err != nil {
			return nil, fmt.Errorf("%s: %w", what, apiError(err))
		}
	}

	if n.has("firewallIds") {
		current := firewallIDsOf(s, serverArgs{})
		if a.ignoreRemote {
			current = o.ints("firewallIds")
		}
		if err := reconcileFirewalls(ctx, c, s.ID, current, a.firewallIDs); err != nil {
			partial, _ := serverRead(ctx, c, cat, sid, a)
			return partial, fmt.Errorf("%s: %w", what, err)
		}
	}
	state, err := serverRead(ctx, c, cat, sid, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return state, nil
}

func serverRead(ctx context.Context, c *hcloud.Client, cat *catalogue, sid int64, a serverArgs) (resource.PropertyMap, error) {
	s, err := getByID(ctx, sid, c.Server.GetByID, "")
	if err != nil {
		return nil, err
	}
	return serverState(ctx, cat, s, a), nil
}

// reconcileFirewalls removes the server from the firewalls it should leave and applies the
// ones it should get, waiting for each action.
func reconcileFirewalls(ctx context.Context, c *hcloud.Client, serverID int64, current, desired []int64) error {
	target := []hcloud.FirewallResource{{
		Type:   hcloud.FirewallResourceTypeServer,
		Server: &hcloud.FirewallResourceServer{ID: serverID},
	}}
	for _, id := range current {
		if slices.Contains(desired, id) {
			continue
		}
		actions, _, err := c.Firewall.RemoveResources(ctx, &hcloud.Firewall{ID: id}, target)
		if err != nil && !hcloud.IsError(err, hcloud.ErrorCodeFirewallAlreadyRemoved) && !isNotFound(err) {
			return fmt.Errorf("removing firewall %d: %w", id, apiError(err))
		}
		if err := waitFor(ctx, c, fmt.Sprintf("removing firewall %d", id), actions...); err != nil {
			return err
		}
	}
	for _, id := range desired {
		if slices.Contains(current, id) {
			continue
		}
		actions, _, err := c.Firewall.ApplyResources(ctx, &hcloud.Firewall{ID: id}, target)
		if err != nil && !hcloud.IsError(err, hcloud.ErrorCodeFirewallAlreadyApplied) {
			return fmt.Errorf("applying firewall %d: %w", id, apiError(err))
		}
		if err := waitFor(ctx, c, fmt.Sprintf("applying firewall %d", id), actions...); err != nil {
			return err
		}
	}
	return nil
}

func (serverResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	return updatePreview(olds, news, []resource.PropertyKey{"name", "labels", "firewallIds",
		"ignoreRemoteFirewallIds", "shutdownBeforeDeletion", "allowDeprecatedImages", "keepDisk"},
		resource.PropertyMap{"labels": strMapProp(nil)})
}

func (serverResource) delete(ctx context.Context, c *hcloud.Client, id string, state resource.PropertyMap) error {
	sid, err := parseID("server", id)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("deleting server %s", id)
	if view(revealMap(state)).boolean("shutdownBeforeDeletion") {
		action, _, err := c.Server.Shutdown(ctx, &hcloud.Server{ID: sid})
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: shutting it down: %w", what, apiError(err))
		}
		if err := waitFor(ctx, c, what, action); err != nil {
			return err
		}
		// Give it 30 s to power off, as the terraform provider does, then delete it anyway.
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			s, _, err := c.Server.GetByID(ctx, sid)
			if err != nil || s == nil || s.Status == hcloud.ServerStatusOff {
				break
			}
			if err := sleep(ctx, time.Second); err != nil {
				return apiError(err)
			}
		}
	}
	res, _, err := c.Server.DeleteWithResult(ctx, &hcloud.Server{ID: sid})
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, apiError(err))
	}
	if res != nil {
		return waitFor(ctx, c, what, res.Action)
	}
	return nil
}
