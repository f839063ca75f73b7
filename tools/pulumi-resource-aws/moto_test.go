package main

// Test tools: moto's server as a separate process on loopback (started once, reset per test),
// and a harness that drives the provider's gRPC methods the way the engine does.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/protobuf/types/known/structpb"
)

const (
	testRegion   = "eu-central-1"
	canonical    = "099720109477"
	oldAMD64     = "ami-0a0a0a0a0a0a00001"
	newAMD64     = "ami-0a0a0a0a0a0a00002"
	newARM64     = "ami-0b0b0b0b0b0b00002"
	motoStartMax = 60 * time.Second
)

var moto struct {
	once sync.Once
	url  string
	cmd  *exec.Cmd
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if moto.cmd != nil && moto.cmd.Process != nil {
		_ = moto.cmd.Process.Kill()
		_ = moto.cmd.Wait()
	}
	if moto.dir != "" {
		_ = os.RemoveAll(moto.dir)
	}
	os.Exit(code)
}

// projectPython is the project's virtualenv interpreter (moto is one of its dev dependencies).
func projectPython() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, ".venv", "bin", "python")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no .venv/bin/python above the test's directory: run scripts/bootstrap first")
		}
		dir = parent
	}
}

func ubuntuImage(id, arch, day string) map[string]any {
	name := fmt.Sprintf("ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-%s-server-%s", arch, day)
	a := "x86_64"
	if arch == "arm64" {
		a = "arm64"
	}
	return map[string]any{
		"ami_id": id, "state": "available", "public": true, "owner_id": canonical,
		"image_location": "amazon/" + name, "sriov": "simple", "root_device_type": "ebs",
		"root_device_name": "/dev/sda1", "description": "Canonical, Ubuntu, 24.04 noble image",
		"image_type": "machine", "platform": nil, "architecture": a, "name": name,
		"virtualization_type": "hvm", "hypervisor": "xen",
		"creation_date": fmt.Sprintf("%s-%s-%sT08:00:00.000Z", day[:4], day[4:6], day[6:]),
	}
}

// motoURL starts moto's server once (Canonical's Ubuntu images only) and resets it.
func motoURL(t *testing.T) string {
	t.Helper()
	moto.once.Do(func() {
		python, err := projectPython()
		if err != nil {
			moto.err = err
			return
		}
		moto.dir, err = os.MkdirTemp("", "moto-")
		if err != nil {
			moto.err = err
			return
		}
		images, _ := json.Marshal([]any{
			ubuntuImage(newAMD64, "amd64", "20250610"),
			ubuntuImage(oldAMD64, "amd64", "20240423"),
			ubuntuImage(newARM64, "arm64", "20250610"),
		})
		amis := filepath.Join(moto.dir, "amis.json")
		if moto.err = os.WriteFile(amis, images, 0o600); moto.err != nil {
			return
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			moto.err = err
			return
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		log, err := os.Create(filepath.Join(moto.dir, "moto.log"))
		if err != nil {
			moto.err = err
			return
		}
		// moto's server with the spot interruption it lacks (testkit/moto_spot.py, beside .venv).
		server := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(python))), "testkit", "moto_spot.py")
		cmd := exec.Command(python, server, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
		cmd.Env = append(os.Environ(), "MOTO_AMIS_PATH="+amis, "MOTO_ENABLE_AMI_VALIDATION=true",
			"MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION=true")
		cmd.Stdout, cmd.Stderr = log, log
		// moto dies with the test process, however that ends.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if moto.err = cmd.Start(); moto.err != nil {
			return
		}
		moto.cmd = cmd
		moto.url = fmt.Sprintf("http://127.0.0.1:%d", port)
		deadline := time.Now().Add(motoStartMax)
		for time.Now().Before(deadline) {
			if resp, err := http.Get(moto.url + "/moto-api/"); err == nil {
				_ = resp.Body.Close()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		out, _ := os.ReadFile(filepath.Join(moto.dir, "moto.log"))
		moto.err = fmt.Errorf("moto's server did not answer within %s:\n%s", motoStartMax, out)
	})
	if moto.err != nil {
		t.Fatalf("starting moto's server: %v", moto.err)
	}
	resp, err := http.Post(moto.url+"/moto-api/reset", "application/json", nil)
	if err != nil {
		t.Fatalf("resetting moto: %v", err)
	}
	_ = resp.Body.Close()
	return moto.url
}

// harness drives one configured provider as the engine does.
type harness struct {
	t   *testing.T
	p   *awsProvider
	c   *clients
	url string
}

func testConfig(url string) resource.PropertyMap {
	endpoints, _ := json.Marshal([]map[string]string{{"ec2": url, "iam": url, "sts": url, "sqs": url, "events": url}})
	return resource.PropertyMap{
		"region":    strProp(testRegion),
		"accessKey": strProp("testing"),
		"secretKey": strProp("testing"),
		"endpoints": strProp(string(endpoints)), // as a default provider gets it: JSON in a string
		"version":   strProp("7.51.1"),
	}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	url := motoURL(t)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	for _, v := range []string{"AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(v, "")
	}
	p := newProvider(nil)
	args, err := marshal(testConfig(url), "test")
	if err != nil {
		t.Fatal(err)
	}
	checked, err := p.CheckConfig(context.Background(), &pulumirpc.CheckRequest{News: args})
	if err != nil || len(checked.Failures) > 0 {
		t.Fatalf("CheckConfig: %v %v", err, checked.GetFailures())
	}
	if _, err := p.Configure(context.Background(), &pulumirpc.ConfigureRequest{Args: checked.Inputs}); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	c, _ := p.state()
	return &harness{t: t, p: p, c: c, url: url}
}

