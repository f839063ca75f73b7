package main

// hcloud:index/sshKey:SshKey, as terraform-provider-hcloud's hcloud_ssh_key: publicKey
// replaces (compared without surrounding whitespace); name and labels update in place.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const sshKeyToken = "hcloud:index/sshKey:SshKey"

type sshKeyResource struct{}

var sshKeySpec = &resourceSpec{
	token: sshKeyToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, desc: "Name of the SSH key; autonamed when absent."},
		{name: "publicKey", kind: kString, input: true, output: true, required: true, replace: true,
			equal: publicKeyEqual, desc: "The public key (OpenSSH format)."},
		{name: "labels", kind: kStringMap, input: true, output: true, desc: "User-defined labels."},
		{name: "fingerprint", kind: kString, output: true, desc: "The key's fingerprint."},
	},
}

func (sshKeyResource) spec() *resourceSpec { return sshKeySpec }

func publicKeyEqual(old, new resource.PropertyValue, _ view) bool {
	return sameKey(stringOr(old), stringOr(new))
}

// sameKey: equal but for surrounding whitespace, or the same type and key data (the comment
// may differ: the API may keep or drop it).
func sameKey(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == b {
		return true
	}
	fa, fb := strings.Fields(a), strings.Fields(b)
	return len(fa) >= 2 && len(fb) >= 2 && fa[0] == fb[0] && fa[1] == fb[1]
}

func (sshKeyResource) check(_ context.Context, _ *hcloud.Client, _ *catalogue, req *pulumirpc.CheckRequest,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, _, failures := checkInputs(req, olds, news, func(n view) []*pulumirpc.CheckFailure {
		if n.known("publicKey") && len(strings.Fields(n.str("publicKey"))) < 2 {
			return []*pulumirpc.CheckFailure{failure("publicKey",
				"publicKey is not an OpenSSH public key (\"<type> <base64 data> [comment]\")")}
		}
		return nil
	})
	return checked, failures
}

func sshKeyState(k *hcloud.SSHKey, givenKey string) resource.PropertyMap {
	key := k.PublicKey
	if givenKey != "" && sameKey(givenKey, k.PublicKey) {
		key = givenKey
	}
	return resource.PropertyMap{
		"name":        strProp(k.Name),
		"publicKey":   strProp(key),
		"labels":      strMapProp(k.Labels),
		"fingerprint": strProp(k.Fingerprint),
	}
}

func (sshKeyResource) create(ctx context.Context, c *hcloud.Client, _ *catalogue, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	key, _, err := c.SSHKey.Create(ctx, hcloud.SSHKeyCreateOpts{
		Name:      n.str("name"),
		PublicKey: n.str("publicKey"),
		Labels:    n.strMap("labels"),
	})
	if err != nil {
		return "", nil, fmt.Errorf("creating SSH key %q: %w", n.str("name"), apiError(err))
	}
	return formatID(key.ID), sshKeyState(key, n.str("publicKey")), nil
}

func (sshKeyResource) preview(news resource.PropertyMap) resource.PropertyMap {
	out := withDefaults(copyMap(news), resource.PropertyMap{"labels": strMapProp(nil)})
	out["fingerprint"] = unknown()
	return out
}

func (sshKeyResource) read(ctx context.Context, c *hcloud.Client, _ *catalogue, id string,
	state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	key, err := fetch(ctx, "SSH key", id, c.SSHKey.GetByID)
	if err != nil {
		return nil, err
	}
	return sshKeyState(key, view(revealMap(state)).str("publicKey")), nil
}

func (sshKeyResource) update(ctx context.Context, c *hcloud.Client, _ *catalogue, id string,
	_, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	kid, err := parseID("SSH key", id)
	if err != nil {
		return nil, err
	}
	n := view(revealMap(news))
	key, _, err := c.SSHKey.Update(ctx, &hcloud.SSHKey{ID: kid}, hcloud.SSHKeyUpdateOpts{
		Name:   n.str("name"),
		Labels: n.strMap("labels"),
	})
	if isNotFound(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("updating SSH key %q (%s): %w", n.str("name"), id, apiError(err))
	}
	return sshKeyState(key, n.str("publicKey")), nil
}

func (sshKeyResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	return updatePreview(olds, news, []resource.PropertyKey{"name", "labels"},
		resource.PropertyMap{"labels": strMapProp(nil)})
}

func (sshKeyResource) delete(ctx context.Context, c *hcloud.Client, id string, _ resource.PropertyMap) error {
	kid, err := parseID("SSH key", id)
	if err != nil {
		return err
	}
	_, err = c.SSHKey.Delete(ctx, &hcloud.SSHKey{ID: kid})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("deleting SSH key %s: %w", id, apiError(err))
	}
	return nil
}
