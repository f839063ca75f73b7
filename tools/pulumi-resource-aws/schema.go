package main

// GetSchema's document: a valid Pulumi package schema of just what this stand-in implements,
// generated from the same property specs Check and Diff use.

import (
	"encoding/json"
)

type obj = map[string]any

const (
	ingressType = "aws:ec2/SecurityGroupIngress:SecurityGroupIngress"
	egressType  = "aws:ec2/SecurityGroupEgress:SecurityGroupEgress"
	filterType  = "aws:ec2/getAmiFilter:getAmiFilter"
)

func typeOf(p prop) obj {
	switch p.kind {
	case kBool:
		return obj{"type": "boolean"}
	case kInt:
		return obj{"type": "integer"}
	case kStringList, kStringSet:
		return obj{"type": "array", "items": obj{"type": "string"}}
	case kStringMap:
		return obj{"type": "object", "additionalProperties": obj{"type": "string"}}
	case kObject:
		return obj{"$ref": "#/types/" + p.ref}
	case kObjectList:
		ref := ingressType
		switch p.name {
		case "egress":
			ref = egressType
		case "filters":
			ref = filterType
		}
		return obj{"type": "array", "items": obj{"$ref": "#/types/" + ref}}
	}
	return obj{"type": "string"}
}

func withDesc(t obj, desc string) obj {
	if desc != "" {
		t["description"] = desc
	}
	return t
}

func resourceSchema(r *resourceSpec, desc string) obj {
	inputs, outputs := obj{}, obj{}
	var requiredInputs, required []string
	for _, p := range r.props {
		if p.input {
			inputs[p.name] = withDesc(typeOf(p), p.desc)
			if p.required {
				requiredInputs = append(requiredInputs, p.name)
			}
		}
		if p.output {
			outputs[p.name] = withDesc(typeOf(p), p.desc)
			if p.input && (p.required || p.computed || p.def != nil) {
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

func objectType(fields []prop) obj {
	props := obj{}
	var required []string
	for _, f := range fields {
		props[f.name] = withDesc(typeOf(f), f.desc)
		if f.required {
			required = append(required, f.name)
		}
	}
	return obj{"type": "object", "properties": props, "required": required}
}

func functionSchema(spec invokeSpec, desc string) obj {
	return obj{"description": desc, "inputs": objectType(spec.args), "outputs": obj{"type": "object"}}
}

func schemaJSON() (string, error) {
	configVars := obj{}
	for _, k := range sortedKeys(configKinds) {
		t := typeOf(prop{name: k, kind: configKinds[k]})
		if k == "endpoints" {
			t = obj{"type": "array", "items": obj{"type": "object", "additionalProperties": obj{"type": "string"}},
				"description": "Custom endpoints: maps with ec2, iam, sts, sqs and events keys."}
		}
		for _, s := range secretConfigKeys {
			if s == k {
				t["secret"] = true
			}
		}
		configVars[k] = t
	}
	pkg := obj{
		"name":        "aws",
		"displayName": "AWS",
		"version":     version,
		"description": "The orca-machines project's stand-in for the aws provider (tools/pulumi-resource-aws): " +
			coverage + ", over the AWS SDK for Go v2.",
		"config":   obj{"variables": configVars},
		"provider": obj{"inputProperties": configVars, "properties": configVars},
		"resources": obj{
			instanceToken:         resourceSchema(instanceSpec, "An EC2 instance."),
			securityGroupToken:    resourceSchema(securityGroupSpec, "A VPC security group with inline rules."),
			roleToken:             resourceSchema(roleSpec, "An IAM role."),
			rolePolicyAttachToken: resourceSchema(rolePolicyAttachmentSpec, "A managed policy attached to an IAM role."),
			instanceProfileToken:  resourceSchema(instanceProfileSpec, "An IAM instance profile."),
			queueToken:            resourceSchema(queueSpec, "An SQS queue."),
			queuePolicyToken:      resourceSchema(queuePolicySpec, "The access policy of an SQS queue."),
			eventRuleToken:        resourceSchema(eventRuleSpec, "An EventBridge rule."),
			eventTargetToken:      resourceSchema(eventTargetSpec, "A target of an EventBridge rule."),
		},
		"functions": obj{
			getAmiToken:          functionSchema(invokes[getAmiToken], "One AMI: the match of the filters, or the newest one."),
			getInstanceTypeToken: functionSchema(invokes[getInstanceTypeToken], "Details of one EC2 instance type."),
		},
		"types": obj{
			ingressType:         objectType(ruleFields),
			egressType:          objectType(ruleFields),
			filterType:          objectType(filterFields),
			marketOptionsType:   objectType(marketOptionsFields),
			spotOptionsType:     objectType(spotOptionsFields),
			rootBlockDeviceType: objectType(rootBlockDeviceFields),
			metadataOptionsType: objectType(metadataOptionsFields),
			sqsTargetType:       objectType(sqsTargetFields),
		},
	}
	b, err := json.Marshal(pkg)
	return string(b), err
}
