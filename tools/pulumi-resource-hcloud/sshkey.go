package main

// hcloud:index/sshKey:SshKey, as terraform-provider-hcloud v1.68.0's hcloud_ssh_key
// (internal/sshkey/resource.go there): publicKey replaces on any change of the string (the
// state holds the key as the API returns it); name and labels update in place, in one request
// holding what changed. Check validates nothing beyond the types: the API judges the key.

import (
	"context"
	"fmt"

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
			desc: "The public key (OpenSSH format); any change replaces the key."},
		{name: "labels", kind: kStringMap, input: true, output: true, desc: "User-defined labels."},
		{name: "fingerprint", kind: kString, output: true, desc: "The key's fingerprint."},
	},
}

func (sshKeyResource) spec() *resourceSpec { return sshKeySpec }

func (sshKeyResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked, _, failures := checkInputs(req, olds, news, func(view) []*pulumirpc.CheckFailure { return nil })
	return checked, failures
}

func sshKeyState(k *hcloud.SSHKey) resource.PropertyMap {
	return resource.PropertyMap{
		"name":        strProp(k.Name),
		"publicKey":   strProp(k.PublicKey),
		"labels":      strMapProp(k.Labels),
		"fingerprint": strProp(k.Fingerprint),
	}
}

func (sshKeyResource) create(ctx context.Context, c *hcloud.Client, _ *catalogue, _ warnFunc, news resource.PropertyMap,
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
	return formatID(key.ID), sshKeyState(key), nil
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
	return sshKeyState(key), nil
}

func (sshKeyResource) update(ctx context.Context, c *hcloud.Client, _ *catalogue, _ warnFunc, id string,
	olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	kid, err := parseID("SSH key", id)
	if err != nil {
		return nil, err
	}
	o, n := view(revealMap(olds)), view(revealMap(news))
	opts := hcloud.SSHKeyUpdateOpts{}
	if n.str("name") != o.str("name") {
		opts.Name = n.str("name")
	}
	if !labelsEqual(n.strMap("labels"), o.strMap("labels")) {
		opts.Labels = n.strMap("labels")
	}
	key, _, err := c.SSHKey.Update(ctx, &hcloud.SSHKey{ID: kid}, opts)
	if isNotFound(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("updating SSH key %q (%s): %w", n.str("name"), id, apiError(err))
	}
	return sshKeyState(key), nil
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
