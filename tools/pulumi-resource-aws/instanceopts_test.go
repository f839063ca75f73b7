package main

// rootBlockDevice, metadataOptions and instanceInitiatedShutdownBehavior: Check and Diff, from
// the inputs alone.

import (
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

func rootDisk() resource.PropertyMap {
	return resource.PropertyMap{
		"volumeSize": numProp(40), "volumeType": strProp("gp3"), "encrypted": boolProp(true),
	}
}

func imdsV2() resource.PropertyMap {
	return resource.PropertyMap{"httpTokens": strProp("required"), "httpPutResponseHopLimit": numProp(1)}
}

// optionsInputs are instanceInputs with the three options, as Check leaves them.
func optionsInputs(t *testing.T) resource.PropertyMap {
	t.Helper()
	in := instanceInputs()
	in["rootBlockDevice"] = resource.NewObjectProperty(rootDisk())
	in["metadataOptions"] = resource.NewObjectProperty(imdsV2())
	in["instanceInitiatedShutdownBehavior"] = strProp("terminate")
	checked, failures := instanceResource{}.check(nil, nil, in)
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	return checked
}

// optionsState is what EC2 reports for optionsInputs: every field, the computed ones too.
func optionsState(in resource.PropertyMap) resource.PropertyMap {
	st := instanceStateOfInputs(in)
	st["rootBlockDevice"] = resource.NewObjectProperty(resource.PropertyMap{
		"volumeSize": numProp(40), "volumeType": strProp("gp3"), "encrypted": boolProp(true),
		"iops": numProp(3000), "throughput": numProp(125), "deleteOnTermination": boolProp(true),
		"kmsKeyId":   strProp("arn:aws:kms:eu-central-1:123456789012:key/default"),
		"deviceName": strProp("/dev/sda1"), "volumeId": strProp("vol-1"),
	})
	st["metadataOptions"] = resource.NewObjectProperty(resource.PropertyMap{
		"httpTokens": strProp("required"), "httpPutResponseHopLimit": numProp(1), "httpEndpoint": strProp("enabled"),
		"httpProtocolIpv6": strProp("disabled"), "instanceMetadataTags": strProp("disabled"),
	})
	st["instanceInitiatedShutdownBehavior"] = strProp("terminate")
	return st
}

func TestCheckDefaultsDeleteOnTerminationToTrue(t *testing.T) {
	rbd := optionsInputs(t)["rootBlockDevice"].ObjectValue()
	if v := rbd["deleteOnTermination"]; !v.IsBool() || !v.BoolValue() {
		t.Fatalf("deleteOnTermination defaults to true, got %v", v)
	}
}

func TestOptionsFieldsLeftOutAreEC2sAndNeverDiff(t *testing.T) {
	in := optionsInputs(t)
	if d := instanceDiff(optionsState(in), in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("want no diff against its own state, got %v %v", d.Diffs, d.DetailedDiff)
	}
	// Left out entirely, each option keeps what the instance has (Optional and Computed).
	bare := instanceInputs()
	if d := instanceDiff(optionsState(in), bare); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("options left out: want no diff, got %v", d.Diffs)
	}
}

func TestEachOptionChangeIsInPlaceOrReplacesAsTheProviderSays(t *testing.T) {
	cases := map[string]struct {
		key     resource.PropertyKey
		field   string
		value   resource.PropertyValue
		path    string
		replace bool
	}{
		"volume size":           {"rootBlockDevice", "volumeSize", numProp(80), "rootBlockDevice.volumeSize", false},
		"volume type":           {"rootBlockDevice", "volumeType", strProp("io2"), "rootBlockDevice.volumeType", false},
		"iops":                  {"rootBlockDevice", "iops", numProp(6000), "rootBlockDevice.iops", false},
		"throughput":            {"rootBlockDevice", "throughput", numProp(250), "rootBlockDevice.throughput", false},
		"delete on termination": {"rootBlockDevice", "deleteOnTermination", boolProp(false), "rootBlockDevice.deleteOnTermination", false},
		"volume tags":           {"rootBlockDevice", "tags", strMapProp(map[string]string{"a": "b"}), "rootBlockDevice.tags", false},
		"encrypted":             {"rootBlockDevice", "encrypted", boolProp(false), "rootBlockDevice.encrypted", true},
		"kms key":               {"rootBlockDevice", "kmsKeyId", strProp("arn:aws:kms:eu-central-1:123456789012:key/mine"), "rootBlockDevice.kmsKeyId", true},
		"unknown kms key":       {"rootBlockDevice", "kmsKeyId", unknown(), "rootBlockDevice.kmsKeyId", true},
		"http tokens":           {"metadataOptions", "httpTokens", strProp("optional"), "metadataOptions.httpTokens", false},
		"hop limit":             {"metadataOptions", "httpPutResponseHopLimit", numProp(2), "metadataOptions.httpPutResponseHopLimit", false},
		"endpoint":              {"metadataOptions", "httpEndpoint", strProp("disabled"), "metadataOptions.httpEndpoint", false},
		"ipv6":                  {"metadataOptions", "httpProtocolIpv6", strProp("enabled"), "metadataOptions.httpProtocolIpv6", false},
		"metadata tags":         {"metadataOptions", "instanceMetadataTags", strProp("enabled"), "metadataOptions.instanceMetadataTags", false},
		"shutdown":              {"instanceInitiatedShutdownBehavior", "", strProp("stop"), "instanceInitiatedShutdownBehavior", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			in := optionsInputs(t)
			st := optionsState(in)
			if c.field == "" {
				in[c.key] = c.value
			} else {
				obj := copyMap(in[c.key].ObjectValue())
				obj[resource.PropertyKey(c.field)] = c.value
				in[c.key] = resource.NewObjectProperty(obj)
			}
			d := instanceDiff(st, in)
			if !slices.Equal(d.Diffs, []string{string(c.key)}) {
				t.Fatalf("diffs %v, want [%s]", d.Diffs, c.key)
			}
			pd, ok := d.DetailedDiff[c.path]
			if !ok || len(d.DetailedDiff) != 1 {
				t.Fatalf("detailed diff %v, want only %s", d.DetailedDiff, c.path)
			}
			kindReplaces := pd.Kind == pulumirpc.PropertyDiff_UPDATE_REPLACE || pd.Kind == pulumirpc.PropertyDiff_ADD_REPLACE
			if got := slices.Equal(d.Replaces, []string{string(c.key)}); got != c.replace || kindReplaces != c.replace {
				t.Fatalf("replaces %v (kind %v), want replace %v", d.Replaces, pd.Kind, c.replace)
			}
		})
	}
}