func urn(typ, name string) string {
	return fmt.Sprintf("urn:pulumi:test::orca::%s::%s", typ, name)
}

// interrupt ends a spot instance as EC2 does when it takes the capacity back (moto itself cannot).
func (h *harness) interrupt(id string) {
	h.t.Helper()
	resp, err := http.PostForm(moto.url+"/orca-test/spot-interruption",
		url.Values{"InstanceId": {id}, "Region": {"eu-central-1"}})
	if err != nil {
		h.t.Fatalf("interrupting %s: %v", id, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("interrupting %s: %s", id, resp.Status)
	}
}

func (h *harness) mustMarshal(m resource.PropertyMap) *structpb.Struct {
	s, err := marshal(m, "test")
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) mustUnmarshal(s *structpb.Struct) resource.PropertyMap {
	m, err := unmarshal(s, "test")
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// check runs Check and fails the test on failures.
func (h *harness) check(typ, name string, olds, news resource.PropertyMap) resource.PropertyMap {
	h.t.Helper()
	checked, failures := h.checkFailures(typ, name, olds, news)
	if len(failures) > 0 {
		h.t.Fatalf("Check %s: %v", name, failures)
	}
	return checked
}

func (h *harness) checkFailures(typ, name string, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	h.t.Helper()
	resp, err := h.p.Check(context.Background(), &pulumirpc.CheckRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Olds: h.mustMarshal(olds), News: h.mustMarshal(news),
		RandomSeed: []byte("seed"),
	})
	if err != nil {
		h.t.Fatalf("Check %s: %v", name, err)
	}
	return h.mustUnmarshal(resp.Inputs), resp.Failures
}

func (h *harness) create(typ, name string, inputs resource.PropertyMap) (string, resource.PropertyMap) {
	h.t.Helper()
	resp, err := h.p.Create(context.Background(), &pulumirpc.CreateRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Properties: h.mustMarshal(inputs),
	})
	if err != nil {
		h.t.Fatalf("Create %s: %v", name, err)
	}
	return resp.Id, h.mustUnmarshal(resp.Properties)
}

func (h *harness) diff(typ, name, id string, state, inputs resource.PropertyMap, ignore ...string) *pulumirpc.DiffResponse {
	h.t.Helper()
	resp, err := h.p.Diff(context.Background(), &pulumirpc.DiffRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Id: id,
		Olds: h.mustMarshal(state), News: h.mustMarshal(inputs), IgnoreChanges: ignore,
	})
	if err != nil {
		h.t.Fatalf("Diff %s: %v", name, err)
	}
	return resp
}

func (h *harness) update(typ, name, id string, state, inputs resource.PropertyMap) resource.PropertyMap {
	h.t.Helper()
	resp, err := h.p.Update(context.Background(), &pulumirpc.UpdateRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Id: id,
		Olds: h.mustMarshal(state), News: h.mustMarshal(inputs),
	})
	if err != nil {
		h.t.Fatalf("Update %s: %v", name, err)
	}
	return h.mustUnmarshal(resp.Properties)
}

// read returns the refreshed state and inputs, or nils when the resource is gone.
func (h *harness) read(typ, name, id string, state, inputs resource.PropertyMap) (resource.PropertyMap, resource.PropertyMap) {
	h.t.Helper()
	resp, err := h.p.Read(context.Background(), &pulumirpc.ReadRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Id: id,
		Properties: h.mustMarshal(state), Inputs: h.mustMarshal(inputs),
	})
	if err != nil {
		h.t.Fatalf("Read %s: %v", name, err)
	}
	if resp.Id == "" {
		return nil, nil
	}
	return h.mustUnmarshal(resp.Properties), h.mustUnmarshal(resp.Inputs)
}

func (h *harness) delete(typ, name, id string, state resource.PropertyMap) {
	h.t.Helper()
	if _, err := h.p.Delete(context.Background(), &pulumirpc.DeleteRequest{
		Urn: urn(typ, name), Type: typ, Name: name, Id: id, Properties: h.mustMarshal(state),
	}); err != nil {
		h.t.Fatalf("Delete %s: %v", name, err)
	}
}

func (h *harness) invoke(tok string, args resource.PropertyMap) (resource.PropertyMap, error) {
	resp, err := h.p.Invoke(context.Background(), &pulumirpc.InvokeRequest{Tok: tok, Args: h.mustMarshal(args)})
	if err != nil {
		return nil, err
	}
	if len(resp.Failures) > 0 {
		return nil, fmt.Errorf("failures: %v", resp.Failures)
	}
	return h.mustUnmarshal(resp.Return), nil
}

// network makes a VPC with a subnet in the region's first zone, outside the provider.
func (h *harness) network() (vpc, subnet string) {
	h.t.Helper()
	ctx := context.Background()
	v, err := h.c.ec2.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := h.c.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{
		VpcId: v.Vpc.VpcId, CidrBlock: aws.String("10.0.1.0/24"), AvailabilityZone: aws.String(testRegion + "a"),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return aws.ToString(v.Vpc.VpcId), aws.ToString(s.Subnet.SubnetId)
}
