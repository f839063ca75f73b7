package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

// parseID reads a numeric Hetzner ID from a Pulumi resource ID.
func parseID(kind, id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s ID %q is not a Hetzner Cloud ID (a positive integer)", kind, id)
	}
	return n, nil
}

func formatID(n int64) string { return strconv.FormatInt(n, 10) }

// fetch reads one resource by its Pulumi ID; a resource that is gone is errNotFound, so
// Read can tell the engine to drop it from the state.
func fetch[T any](ctx context.Context, kind, id string,
	get func(context.Context, int64) (*T, *hcloud.Response, error),
) (*T, error) {
	n, err := parseID(kind, id)
	if err != nil {
		return nil, err
	}
	return getByID(ctx, n, get, fmt.Sprintf("reading %s %s", kind, id))
}

// getByID reads one resource by its Hetzner ID: a resource that is gone is errNotFound (as it
// is); an error is explained (apiError) and, unless doing is "", prefixed with doing.
func getByID[T any](ctx context.Context, id int64,
	get func(context.Context, int64) (*T, *hcloud.Response, error), doing string,
) (*T, error) {
	found, _, err := get(ctx, id)
	if err != nil {
		if doing == "" {
			return nil, apiError(err)
		}
		return nil, fmt.Errorf("%s: %w", doing, apiError(err))
	}
	if found == nil {
		return nil, errNotFound
	}
	return found, nil
}

// waitFor waits for the actions that are not nil to finish; a failed action is an error.
func waitFor(ctx context.Context, c *hcloud.Client, what string, actions ...*hcloud.Action) error {
	var live []*hcloud.Action
	for _, a := range actions {
		if a != nil {
			live = append(live, a)
		}
	}
	if len(live) == 0 {
		return nil
	}
	if err := c.Action.WaitFor(ctx, live...); err != nil {
		return fmt.Errorf("%s: waiting for its actions: %w", what, apiError(err))
	}
	return nil
}

// apiError explains cancellation and timeouts; API errors pass unchanged (message, code and
// the correlation ID Hetzner support asks for).
func apiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("cancelled: %w", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("timed out (customTimeouts can allow more time): %w", err)
	}
	return err
}

func isNotFound(err error) bool { return hcloud.IsError(err, hcloud.ErrorCodeNotFound) }

// sleep waits d, or less when ctx ends (then it returns ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// autoname gives a resource its name when the program gave none: the old one on an update,
// else the engine's proposal, else <resource name>-<7 hex characters> (Pulumi's default).
func autoname(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap) *pulumirpc.CheckFailure {
	if v, ok := news["name"]; ok && !v.IsNull() {
		return nil
	}
	if v, ok := olds["name"]; ok && !v.IsNull() {
		news["name"] = v
		return nil
	}
	if a := req.GetAutonaming(); a != nil {
		if a.GetMode() == pulumirpc.CheckRequest_AutonamingOptions_DISABLE {
			return failure("name", "name is required (autonaming is disabled)")
		}
		news["name"] = strProp(a.GetProposedName())
		return nil
	}
	base := req.GetName()
	if base == "" {
		base = resource.URN(req.GetUrn()).Name()
	}
	name, err := resource.NewUniqueName(req.GetRandomSeed(), base+"-", 7, 0, nil)
	if err != nil {
		return failure("name", "%v", err)
	}
	news["name"] = strProp(name)
	return nil
}

var hostnamePattern = regexp.MustCompile(
	`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// checkInputs is the part of Check every resource shares: it fills in the name (autoname),
// runs the resource's own checks (own) on the revealed inputs, then checks the labels. It
// returns the checked inputs, also revealed (n), and the failures in that order.
func checkInputs(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
	own func(n view) []*pulumirpc.CheckFailure,
) (checked resource.PropertyMap, n view, failures []*pulumirpc.CheckFailure) {
	checked = copyMap(news)
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	n = view(revealMap(checked))
	failures = append(failures, own(n)...)
	if n.known("labels") {
		if f := checkLabels(n.strMap("labels")); f != nil {
			failures = append(failures, f)
		}
	}
	return checked, n, failures
}

// checkLabels validates labels as the API does (hcloud-go's own rules).
func checkLabels(labels map[string]string) *pulumirpc.CheckFailure {
	if len(labels) == 0 {
		return nil
	}
	m := make(map[string]any, len(labels))
	for k, v := range labels {
		m[k] = v
	}
	if ok, err := hcloud.ValidateResourceLabels(m); !ok {
		return failure("labels", "%v", err)
	}
	return nil
}

func labelsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// copyMap is a shallow copy of a property map.
func copyMap(m resource.PropertyMap) resource.PropertyMap {
	out := make(resource.PropertyMap, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// withDefaults sets each key of defaults that m lacks and returns m (a create's preview: the
// inputs, plus what the provider fills in or will know only then).
func withDefaults(m, defaults resource.PropertyMap) resource.PropertyMap {
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	return m
}

// updatePreview is what an update reports in preview: the old state, with each input the update
// changes in place (inPlace) as news has it; one news lacks keeps its old value, unless cleared
// has the value the update leaves it at.
func updatePreview(olds, news resource.PropertyMap, inPlace []resource.PropertyKey,
	cleared resource.PropertyMap,
) resource.PropertyMap {
	out := copyMap(olds)
	for _, k := range inPlace {
		if v, ok := news[k]; ok {
			out[k] = v
		} else if v, ok := cleared[k]; ok {
			out[k] = v
		}
	}
	return out
}

func dateOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
