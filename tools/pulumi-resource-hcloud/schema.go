package main

// GetSchema's document: a valid Pulumi package schema of just what this stand-in implements,
// generated from the same property specs Check and Diff use.

import (
	"encoding/json"
)

const firewallRuleType = "hcloud:index/FirewallRule:FirewallRule"

type obj = map[string]any

func typeOf(k kind) obj {
	switch k {
	case kBool:
		return obj{"type": "boolean"}
	case kInt:
		return obj{"type": "integer"}
	case kStringList:
		return obj{"type": "array", "items": obj{"type": "string"}}
	case kIntList:
		return obj{"type": "array", "items": obj{"type": "integer"}}
	case kStringMap:
		return obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	case kRuleList:
		return obj{"type": "array", "items": obj{"$ref": "#/types/" + firewallRuleType}}
	}
	return obj{"type": "string"}
}

func withDesc(t obj, desc string, secret bool) obj {
	if desc != "" {
		t["description"] = desc
	}
	if secret {
		t["secret"] = true
	}
	return t
}

func resourceSchema(r *resourceSpec, desc string) obj {
	inputs, outputs := obj{}, obj{}
	var requiredInputs, required []string
	for _, p := range r.props {
		if p.input {
			inputs[p.name] = withDesc(typeOf(p.kind), p.desc, p.secret)
			if p.required {
				requiredInputs = append(requiredInputs, p.name)
			}
		}
		if p.output {
			outputs[p.name] = withDesc(typeOf(p.kind), p.desc, p.secret)
			if p.input && !p.secret {
				required = append(required, p.name)
			}
		}
	}
	return obj{
		"description":     desc,
		"inputProperties": inputs,
		"properties":      outputs,
		"requiredInputs":  requiredInputs,
		"required":        required,
	}
}

func props(kinds map[string]kind) obj {
	out := obj{}
	for name, k := range kinds {
		out[name] = typeOf(k)
	}
	return out
}

func schemaJSON() (string, error) {
	configVars := obj{
		"token":           obj{"type": "string", "secret": true, "description": "The API token (else HCLOUD_TOKEN)."},
		"endpoint":        obj{"type": "string", "description": "The API endpoint (else HCLOUD_ENDPOINT)."},
		"endpointHetzner": obj{"type": "string", "description": "Accepted and unused by this stand-in."},
		"pollInterval":    obj{"type": "string", "description": "How often actions are polled; default 500ms."},
		"pollFunction":    obj{"type": "string", "description": "constant or exponential (default)."},
	}
	ruleObj := obj{
		"type": "object",
		"properties": props(map[string]kind{
			"direction": kString, "protocol": kString, "port": kString, "description": kString,
			"sourceIps": kStringList, "destinationIps": kStringList,
		}),
		"required": []string{"direction", "protocol"},
	}
	locationObj := obj{
		"type": "object",
		"properties": props(map[string]kind{
			"id": kInt, "name": kString, "available": kBool, "recommended": kBool, "isDeprecated": kBool,
			"deprecationAnnounced": kString, "unavailableAfter": kString,
		}),
	}
	applyToObj := obj{
		"type":       "object",
		"properties": props(map[string]kind{"server": kInt, "labelSelector": kString}),
	}
	serverTypeOut := props(map[string]kind{
		"id": kInt, "name": kString, "description": kString, "category": kString, "cores": kInt,
		"memory": kInt, "disk": kInt, "storageType": kString, "cpuType": kString,
		"architecture": kString, "includedTraffic": kInt, "isDeprecated": kBool,
		"deprecationAnnounced": kString, "unavailableAfter": kString,
	})
	serverTypeOut["locations"] = obj{"type": "array",
		"items": obj{"$ref": "#/types/hcloud:index/getServerTypeLocation:getServerTypeLocation"}}
	firewallOut := props(map[string]kind{
		"id": kInt, "name": kString, "labels": kStringMap, "withSelector": kString, "mostRecent": kBool,
		"rules": kRuleList,
	})
	firewallOut["rules"] = obj{"type": "array",
		"items": obj{"$ref": "#/types/hcloud:index/getFirewallRule:getFirewallRule"}}
	firewallOut["applyTos"] = obj{"type": "array",
		"items": obj{"$ref": "#/types/hcloud:index/getFirewallApplyTo:getFirewallApplyTo"}}

	pkg := obj{
		"name":        "hcloud",
		"displayName": "Hetzner Cloud",
		"version":     version,
		"description": "The orca-machines project's stand-in for the hcloud provider " +
			"(tools/pulumi-resource-hcloud): Server, SshKey, Firewall and the " +
			"getServerType and getFirewall invokes, over hcloud-go.",
		"config":   obj{"variables": configVars},
		"provider": obj{"inputProperties": configVars, "properties": configVars},
		"resources": obj{
			serverToken:   resourceSchema(serverSpec, "A Hetzner Cloud server."),
			sshKeyToken:   resourceSchema(sshKeySpec, "A Hetzner Cloud SSH key."),
			firewallToken: resourceSchema(firewallSpec, "A Hetzner Cloud firewall."),
		},
		"functions": obj{
			getServerTypeToken: obj{
				"description": "Details of one server type.",
				"inputs":      obj{"properties": props(map[string]kind{"id": kInt, "name": kString})},
				"outputs":     obj{"properties": serverTypeOut},
			},
			getFirewallToken: obj{
				"description": "One firewall, by id, name or label selector.",
				"inputs": obj{"properties": props(map[string]kind{
					"id": kInt, "name": kString, "withSelector": kString, "mostRecent": kBool,
				})},
				"outputs": obj{"properties": firewallOut},
			},
		},
		"types": obj{
			firewallRuleType: ruleObj,
			"hcloud:index/getServerTypeLocation:getServerTypeLocation": locationObj,
			"hcloud:index/getFirewallRule:getFirewallRule":             ruleObj,
			"hcloud:index/getFirewallApplyTo:getFirewallApplyTo":       applyToObj,
		},
	}
	b, err := json.Marshal(pkg)
	return string(b), err
}
