package main

// The behaviours that meet the API, against the project's emulator (python -m emulator, a
// real HTTP server on loopback, started from the project's .venv): the plugin's own gRPC
// methods are called as the engine calls them.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

const testToken = "orca-test-token-000000000000000000000000000000000000000000000000"

// emulator is a running `python -m emulator`.
type emulator struct {
	url     string // .../v1
	control string // .../_emulator
}

func startEmulator(t *testing.T) *emulator {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("the emulator needs the project's virtualenv (scripts/bootstrap): %v", err)
	}
	cmd := exec.Command(python, "-m", "emulator", "--port", "0", "--token", testToken, "--quiet",
		"--boot-seconds", "0.05", "--action-seconds", "0.05")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case url := <-lines:
		if !strings.HasSuffix(url, "/v1") {
			t.Fatalf("the emulator did not start: %q %s", url, stderr.String())
		}
		return &emulator{url: url, control: strings.TrimSuffix(url, "/v1") + "/_emulator"}
	case <-time.After(30 * time.Second):
		t.Fatalf("the emulator printed no URL: %s", stderr.String())
	}
	return nil
}

func (e *emulator) put(t *testing.T, path string, body any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPut, e.control+path, bytes.NewReader(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %v %v", path, resp, err)
	}
	resp.Body.Close()
}

