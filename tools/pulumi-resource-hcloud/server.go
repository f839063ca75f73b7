package main

// hcloud:index/server:Server, as terraform-provider-hcloud v1.68.0's hcloud_server behaves for
// the inputs this project uses (internal/server/resource.go there):
//
//   - Check validates the inputs alone (the official plan never calls the API): a `datacenter`
//     is refused (removed from the API on 2026-07-01), an empty image or SSH key is refused;
//     types, images, locations, names and user data meet the API at create;
//   - create resolves the image by name for the server type's architecture, warns about a
//     deprecated image (fails for one past its unavailable_after), checks the server type's
//     deprecation in the location (fails once it is unavailable there, else warns), creates
//     the server and waits for its create action, then each next action;
//   - userData is kept in the state as base64(SHA-1(userData)), always as a secret;
//   - replaced on a change of: image, location, sshKeys, userData;
//   - updated in place: name, labels, serverType (power off when running, change_type with
//     upgrade_disk unless keepDisk; the API starts the server again; same id and addresses),
//     firewallIds (remove_from_resources / apply_to_resources per firewall), the state-only
//     flags. A type change the API would refuse (another architecture or storage type, or a
//     disk smaller than the server's) is refused before the server is powered off: the one
//     deliberate difference (the official provider powers off first, then meets the API's
//     invalid_server_type and leaves the server off; issue #853 there).

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/exp/deprecationutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const serverToken = "hcloud:index/server:Server"

// datacenterRemoved is why a `datacenter` input fails Check, as in the official provider.
const datacenterRemoved = "Removed Attribute: the datacenter attribute is marked for removal, " +
	"you must use the location attribute instead " +
	"(https://docs.hetzner.cloud/changelog#2026-07-01-removing-datacenters)"

// changeDeprecatedServerType follows a server type's deprecation warning, as the official
// provider's does.
const changeDeprecatedServerType = "Existing servers of that type keep working as before; " +
	"a server can move to another type with the change_type action (`hcloud server change-type`)."

type serverResource struct{}

var serverSpec = &resourceSpec{
	token: serverToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true,
			desc: "Name of the server (unique per project, a valid hostname); autonamed when absent."},
		{name: "serverType", kind: kString, input: true, output: true, required: true,
			desc: "Name of the server type. A change resizes the server in place (power off, change_type)."},
		{name: "image", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Name or ID of the image, resolved for the server type's architecture."},
		{name: "location", kind: kString, input: true, output: true, computed: true, replace: true,
			desc: "Location name."},
		{name: "datacenter", kind: kString, input: true, output: true, computed: true,
			desc: "Removed from the API on 2026-07-01: any value fails; use location."},
		{name: "sshKeys", kind: kStringList, input: true, output: true, replace: true,
			desc: "SSH key IDs or names injected at creation."},
		{name: "firewallIds", kind: kIntList, input: true, output: true, computed: true, equal: firewallIDsEqual,
			desc: "IDs of the firewalls applied to the server."},
		{name: "userData", kind: kString, input: true, output: true, replace: true, secret: true, equal: userDataEqual,
			desc: "Cloud-init user data; the state keeps base64(SHA-1) of it, as a secret."},
		{name: "labels", kind: kStringMap, input: true, output: true, desc: "User-defined labels."},
		{name: "ignoreRemoteFirewallIds", kind: kBool, input: true, output: true,
			desc: "Ignore firewalls applied to the server from elsewhere."},
		{name: "shutdownBeforeDeletion", kind: kBool, input: true, output: true,
			desc: "Shut the server down gracefully before deleting it."},
		{name: "allowDeprecatedImages", kind: kBool, input: true, output: true,
			desc: "Unused (since terraform-provider-hcloud v1.65.0 a deprecated image only warns)."},
		{name: "keepDisk", kind: kBool, input: true, output: true,
			desc: "On a serverType change, keep the disk's size, so that a smaller type stays possible."},
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
	name, serverType, image, location string
	sshKeys                           []string
	firewallIDs                       []int64
	userDataHash                      string
	labels                            map[string]string
	ignoreRemote, shutdownBefore      bool
	allowDeprecated, keepDisk         bool
}

