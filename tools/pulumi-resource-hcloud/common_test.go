package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestListLoadsOnceFindsAndNames(t *testing.T) {
	loads := 0
	fail := true
	l := list[hcloud.Location]{
		load: func(context.Context) ([]*hcloud.Location, error) {
			loads++
			if fail {
				return nil, errors.New("unreachable")
			}
			return []*hcloud.Location{{ID: 2, Name: "nbg1"}, {ID: 1, Name: "fsn1"}}, nil
		},
		key: func(l *hcloud.Location) (int64, string) { return l.ID, l.Name },
	}
	ctx := context.Background()

	// An error is not kept: the next call asks again.
	if _, err := l.find(ctx, "fsn1"); err == nil {
		t.Fatal("want the load's error")
	}
	if names := l.names(ctx); len(names) != 0 {
		t.Fatalf("names of an unreadable list: %v", names)
	}
	fail = false
	for _, idOrName := range []string{"fsn1", "1"} {
		got, err := l.find(ctx, idOrName)
		if err != nil || got == nil || got.Name != "fsn1" {
			t.Fatalf("find(%q) = %v, %v", idOrName, got, err)
		}
	}
	if got, err := l.find(ctx, "hel1"); got != nil || err != nil {
		t.Fatalf("find(hel1) = %v, %v; want none", got, err)
	}
	if names := l.names(ctx); !slices.Equal(names, []string{"fsn1", "nbg1"}) {
		t.Fatalf("names %v", names)
	}
	if loads != 3 { // two failed, one kept
		t.Fatalf("loaded %d times, want 3", loads)
	}
}