func TestIopsAndThroughputOfZeroOnAVolumeTypeWithoutThemAreNoChange(t *testing.T) {
	in := optionsInputs(t)
	st := optionsState(in)
	for _, k := range []resource.PropertyKey{"rootBlockDevice"} {
		obj := copyMap(in[k].ObjectValue())
		obj["volumeType"], obj["iops"], obj["throughput"] = strProp("gp2"), numProp(0), numProp(0)
		in[k] = resource.NewObjectProperty(obj)
	}
	stObj := copyMap(st["rootBlockDevice"].ObjectValue())
	stObj["volumeType"], stObj["iops"] = strProp("gp2"), numProp(120)
	delete(stObj, "throughput")
	st["rootBlockDevice"] = resource.NewObjectProperty(stObj)
	if d := instanceDiff(st, in); d.Changes != pulumirpc.DiffResponse_DIFF_NONE {
		t.Fatalf("want no diff (iopsDiffSuppressFunc), got %v", d.DetailedDiff)
	}
}

func TestOptionsAreCheckedAsTheProviderChecksThem(t *testing.T) {
	cases := map[string]struct {
		key   resource.PropertyKey
		value resource.PropertyValue
		want  string
	}{
		"shutdown": {"instanceInitiatedShutdownBehavior", strProp("hibernate"),
			"expected instanceInitiatedShutdownBehavior to be one of [stop terminate], got hibernate"},
		"volume type": {"rootBlockDevice", resource.NewObjectProperty(resource.PropertyMap{"volumeType": strProp("gp4")}),
			"expected rootBlockDevice.volumeType to be one of [standard io1 io2 gp2 sc1 st1 gp3], got gp4"},
		"tokens": {"metadataOptions", resource.NewObjectProperty(resource.PropertyMap{"httpTokens": strProp("always")}),
			"expected metadataOptions.httpTokens to be one of [optional required], got always"},
		"hop limit": {"metadataOptions", resource.NewObjectProperty(resource.PropertyMap{"httpPutResponseHopLimit": numProp(65)}),
			"expected metadataOptions.httpPutResponseHopLimit to be in the range (1 - 64), got 65"},
		"endpoint": {"metadataOptions", resource.NewObjectProperty(resource.PropertyMap{"httpEndpoint": strProp("on")}),
			"expected metadataOptions.httpEndpoint to be one of [enabled disabled], got on"},
		"tags beside volumeTags": {"rootBlockDevice", resource.NewObjectProperty(resource.PropertyMap{
			"tags": strMapProp(map[string]string{"a": "b"})}), "conflicts with volumeTags"},
		"computed field": {"rootBlockDevice", resource.NewObjectProperty(resource.PropertyMap{"volumeId": strProp("vol-1")}),
			"unknown property \"rootBlockDevice.volumeId\""},
		"size as text": {"rootBlockDevice", resource.NewObjectProperty(resource.PropertyMap{"volumeSize": strProp("40")}),
			"property \"rootBlockDevice.volumeSize\" must be an integer"},
	}
	for name, c := range cases {
		in := instanceInputs() // it has volumeTags
		in[c.key] = c.value
		failures := instanceSpec.checkTypes(view(revealMap(in)))
		if len(failures) == 0 {
			_, failures = instanceResource{}.check(nil, nil, in)
		}
		found := false
		for _, f := range failures {
			found = found || strings.Contains(f.Reason, c.want)
		}
		if !found {
			t.Errorf("%s: want a failure with %q, got %v", name, c.want, failures)
		}
	}
}

func TestUpdatePreviewMergesTheGivenFieldsIntoTheState(t *testing.T) {
	in := optionsInputs(t)
	st := optionsState(in)
	obj := copyMap(in["rootBlockDevice"].ObjectValue())
	obj["volumeSize"] = numProp(80)
	in["rootBlockDevice"] = resource.NewObjectProperty(obj)
	out := instanceResource{}.previewUpdate(st, in)["rootBlockDevice"].ObjectValue()
	if out["volumeSize"].NumberValue() != 80 || out["volumeId"].StringValue() != "vol-1" {
		t.Fatalf("preview %v", out)
	}
}