func (e *emulator) routes(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(e.control + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var counts struct {
		Routes map[string]int `json:"routes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&counts); err != nil {
		t.Fatal(err)
	}
	return counts.Routes
}

func (e *emulator) client() *hcloud.Client {
	return hcloud.NewClient(hcloud.WithToken(testToken), hcloud.WithEndpoint(e.url),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(20 * time.Millisecond)}))
}

// underTest is the stand-in configured against an emulator, with the warnings it gave.
type underTest struct {
	*hcloudProvider
	mu       sync.Mutex
	warnings []string
}

func configured(t *testing.T, e *emulator) *underTest {
	t.Helper()
	p := &underTest{hcloudProvider: newProvider(nil)}
	p.warned = func(_, msg string) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.warnings = append(p.warnings, msg)
	}
	args := wire(t, resource.PropertyMap{
		"token": strProp(testToken), "endpoint": strProp(e.url), "pollInterval": strProp("20ms"),
	})
	if _, err := p.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	return p
}

func wire(t *testing.T, m resource.PropertyMap) *structpb.Struct {
	t.Helper()
	s, err := marshal(m, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func urnOf(token, name string) string { return "urn:pulumi:test::p::" + token + "::" + name }

// create runs Check, then Create, as `pulumi up` does; the id and outputs.
func (p *underTest) create(t *testing.T, token, name string, inputs resource.PropertyMap) (string, resource.PropertyMap, error) {
	t.Helper()
	urn := urnOf(token, name)
	checked, err := p.Check(context.Background(), &pulumirpc.CheckRequest{Urn: urn, News: wire(t, inputs)})
	if err != nil || len(checked.GetFailures()) > 0 {
		t.Fatalf("Check: %v %v", checked.GetFailures(), err)
	}
	resp, err := p.Create(context.Background(), &pulumirpc.CreateRequest{Urn: urn, Properties: checked.GetInputs()})
	if err != nil {
		return "", nil, err
	}
	out, _ := unmarshal(resp.GetProperties(), "test")
	return resp.GetId(), out, nil
}

func (p *underTest) update(t *testing.T, token, name, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	t.Helper()
	urn := urnOf(token, name)
	checked, err := p.Check(context.Background(), &pulumirpc.CheckRequest{Urn: urn, Olds: wire(t, olds), News: wire(t, news)})
	if err != nil || len(checked.GetFailures()) > 0 {
		t.Fatalf("Check: %v %v", checked.GetFailures(), err)
	}
	resp, err := p.Update(context.Background(), &pulumirpc.UpdateRequest{
		Urn: urn, Id: id, Olds: wire(t, olds), News: checked.GetInputs(),
	})
	if err != nil {
		return nil, err
	}
	out, _ := unmarshal(resp.GetProperties(), "test")
	return out, nil
}

func server(name, serverType string) resource.PropertyMap {
	return resource.PropertyMap{
		"name": strProp(name), "serverType": strProp(serverType), "image": strProp("ubuntu-24.04"),
		"location": strProp("fsn1"), "labels": strMapProp(map[string]string{"orca": "pool"}),
	}
}

func TestAServerTypeChangeResizesTheSameServer(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	id, state, err := p.create(t, serverToken, "web", server("web", "cx23"))
	if err != nil {
		t.Fatal(err)
	}
	news := server("web", "cx33")
	out, err := p.update(t, serverToken, "web", id, state, news)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	s, _, _ := e.client().Server.GetByID(context.Background(), int64(mustID(t, id)))
	if s == nil || s.ServerType.Name != "cx33" || s.Status != hcloud.ServerStatusRunning || s.PrimaryDiskSize != 80 {
		t.Fatalf("after the update the server is %+v", s)
	}
	if out["serverType"].StringValue() != "cx33" || out["ipv4Address"].StringValue() != state["ipv4Address"].StringValue() {
		t.Fatalf("outputs %v", out)
	}
	var commands []string
	actions, _ := e.client().Server.Action.All(context.Background(), hcloud.ActionListOpts{})
	for _, a := range actions {
		commands = append(commands, a.Command)
	}
	if !slices.Contains(commands, "stop_server") || !slices.Contains(commands, "change_server_type") {
		t.Fatalf("the server's actions were %v", commands)
	}
}

func TestKeepDiskKeepsTheDiskSoASmallerTypeStaysPossible(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	id, state, err := p.create(t, serverToken, "web", server("web", "cx23"))
	if err != nil {
		t.Fatal(err)
	}
	bigger := server("web", "cx43")
	bigger["keepDisk"] = boolProp(true)
	state, err = p.update(t, serverToken, "web", id, state, bigger)
	if err != nil || state["primaryDiskSize"].NumberValue() != 40 {
		t.Fatalf("up with keepDisk: %v %v", state["primaryDiskSize"], err)
	}
	if _, err := p.update(t, serverToken, "web", id, state, server("web", "cx23")); err != nil {
		t.Fatalf("back down: %v", err)
	}
}

func TestAnArchitectureChangeIsRefusedBeforeAnythingIsTouched(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	id, state, err := p.create(t, serverToken, "web", server("web", "cx23"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.update(t, serverToken, "web", id, state, server("web", "cax11"))
	if err == nil || !strings.Contains(err.Error(), "refused before anything is touched") ||
		!strings.Contains(err.Error(), "incompatible architecture") {
		t.Fatalf("update to another architecture: %v", err)
	}
	if n := e.routes(t)["POST /v1/servers/{id}/actions/poweroff"]; n != 0 {
		t.Fatalf("the server was powered off %d times", n)
	}
	s, _, _ := e.client().Server.GetByID(context.Background(), int64(mustID(t, id)))
	if s.Status != hcloud.ServerStatusRunning || s.ServerType.Name != "cx23" {
		t.Fatalf("the server is now %s %s", s.Status, s.ServerType.Name)
	}
}

func TestDeletingAFirewallRemovesItFromEverythingFirst(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	c := e.client()
	ctx := context.Background()
	fid, _, err := p.create(t, firewallToken, "fw", resource.PropertyMap{"name": strProp("fw")})
	if err != nil {
		t.Fatal(err)
	}
	// A server the runtime made with ORCA_HCLOUD_FIREWALL, and a label selector.
	img, _, _ := c.Image.GetForArchitecture(ctx, "ubuntu-24.04", hcloud.ArchitectureX86)
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{
		Name: "autoscaled", ServerType: &hcloud.ServerType{Name: "cx23"}, Image: img,
		Firewalls: []*hcloud.ServerCreateFirewall{{Firewall: hcloud.Firewall{ID: int64(mustID(t, fid))}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	actions, _, err := c.Firewall.ApplyResources(ctx, &hcloud.Firewall{ID: int64(mustID(t, fid))}, []hcloud.FirewallResource{{
		Type: hcloud.FirewallResourceTypeLabelSelector, LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "orca=pool"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Action.WaitFor(ctx, append(actions, res.Action)...)

	if _, err := p.Delete(ctx, &pulumirpc.DeleteRequest{Urn: urnOf(firewallToken, "fw"), Id: fid}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if f, _, _ := c.Firewall.GetByID(ctx, int64(mustID(t, fid))); f != nil {
		t.Fatal("the firewall is still there")
	}
	if s, _, _ := c.Server.GetByID(ctx, res.Server.ID); len(s.PublicNet.Firewalls) != 0 {
		t.Fatalf("the server keeps %v", s.PublicNet.Firewalls)
	}
}

func TestFirewallAddressesAndAnEmptyRuleSet(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	rules := rulesProp([]rule{{direction: "in", protocol: "tcp", port: "22", sourceIPs: []string{"203.0.113.7", "2001:db8::1"}}})
	fid, state, err := p.create(t, firewallToken, "fw", resource.PropertyMap{"name": strProp("fw"), "rules": rules})
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := e.client().Firewall.GetByID(context.Background(), int64(mustID(t, fid)))
	if got := rulesFromAPI(f.Rules)[0].sourceIPs; !slices.Equal(got, []string{"203.0.113.7/32", "2001:db8::1/128"}) {
		t.Fatalf("the API got %v", got)
	}
	if _, err := p.update(t, firewallToken, "fw", fid, state, resource.PropertyMap{
		"name": strProp("fw"), "rules": rulesProp(nil),
	}); err != nil {
		t.Fatal(err)
	}
	f, _, _ = e.client().Firewall.GetByID(context.Background(), int64(mustID(t, fid)))
	if len(f.Rules) != 1 {
		t.Fatalf("no rules must leave the rules in place, the firewall has %v", f.Rules)
	}
}

func TestDeprecationsAtCreate(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)

	image := server("old-image", "cx23")
	image["image"] = strProp("fedora-41")
	if _, _, err := p.create(t, serverToken, "old-image", image); err != nil {
		t.Fatalf("a deprecated image only warns: %v", err)
	}
	inSin := server("in-sin", "cpx12")
	inSin["location"] = strProp("sin")
	if _, _, err := p.create(t, serverToken, "in-sin", inSin); err != nil {
		t.Fatalf("a type deprecated in the location but still sold there only warns: %v", err)
	}
	p.mu.Lock()
	warnings := strings.Join(p.warnings, "\n")
	p.mu.Unlock()
	if !strings.Contains(warnings, `Image "fedora-41" is deprecated`) || !strings.Contains(warnings, `deprecated in "sin"`) {
		t.Fatalf("warnings: %s", warnings)
	}

	inHil := server("in-hil", "ccx13")
	inHil["location"] = strProp("hil")
	_, _, err := p.create(t, serverToken, "in-hil", inHil)
	if err == nil || !strings.Contains(err.Error(), `unavailable in "hil"`) {
		t.Fatalf("a type no longer sold in the location: %v", err)
	}
	if n := e.routes(t)["POST /v1/servers"]; n != 2 {
		t.Fatalf("%d creates reached the API, want 2 (none for hil)", n)
	}
	for route := range e.routes(t) {
		if strings.Contains(route, "datacenters") {
			t.Fatalf("the plugin asked %s", route)
		}
	}
}

func TestAFailedCreateActionKeepsTheServerInTheState(t *testing.T) {
	e := startEmulator(t)
	p := configured(t, e)
	e.put(t, "/action_failures", []map[string]any{{"command": "create_server"}})

	_, _, err := p.create(t, serverToken, "web", server("web", "cx23"))
	st, _ := status.FromError(err)
	var id string
	for _, d := range st.Details() {
		if f, ok := d.(*pulumirpc.ErrorResourceInitFailed); ok {
			id = f.GetId()
		}
	}
	if err == nil || id == "" || !strings.Contains(err.Error(), "Action failed") {
		t.Fatalf("a failed create action must report the server it made: %v (id %q)", err, id)
	}
}

func mustID(t *testing.T, id string) int64 {
	t.Helper()
	n, err := parseID("resource", id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