func TestGetByID(t *testing.T) {
	ctx := context.Background()
	type thing struct{ id int64 }
	found := func(_ context.Context, id int64) (*thing, *hcloud.Response, error) { return &thing{id}, nil, nil }
	gone := func(context.Context, int64) (*thing, *hcloud.Response, error) { return nil, nil, nil }
	broken := func(context.Context, int64) (*thing, *hcloud.Response, error) {
		return nil, nil, context.DeadlineExceeded
	}

	if got, err := getByID(ctx, 7, found, "reading thing 7"); err != nil || got.id != 7 {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := getByID(ctx, 7, gone, "reading thing 7"); err != errNotFound {
		t.Fatalf("a gone resource: %v, want errNotFound itself", err)
	}
	_, err := getByID(ctx, 7, broken, "reading thing 7")
	if !errors.Is(err, context.DeadlineExceeded) ||
		!strings.HasPrefix(err.Error(), "reading thing 7: timed out") {
		t.Fatalf("got %v", err)
	}
	if _, err := getByID(ctx, 7, broken, ""); !strings.HasPrefix(err.Error(), "timed out") {
		t.Fatalf("without doing: %v", err)
	}
	if _, err := fetch(ctx, "thing", "x", found); err == nil || !strings.Contains(err.Error(), "not a Hetzner Cloud ID") {
		t.Fatalf("fetch of a bad ID: %v", err)
	}
	if _, err := fetch(ctx, "thing", "7", broken); !strings.HasPrefix(err.Error(), "reading thing 7: ") {
		t.Fatalf("fetch: %v", err)
	}
}

func TestCheckInputsNamesThenOwnThenLabels(t *testing.T) {
	req := &pulumirpc.CheckRequest{Name: "web", RandomSeed: []byte("seed")}
	news := resource.PropertyMap{"labels": strMapProp(map[string]string{"bad key!": "x"})}
	checked, n, failures := checkInputs(req, nil, news, func(n view) []*pulumirpc.CheckFailure {
		if !strings.HasPrefix(n.str("name"), "web-") {
			t.Errorf("own checks see the inputs before autonaming: %v", n)
		}
		return []*pulumirpc.CheckFailure{failure("own", "own")}
	})
	if _, ok := news["name"]; ok {
		t.Fatal("checkInputs changed the given inputs")
	}
	if !strings.HasPrefix(checked["name"].StringValue(), "web-") || n.str("name") != checked["name"].StringValue() {
		t.Fatalf("name %v / %v", checked["name"], n.str("name"))
	}
	var props []string
	for _, f := range failures {
		props = append(props, f.Property)
	}
	if !slices.Equal(props, []string{"own", "labels"}) {
		t.Fatalf("failures on %v, want own then labels", props)
	}

	// Unknown labels are not checked; no failures is nil, as before.
	news = resource.PropertyMap{"name": strProp("x"), "labels": unknown()}
	if _, _, failures := checkInputs(req, nil, news, func(view) []*pulumirpc.CheckFailure { return nil }); failures != nil {
		t.Fatalf("failures %v", failures)
	}
}

func TestPreviewDefaults(t *testing.T) {
	m := withDefaults(resource.PropertyMap{"labels": strMapProp(map[string]string{"a": "b"})},
		resource.PropertyMap{"labels": strMapProp(nil), "rules": rulesProp(nil)})
	if len(m["labels"].ObjectValue()) != 1 || !m["rules"].IsArray() {
		t.Fatalf("got %v", m)
	}

	olds := resource.PropertyMap{
		"name": strProp("old"), "labels": strMapProp(map[string]string{"a": "b"}),
		"keepDisk": boolProp(true), "image": strProp("ubuntu"),
	}
	news := resource.PropertyMap{"name": strProp("new"), "image": strProp("debian")}
	out := updatePreview(olds, news, []resource.PropertyKey{"name", "labels", "keepDisk"},
		resource.PropertyMap{"labels": strMapProp(nil)})
	switch {
	case out["name"].StringValue() != "new":
		t.Fatalf("in-place input not taken from news: %v", out)
	case out["image"].StringValue() != "ubuntu":
		t.Fatalf("an input that replaces must keep its old value: %v", out)
	case len(out["labels"].ObjectValue()) != 0:
		t.Fatalf("absent labels must be cleared: %v", out)
	case !out["keepDisk"].BoolValue():
		t.Fatalf("an absent input without a cleared value keeps its old value: %v", out)
	case olds["name"].StringValue() != "old":
		t.Fatal("updatePreview changed olds")
	}
}

func TestDecodeRequests(t *testing.T) {
	props, err := marshal(resource.PropertyMap{"name": strProp("k")}, "test")
	if err != nil {
		t.Fatal(err)
	}
	r, olds, news, err := decodeChange("Diff", &pulumirpc.DiffRequest{Type: sshKeyToken, News: props})
	if err != nil || r != resourceTypes[sshKeyToken] || len(olds) != 0 || news["name"].StringValue() != "k" {
		t.Fatalf("decodeChange: %v %v %v %v", r, olds, news, err)
	}
	r, state, err := decodeState("Delete", &pulumirpc.DeleteRequest{
		Urn: "urn:pulumi:dev::p::" + firewallToken + "::fw", Properties: props,
	})
	if err != nil || r != resourceTypes[firewallToken] || state["name"].StringValue() != "k" {
		t.Fatalf("decodeState: %v %v %v", r, state, err)
	}
	_, _, err = decodeState("Create", &pulumirpc.CreateRequest{Type: "hcloud:index/volume:Volume"})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("an unknown type: %v", err)
	}
}

func TestStartNeedsAClient(t *testing.T) {
	p := newProvider(nil)
	if _, _, _, _, err := p.start(context.Background(), 0); status.Code(err) != codes.FailedPrecondition ||
		!strings.Contains(err.Error(), "not configured yet") {
		t.Fatalf("got %v", err)
	}
	p.configured, p.client = true, hcloud.NewClient()
	p.cat = newCatalogue(p.client)
	ctx, done, c, cat, err := p.start(context.Background(), 0)
	if err != nil || c != p.client || cat != p.cat {
		t.Fatalf("got %v %v %v", c, cat, err)
	}
	defer done()
	p.Cancel(context.Background(), nil)
	select { // Cancel ends it from another goroutine (context.AfterFunc)
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Cancel must end the operation's context")
	}
}

func TestComparisonsOfStringsTolerateOtherKinds(t *testing.T) {
	unknown := resource.MakeComputed(resource.NewStringProperty(""))
	if userDataEqual(unknown, resource.NewStringProperty("#cloud-config"), view{}) {
		t.Fatal("an unknown old value must not equal known user data")
	}
	if !userDataEqual(resource.NewNullProperty(), resource.NewStringProperty(""), view{}) {
		t.Fatal("no user data before and after must be equal")
	}
}