func serverArgsOf(v view, fromState bool) serverArgs {
	a := serverArgs{
		name:            v.str("name"),
		serverType:      v.str("serverType"),
		image:           v.str("image"),
		location:        v.str("location"),
		sshKeys:         v.strs("sshKeys"),
		firewallIDs:     v.ints("firewallIds"),
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

func (serverResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, _, failures := checkInputs(req, olds, news, checkServerInputs)
	return checked, failures
}

// checkServerInputs is what the official provider validates at plan: the inputs alone.
func checkServerInputs(n view) []*pulumirpc.CheckFailure {
	var failures []*pulumirpc.CheckFailure
	if n.has("datacenter") {
		failures = append(failures, failure("datacenter", "%s", datacenterRemoved))
	}
	if n.known("image") && n.str("image") == "" {
		failures = append(failures, failure("image",
			"image must not be empty: give an image's name (such as ubuntu-24.04) or its ID"))
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

// serverTypeNotice is the deprecation notice of a server type in a location ("" when there is
// none) and whether it can no longer be ordered there.
func serverTypeNotice(st *hcloud.ServerType, location string) (string, bool) {
	msg, unavailable := deprecationutil.ServerTypeMessage(st, location)
	if msg == "" {
		return "", false
	}
	return msg + ". " + changeDeprecatedServerType, unavailable
}

func (serverResource) create(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc,
	news resource.PropertyMap,
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
	if msg, unavailable := deprecationutil.ImageMessage(img); unavailable {
		return "", nil, fmt.Errorf("%s: image unavailable: %s", what, msg)
	} else if msg != "" {
		warn(fmt.Sprintf("image deprecated: %s.", msg))
	}
	noticed := false
	if msg, unavailable := serverTypeNotice(st, a.location); unavailable {
		return "", nil, fmt.Errorf("%s: %s", what, msg)
	} else if msg != "" {
		noticed = true
		warn(msg)
	}

	opts := hcloud.ServerCreateOpts{
		Name:       a.name,
		ServerType: &hcloud.ServerType{Name: a.serverType},
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
	if a.location != "" {
		opts.Location = &hcloud.Location{Name: a.location}
	}
	for _, id := range a.firewallIDs {
		opts.Firewalls = append(opts.Firewalls, &hcloud.ServerCreateFirewall{Firewall: hcloud.Firewall{ID: id}})
	}

	res, _, err := c.Server.Create(ctx, opts)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", what, apiError(err))
	}
	id := formatID(res.Server.ID)
	if !noticed && res.Server.Location != nil {
		// The API chose the location: the deprecation there is known only now.
		if msg, _ := serverTypeNotice(st, res.Server.Location.Name); msg != "" {
			warn(msg)
		}
	}
	for _, action := range append([]*hcloud.Action{res.Action}, res.NextActions...) {
		if err := waitFor(ctx, c, what, action); err != nil {
			return id, serverState(res.Server, a), err
		}
	}
	s, err := getByID(ctx, res.Server.ID, c.Server.GetByID, what)
	if err == errNotFound {
		return "", nil, fmt.Errorf("%s: server %s vanished right after it was created", what, id)
	}
	if err != nil {
		return id, serverState(res.Server, a), err
	}
	return id, serverState(s, a), nil
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
		"image":                   unknown(),
		"location":                unknown(),
		"firewallIds":             unknown(),
		"sshKeys":                 strsProp(nil),
		"labels":                  strMapProp(nil),
		"backups":                 boolProp(false),
		"deleteProtection":        boolProp(false),
		"rebuildProtection":       boolProp(false),
		"ignoreRemoteFirewallIds": boolProp(false),
		"shutdownBeforeDeletion":  boolProp(false),
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
func serverState(s *hcloud.Server, a serverArgs) resource.PropertyMap {
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
		"keepDisk":                boolProp(a.keepDisk),
	}
	if a.allowDeprecated {
		m["allowDeprecatedImages"] = boolProp(true)
	}
	if s.ServerType != nil {
		m["serverType"] = strProp(s.ServerType.Name)
	} else {
		m["serverType"] = strProp(a.serverType)
	}
	if s.Location != nil {
		m["location"] = strProp(s.Location.Name)
	}
	if !s.PublicNet.IPv4.IsUnspecified() {
		m["ipv4Address"] = strProp(s.PublicNet.IPv4.IP.String())
	}
	if v6 := s.PublicNet.IPv6; len(v6.IP) > 0 {
		if v6.Network != nil {
			m["ipv6Network"] = strProp(v6.Network.String())
		}
		// The network's address with a 1 appended, as the official provider reports it.
		m["ipv6Address"] = strProp(v6.IP.String() + "1")
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

func (serverResource) read(ctx context.Context, c *hcloud.Client, _ *catalogue, id string,
	state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	s, err := fetch(ctx, "server", id, c.Server.GetByID)
	if err != nil {
		return nil, err
	}
	return serverState(s, serverArgsOf(view(revealMap(state)), true)), nil
}

// typeChangeRefusal says why the API would refuse to change server s to type to (keeping the
// disk's size or not); "" when it would not. Checked before the server is powered off.
func typeChangeRefusal(s *hcloud.Server, to *hcloud.ServerType) string {
	from := s.ServerType
	switch {
	case from == nil:
		return ""
	case from.Architecture != to.Architecture:
		return fmt.Sprintf("%s is %s and %s is %s: the API refuses a change of architecture "+
			"(invalid_server_type, \"server type has incompatible architecture\"); replace the server instead",
			from.Name, from.Architecture, to.Name, to.Architecture)
	case from.StorageType != to.StorageType:
		return fmt.Sprintf("%s has %s storage and %s has %s: the API changes only to a type with the same "+
			"storage type (invalid_server_type); replace the server instead",
			from.Name, from.StorageType, to.Name, to.StorageType)
	case to.Disk < s.PrimaryDiskSize:
		return fmt.Sprintf("the server's disk is %d GB and %s has %d GB: the API never shrinks a disk "+
			"(invalid_server_type); a smaller type is possible only after a change with keepDisk, "+
			"else replace the server", s.PrimaryDiskSize, to.Name, to.Disk)
	}
	return ""
}

func (serverResource) update(ctx context.Context, c *hcloud.Client, cat *catalogue, warn warnFunc, id string,
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
	// Everything the API could refuse up front is asked first, so that a refusal leaves the
	// server as it was.
	var newType *hcloud.ServerType
	if a.serverType != o.str("serverType") {
		t, err := cat.serverTypes.find(ctx, a.serverType)
		if err != nil {
			return nil, fmt.Errorf("%s: reading server type %q: %w", what, a.serverType, apiError(err))
		}
		if t == nil {
			return nil, fmt.Errorf("%s: server type %q not found; the API has: %s",
				what, a.serverType, strings.Join(cat.serverTypes.names(ctx), ", "))
		}
		if why := typeChangeRefusal(s, t); why != "" {
			return nil, fmt.Errorf("%s: changing its type to %s is refused before anything is touched: %s",
				what, t.Name, why)
		}
		newType = t
	}

	if a.name != "" && a.name != s.Name {
		if s, _, err = c.Server.Update(ctx, s, hcloud.ServerUpdateOpts{Name: a.name}); err != nil {
			return nil, fmt.Errorf("%s: renaming it: %w", what, apiError(err))
		}
	}
	if !labelsEqual(a.labels, s.Labels) {
		if s, _, err = c.Server.Update(ctx, s, hcloud.ServerUpdateOpts{Labels: a.labels}); err != nil {
			return nil, fmt.Errorf("%s: setting its labels: %w", what, apiError(err))
		}
	}
	if newType != nil {
		if err := changeType(ctx, c, s, newType, a.keepDisk); err != nil {
			partial, _ := serverRead(ctx, c, sid, a)
			return partial, fmt.Errorf("%s: %w", what, err)
		}
		if msg, _ := serverTypeNotice(newType, a.location); msg != "" {
			warn(msg)
		}
	}

	if n.has("firewallIds") {
		current := firewallIDsOf(s, serverArgs{})
		if a.ignoreRemote {
			current = o.ints("firewallIds")
		}
		if err := reconcileFirewalls(ctx, c, s.ID, current, a.firewallIDs); err != nil {
			partial, _ := serverRead(ctx, c, sid, a)
			return partial, fmt.Errorf("%s: %w", what, err)
		}
	}
	state, err := serverRead(ctx, c, sid, a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return state, nil
}

// changeType resizes server s to type t as the official provider does: power it off when it
// is running, then change_type (upgrading the disk unless keepDisk), waiting for each action.
// The API starts the server again at the end of change_type.
func changeType(ctx context.Context, c *hcloud.Client, s *hcloud.Server, t *hcloud.ServerType, keepDisk bool) error {
	if s.Status == hcloud.ServerStatusRunning {
		action, _, err := c.Server.Poweroff(ctx, s)
		if err != nil {
			return fmt.Errorf("powering it off to change its type: %w", apiError(err))
		}
		if err := waitFor(ctx, c, "powering it off to change its type", action); err != nil {
			return err
		}
	}
	action, _, err := c.Server.ChangeType(ctx, s, hcloud.ServerChangeTypeOpts{
		ServerType:  &hcloud.ServerType{Name: t.Name},
		UpgradeDisk: !keepDisk,
	})
	if err != nil {
		return fmt.Errorf("changing its type to %s: %w", t.Name, apiError(err))
	}
	return waitFor(ctx, c, "changing its type to "+t.Name, action)
}

func serverRead(ctx context.Context, c *hcloud.Client, sid int64, a serverArgs) (resource.PropertyMap, error) {
	s, err := getByID(ctx, sid, c.Server.GetByID, "")
	if err != nil {
		return nil, err
	}
	return serverState(s, a), nil
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
	return updatePreview(olds, news, []resource.PropertyKey{"name", "labels", "serverType", "firewallIds",
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
	// A server that is already gone is an error, as in terraform-provider-hcloud's
	// resourceServerDelete: `pulumi refresh` (or an up with refresh) drops it from state.
	res, _, err := c.Server.DeleteWithResult(ctx, &hcloud.Server{ID: sid})
	if err != nil {
		return fmt.Errorf("%s: %w", what, apiError(err))
	}
	if res != nil {
		return waitFor(ctx, c, what, res.Action)
	}
	return nil
}
