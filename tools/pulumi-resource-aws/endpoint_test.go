package main

// The stand-in talks to loopback test endpoints only: anything else is refused in Configure,
// before any request, in one line naming the official plugin.

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func TestIsLoopbackURL(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:5000":                   true,
		"http://127.8.9.10":                       true,
		"http://[::1]:5000/":                      true,
		"http://localhost:5000":                   true,
		"https://LOCALHOST":                       true,
		"https://ec2.eu-central-1.amazonaws.com":  false,
		"http://10.0.0.5:5000":                    false,
		"http://127.0.0.1.nip.io:5000":            false,
		"http://localhost.example.com":            false,
		"http://[::ffff:10.0.0.1]:80":             false,
		"127.0.0.1:5000":                          false,
		"":                                        false,
		"http://moto:5000":                        false,
		"https://sts.us-east-1.amazonaws.com:443": false,
	} {
		if got := isLoopbackURL(raw); got != want {
			t.Errorf("isLoopbackURL(%q) = %v, want %v", raw, got, want)
		}
	}
}

// clearEndpointEnv leaves the test's own configuration as the only source of endpoints.
func clearEndpointEnv(t *testing.T) {
	t.Helper()
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	for _, v := range []string{"AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2",
		"AWS_ENDPOINT_URL_IAM", "AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_EVENTBRIDGE",
		"AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(v, "")
	}
}

// counting is an HTTP server on loopback that counts the requests it gets (it must get none).
func counting(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), &n
}

func configure(t *testing.T, endpoints []map[string]string) error {
	t.Helper()
	cfg := resource.PropertyMap{
		"region":    strProp("eu-central-1"),
		"accessKey": strProp("testing"),
		"secretKey": strProp("testing"),
		"version":   strProp("7.51.1"),
	}
	if endpoints != nil {
		raw, _ := json.Marshal(endpoints)
		cfg["endpoints"] = strProp(string(raw))
	}
	args, err := marshal(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, err = newProvider(nil).Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: args})
	return err
}

func wantRefusal(t *testing.T, err error, service, endpoint string) {
	t.Helper()
	if err == nil {
		t.Fatalf("configured with %s at %s: want a refusal", service, endpoint)
	}
	msg := err.Error()
	for _, part := range []string{standIn, "refuses the " + service + " endpoint " + endpoint,
		"pulumi plugin install resource aws 7.51.1"} {
		if !strings.Contains(msg, part) {
			t.Errorf("refusal %q does not say %q", msg, part)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal is not one line: %q", msg)
	}
}

func TestConfigureRefusesAWSItselfBeforeAnyRequest(t *testing.T) {
	clearEndpointEnv(t)
	// No endpoints at all: the SDK would call AWS's own.
	wantRefusal(t, configure(t, nil), "ec2", "https://ec2.eu-central-1.amazonaws.com")
}

func TestConfigureRefusesANonLoopbackEndpointEvenWithTheOthersOnLoopback(t *testing.T) {
	clearEndpointEnv(t)
	local, hits := counting(t)
	err := configure(t, []map[string]string{{"ec2": local, "iam": local, "sts": "https://sts.eu-central-1.amazonaws.com"}})
	wantRefusal(t, err, "sts", "https://sts.eu-central-1.amazonaws.com")
	if hits.Load() != 0 {
		t.Fatalf("the refused configuration made %d requests", hits.Load())
	}
	err = configure(t, []map[string]string{{"ec2": "http://10.1.2.3:5000", "iam": local, "sts": local}})
	wantRefusal(t, err, "ec2", "http://10.1.2.3:5000")
	if hits.Load() != 0 {
		t.Fatalf("the refused configuration made %d requests", hits.Load())
	}
}

func TestConfigureRefusesAnEnvironmentEndpointOffLoopback(t *testing.T) {
	clearEndpointEnv(t)
	local, hits := counting(t)
	t.Setenv("AWS_ENDPOINT_URL", local)
	t.Setenv("AWS_ENDPOINT_URL_EC2", "https://ec2.example.com")
	wantRefusal(t, configure(t, nil), "ec2", "https://ec2.example.com")
	if hits.Load() != 0 {
		t.Fatalf("the refused configuration made %d requests", hits.Load())
	}
}

func TestConfigureTakesLoopbackEndpointsFromConfigAndEnvironment(t *testing.T) {
	clearEndpointEnv(t)
	local, hits := counting(t)
	// aws:endpoints for EC2 and IAM, AWS_ENDPOINT_URL for STS: all on loopback, so the
	// provider goes on to validate the credentials with STS (which this server refuses).
	t.Setenv("AWS_ENDPOINT_URL", local)
	err := configure(t, []map[string]string{{"ec2": local, "iam": strings.Replace(local, "127.0.0.1", "localhost", 1)}})
	if err == nil || strings.Contains(err.Error(), "refuses the") {
		t.Fatalf("loopback endpoints are taken: %v", err)
	}
	if hits.Load() == 0 {
		t.Fatal("the loopback STS endpoint got no request")
	}
}
