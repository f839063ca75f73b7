package main

// The IAM resources, as terraform-provider-aws v6 behaves (internal/service/iam/role.go,
// role_policy_attachment.go, instance_profile.go):
//
//	aws:iam/role:Role                                  name and path replace; the assume role
//	    policy compares as a policy (key order, whitespace, a string vs a one-item list) and is
//	    kept in the state as normalized JSON; description, maxSessionDuration and tags update in
//	    place; delete first removes the role from every instance profile and detaches its
//	    managed policies, then deletes it (retrying DeleteConflict).
//	aws:iam/rolePolicyAttachment:RolePolicyAttachment  id "<role>/<policyArn>"; both replace.
//	aws:iam/instanceProfile:InstanceProfile            name and path replace; role and tags
//	    update in place; delete removes the role, then deletes the profile.
//
// IAM is global: these resources have no region.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
)

const (
	roleToken             = "aws:iam/role:Role"
	rolePolicyAttachToken = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
	instanceProfileToken  = "aws:iam/instanceProfile:InstanceProfile"
)

func iamTimeouts() (time.Duration, time.Duration, time.Duration) {
	return 5 * time.Minute, 5 * time.Minute, 5 * time.Minute
}

// --- policies -----------------------------------------------------------------------------------

// normalizeJSON is JSON with sorted keys and no spaces (structure.NormalizeJsonString).
func normalizeJSON(s string) (string, error) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// canonicalPolicy makes equivalent policies equal: a statement object is a list of one, a
// string is a list of one, string lists are sorted.
func canonicalPolicy(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = canonicalPolicy(e, k)
		}
		if key == "Statement" {
			return []any{out}
		}
		return out
	case []any:
		out := make([]any, len(x))
		strs := true
		for i, e := range x {
			if _, ok := e.(string); ok {
				out[i] = e
				continue
			}
			out[i] = canonicalPolicy(e, "")
			strs = false
		}
		if strs {
			slices.SortFunc(out, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
			out = slices.Compact(out)
		}
		return out
	case string:
		if key != "Version" && key != "Sid" && key != "Effect" && key != "Id" {
			return []any{x}
		}
	}
	return v
}

// policyEquivalent reports whether two policy documents mean the same (awspolicyequivalence,
// for the shapes an assume role policy has).
func policyEquivalent(a, b string) bool {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil || json.Unmarshal([]byte(b), &vb) != nil {
		return a == b
	}
	return reflect.DeepEqual(canonicalPolicy(va, ""), canonicalPolicy(vb, ""))
}

func policyEqual(old, new resource.PropertyValue, _ view) bool {
	return policyEquivalent(stringOr(old), stringOr(new))
}

func checkPolicyJSON(property, s string) *pulumirpc.CheckFailure {
	var v any
	if !strings.HasPrefix(strings.TrimSpace(s), "{") || json.Unmarshal([]byte(s), &v) != nil {
		return failure(property, "%q contains an invalid JSON policy: it must be a JSON object", property)
	}
	return nil
}

// --- tags ---------------------------------------------------------------------------------------

func iamTags(tags map[string]string) []iamtypes.Tag {
	out := make([]iamtypes.Tag, 0, len(tags))
	for _, k := range sortedKeys(tags) {
		out = append(out, iamtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	return out
}

func tagsFromIAM(tags []iamtypes.Tag) map[string]string {
	out := map[string]string{}
	for _, t := range tags {
		if k := aws.ToString(t.Key); !strings.HasPrefix(k, "aws:") {
			out[k] = aws.ToString(t.Value)
		}
	}
	return out
}

func isNoSuchEntity(err error) bool { return hasCode(err, "NoSuchEntity") }

// --- Role ---------------------------------------------------------------------------------------

type roleResource struct{}

var roleSpec = &resourceSpec{
	token: roleToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, replace: true,
			desc: "Name of the role; autonamed when absent."},
		{name: "assumeRolePolicy", kind: kString, input: true, output: true, required: true, equal: policyEqual,
			desc: "The trust policy (JSON); kept in the state normalized."},
		{name: "description", kind: kString, input: true, output: true, desc: "Description of the role."},
		{name: "path", kind: kString, input: true, output: true, replace: true, def: defaultOf(strProp("/")),
			desc: "Path of the role; default \"/\"."},
		{name: "maxSessionDuration", kind: kInt, input: true, output: true, def: defaultOf(numProp(3600)),
			desc: "Maximum session duration in seconds (3600-43200)."},
		{name: "forceDetachPolicies", kind: kBool, input: true, output: true, def: defaultOf(boolProp(false)),
			desc: "Detach every policy before deleting the role."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the role."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the role."},
		{name: "createDate", kind: kString, output: true, desc: "Creation date."},
		{name: "uniqueId", kind: kString, output: true, desc: "Stable unique ID."},
		{name: "managedPolicyArns", kind: kStringSet, output: true, desc: "ARNs of the attached managed policies."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
	},
	unsupported: []string{"namePrefix", "inlinePolicies", "managedPolicyArns", "permissionsBoundary"},
	keepInputs:  []string{"assumeRolePolicy"},
}

func (roleResource) spec() *resourceSpec { return roleSpec }

func (roleResource) timeouts() (time.Duration, time.Duration, time.Duration) { return iamTimeouts() }

func (roleResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	var failures []*pulumirpc.CheckFailure
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	roleSpec.applyDefaults(checked)
	n := view(revealMap(checked))
	if n.known("name") && (len(n.str("name")) == 0 || len(n.str("name")) > 64) {
		failures = append(failures, failure("name", "expected length of name to be in the range (1 - 64)"))
	}
	if n.known("assumeRolePolicy") {
		if f := checkPolicyJSON("assumeRolePolicy", n.str("assumeRolePolicy")); f != nil {
			failures = append(failures, f)
		}
	}
	if d, ok := n.number("maxSessionDuration"); ok && (d < 3600 || d > 43200) {
		failures = append(failures, failure("maxSessionDuration",
			"expected maxSessionDuration to be in the range (3600 - 43200), got %d", d))
	}
	if n.known("description") && len(n.str("description")) > 1000 {
		failures = append(failures, failure("description", "expected length of description to be in the range (0 - 1000)"))
	}
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	return checked, failures
}

func (roleResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return roleSpec.diff(olds, news, ignore)
}

func (roleResource) create(ctx context.Context, c *clients, news resource.PropertyMap) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	name := n.str("name")
	policy, err := normalizeJSON(n.str("assumeRolePolicy"))
	if err != nil {
		return "", nil, fmt.Errorf("assume_role_policy is invalid JSON: %w", err)
	}
	in := &iam.CreateRoleInput{
		AssumeRolePolicyDocument: aws.String(policy),
		Path:                     aws.String(n.str("path")),
		RoleName:                 aws.String(name),
	}
	if tags := n.strMap("tags"); len(tags) > 0 {
		in.Tags = iamTags(tags)
	}
	if d := n.str("description"); d != "" {
		in.Description = aws.String(d)
	}
	if d, ok := n.number("maxSessionDuration"); ok {
		in.MaxSessionDuration = aws.Int32(int32(d))
	}
	_, err = retryWhile(ctx, propagationTimeout, func(err error) bool {
		return hasMessage(err, "MalformedPolicyDocument", "Invalid principal in policy") ||
			hasCode(err, "ConcurrentModification")
	}, func(ctx context.Context) (*iam.CreateRoleOutput, error) { return c.iam.CreateRole(ctx, in) })
	if err != nil {
		return "", nil, fmt.Errorf("creating IAM Role (%s): %w", name, apiError(err))
	}
	state, err := retryWhile(ctx, propagationTimeout, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return roleRead(ctx, c, name, n) })
	if err != nil {
		return name, nil, fmt.Errorf("reading IAM Role (%s): %w", name, err)
	}
	return name, state, nil
}

func roleRead(ctx context.Context, c *clients, name string, args view) (resource.PropertyMap, error) {
	out, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if isNoSuchEntity(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading IAM Role (%s): %w", name, apiError(err))
	}
	role := out.Role
	policy, err := url.QueryUnescape(aws.ToString(role.AssumeRolePolicyDocument))
	if err != nil {
		return nil, err
	}
	if given := args.str("assumeRolePolicy"); given != "" && policyEquivalent(given, policy) {
		policy = given
	}
	if normalized, err := normalizeJSON(policy); err == nil {
		policy = normalized
	}
	attached, err := attachedPolicies(ctx, c, name)
	if err != nil {
		return nil, err
	}
	tags := tagsFromIAM(role.Tags)
	m := resource.PropertyMap{
		"name":                strProp(aws.ToString(role.RoleName)),
		"arn":                 strProp(aws.ToString(role.Arn)),
		"assumeRolePolicy":    strProp(policy),
		"description":         strProp(aws.ToString(role.Description)),
		"path":                strProp(aws.ToString(role.Path)),
		"maxSessionDuration":  numProp(int64(aws.ToInt32(role.MaxSessionDuration))),
		"uniqueId":            strProp(aws.ToString(role.RoleId)),
		"forceDetachPolicies": boolProp(args.boolean("forceDetachPolicies")),
		"managedPolicyArns":   strsProp(attached),
		"tags":                strMapProp(tags),
		"tagsAll":             strMapProp(tags),
	}
	if role.CreateDate != nil {
		m["createDate"] = strProp(role.CreateDate.UTC().Format(time.RFC3339))
	}
	return m, nil
}

// attachedPolicies are the ARNs of a role's attached managed policies (NoSuchEntity: none).
func attachedPolicies(ctx context.Context, c *clients, role string) ([]string, error) {
	var arns []string
	pages := iam.NewListAttachedRolePoliciesPaginator(c.iam, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(role)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if isNoSuchEntity(err) {
			return nil, errNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("reading IAM Policies attached to Role (%s): %w", role, apiError(err))
		}
		for _, p := range page.AttachedPolicies {
			arns = append(arns, aws.ToString(p.PolicyArn))
		}
	}
	return arns, nil
}

func (roleResource) preview(_ string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	for _, k := range []resource.PropertyKey{"arn", "createDate", "uniqueId", "managedPolicyArns"} {
		out[k] = unknown()
	}
	if v, ok := out["assumeRolePolicy"]; ok && v.IsString() {
		if normalized, err := normalizeJSON(v.StringValue()); err == nil {
			out["assumeRolePolicy"] = strProp(normalized)
		}
	}
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	return withDefaults(out, resource.PropertyMap{"tags": strMapProp(nil), "tagsAll": strMapProp(nil)})
}

func (roleResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap) (resource.PropertyMap, error) {
	return roleRead(ctx, c, id, view(revealMap(state)))
}

func (roleResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	fail := func(what string, err error) (resource.PropertyMap, error) {
		state, _ := roleRead(ctx, c, id, n)
		return state, fmt.Errorf("updating IAM Role (%s) %s: %w", id, what, apiError(err))
	}
	if !policyEquivalent(o.str("assumeRolePolicy"), n.str("assumeRolePolicy")) {
		policy, err := normalizeJSON(n.str("assumeRolePolicy"))
		if err != nil {
			return nil, fmt.Errorf("assume_role_policy is invalid JSON: %w", err)
		}
		_, err = retryWhile(ctx, propagationTimeout, func(err error) bool {
			return hasMessage(err, "MalformedPolicyDocument", "Invalid principal in policy")
		}, func(ctx context.Context) (*iam.UpdateAssumeRolePolicyOutput, error) {
			return c.iam.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{
				RoleName: aws.String(id), PolicyDocument: aws.String(policy)})
		})
		if err != nil {
			return fail("assume role policy", err)
		}
	}
	if o.str("description") != n.str("description") {
		if _, err := c.iam.UpdateRoleDescription(ctx, &iam.UpdateRoleDescriptionInput{
			RoleName: aws.String(id), Description: aws.String(n.str("description"))}); err != nil {
			return fail("description", err)
		}
	}
	if od, _ := o.number("maxSessionDuration"); n.has("maxSessionDuration") {
		if nd, _ := n.number("maxSessionDuration"); nd != od {
			if _, err := c.iam.UpdateRole(ctx, &iam.UpdateRoleInput{
				RoleName: aws.String(id), MaxSessionDuration: aws.Int32(int32(nd))}); err != nil {
				return fail("MaxSessionDuration", err)
			}
		}
	}
	removed, set := tagChanges(o.strMap("tags"), n.strMap("tags"))
	if len(removed) > 0 {
		if _, err := c.iam.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String(id), TagKeys: removed}); err != nil {
			return fail("tags", err)
		}
	}
	if len(set) > 0 {
		if _, err := c.iam.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String(id), Tags: iamTags(set)}); err != nil {
			return fail("tags", err)
		}
	}
	return roleRead(ctx, c, id, n)
}

func (roleResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, "assumeRolePolicy", "description", "maxSessionDuration",
		"forceDetachPolicies", "tags")
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (roleResource) delete(ctx context.Context, c *clients, id string, state resource.PropertyMap) error {
	s := view(revealMap(state))
	// The role leaves every instance profile first (deleteRoleInstanceProfiles).
	profiles, err := c.iam.ListInstanceProfilesForRole(ctx, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String(id)})
	if isNoSuchEntity(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading IAM Instance Profiles for Role (%s): %w", id, apiError(err))
	}
	for _, p := range profiles.InstanceProfiles {
		if err := removeRole(ctx, c, aws.ToString(p.InstanceProfileName), id); err != nil {
			return err
		}
	}
	// Managed policies are detached when forced, or when the state lists some (the terraform
	// provider reads managed_policy_arns into the state, so it has them whenever any are attached).
	if s.boolean("forceDetachPolicies") || len(s.strs("managedPolicyArns")) > 0 {
		arns, err := attachedPolicies(ctx, c, id)
		if err != nil && err != errNotFound {
			return err
		}
		for _, arn := range arns {
			_, err := c.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String(id), PolicyArn: aws.String(arn)})
			if err != nil && !isNoSuchEntity(err) {
				return fmt.Errorf("detaching IAM Policy (%s) from Role (%s): %w", arn, id, apiError(err))
			}
		}
	}
	if s.boolean("forceDetachPolicies") {
		names, err := c.iam.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String(id)})
		if err != nil && !isNoSuchEntity(err) {
			return fmt.Errorf("reading IAM Role (%s) inline policies: %w", id, apiError(err))
		}
		if names != nil {
			for _, name := range names.PolicyNames {
				_, err := c.iam.DeleteRolePolicy(ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String(id), PolicyName: aws.String(name)})
				if err != nil && !isNoSuchEntity(err) {
					return fmt.Errorf("deleting IAM Role (%s) policy (%s): %w", id, name, apiError(err))
				}
			}
		}
	}
	_, err = retryWhile(ctx, propagationTimeout, func(err error) bool { return hasCode(err, "DeleteConflict") },
		func(ctx context.Context) (*iam.DeleteRoleOutput, error) {
			return c.iam.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String(id)})
		})
	if err != nil && !isNoSuchEntity(err) {
		return fmt.Errorf("deleting IAM Role (%s): %w", id, apiError(err))
	}
	return nil
}

// --- RolePolicyAttachment -------------------------------------------------------------------

type rolePolicyAttachmentResource struct{}

var rolePolicyAttachmentSpec = &resourceSpec{
	token: rolePolicyAttachToken,
	props: []prop{
		{name: "role", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "Name of the role."},
		{name: "policyArn", kind: kString, input: true, output: true, required: true, replace: true,
			desc: "ARN of the managed policy to attach."},
	},
}

func (rolePolicyAttachmentResource) spec() *resourceSpec { return rolePolicyAttachmentSpec }

func (rolePolicyAttachmentResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return iamTimeouts()
}

func (rolePolicyAttachmentResource) check(_ *pulumirpc.CheckRequest, _, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	n := view(revealMap(news))
	var failures []*pulumirpc.CheckFailure
	if n.known("policyArn") && !strings.HasPrefix(n.str("policyArn"), "arn:") {
		failures = append(failures, failure("policyArn", "%q (%s) is an invalid ARN: arn: invalid prefix",
			"policyArn", n.str("policyArn")))
	}
	return copyMap(news), failures
}

func (rolePolicyAttachmentResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return rolePolicyAttachmentSpec.diff(olds, news, ignore)
}

func attachmentRead(ctx context.Context, c *clients, role, arn string) (resource.PropertyMap, error) {
	arns, err := attachedPolicies(ctx, c, role)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(arns, arn) {
		return nil, errNotFound
	}
	return resource.PropertyMap{"role": strProp(role), "policyArn": strProp(arn)}, nil
}

func (rolePolicyAttachmentResource) create(ctx context.Context, c *clients, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	role, arn := n.str("role"), n.str("policyArn")
	_, err := retryWhile(ctx, propagationTimeout, func(err error) bool { return hasCode(err, "ConcurrentModification") },
		func(ctx context.Context) (*iam.AttachRolePolicyOutput, error) {
			return c.iam.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(arn)})
		})
	if err != nil {
		return "", nil, fmt.Errorf("attaching IAM Policy (%s) to IAM Role (%s): %w", arn, role, apiError(err))
	}
	id := role + "/" + arn
	state, err := retryWhile(ctx, propagationTimeout, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return attachmentRead(ctx, c, role, arn) })
	if err != nil {
		return id, nil, fmt.Errorf("reading IAM Role Policy Attachment (%s:%s): %w", role, arn, err)
	}
	return id, state, nil
}

func (rolePolicyAttachmentResource) preview(_ string, news resource.PropertyMap) resource.PropertyMap {
	return copyMap(news)
}

func (rolePolicyAttachmentResource) read(ctx context.Context, c *clients, id string, state, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	s := view(revealMap(state))
	role, arn := s.str("role"), s.str("policyArn")
	if role == "" || arn == "" {
		// an import: "<role>/<policyArn>"
		i := strings.Index(id, "/")
		if i <= 0 {
			return nil, fmt.Errorf("unexpected format for ID (%s), expected <role-name>/<policy_arn>", id)
		}
		role, arn = id[:i], id[i+1:]
	}
	return attachmentRead(ctx, c, role, arn)
}

func (r rolePolicyAttachmentResource) update(ctx context.Context, c *clients, id string, _, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	return r.read(ctx, c, id, news, nil)
}

func (rolePolicyAttachmentResource) previewUpdate(olds, _ resource.PropertyMap) resource.PropertyMap {
	return copyMap(olds)
}

func (rolePolicyAttachmentResource) delete(ctx context.Context, c *clients, _ string, state resource.PropertyMap) error {
	s := view(revealMap(state))
	_, err := c.iam.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{
		RoleName: aws.String(s.str("role")), PolicyArn: aws.String(s.str("policyArn"))})
	if err != nil && !isNoSuchEntity(err) {
		return fmt.Errorf("detaching IAM Policy (%s) from IAM Role (%s): %w", s.str("policyArn"), s.str("role"), apiError(err))
	}
	return nil
}

// --- InstanceProfile --------------------------------------------------------------------------

type instanceProfileResource struct{}

var instanceProfileSpec = &resourceSpec{
	token: instanceProfileToken,
	props: []prop{
		{name: "name", kind: kString, input: true, output: true, replace: true,
			desc: "Name of the instance profile; autonamed when absent."},
		{name: "path", kind: kString, input: true, output: true, replace: true, def: defaultOf(strProp("/")),
			desc: "Path of the profile; default \"/\"."},
		{name: "role", kind: kString, input: true, output: true, desc: "Name of the role in the profile."},
		{name: "tags", kind: kStringMap, input: true, output: true, desc: "Tags of the profile."},
		{name: "arn", kind: kString, output: true, desc: "ARN of the profile."},
		{name: "createDate", kind: kString, output: true, desc: "Creation date."},
		{name: "uniqueId", kind: kString, output: true, desc: "Stable unique ID."},
		{name: "tagsAll", kind: kStringMap, output: true, desc: "Tags, including the provider's default tags (none here)."},
	},
	unsupported: []string{"namePrefix"},
}

func (instanceProfileResource) spec() *resourceSpec { return instanceProfileSpec }

func (instanceProfileResource) timeouts() (time.Duration, time.Duration, time.Duration) {
	return iamTimeouts()
}

func (instanceProfileResource) check(req *pulumirpc.CheckRequest, olds, news resource.PropertyMap,
) (resource.PropertyMap, []*pulumirpc.CheckFailure) {
	checked := copyMap(news)
	var failures []*pulumirpc.CheckFailure
	if f := autoname(req, olds, checked); f != nil {
		failures = append(failures, f)
	}
	instanceProfileSpec.applyDefaults(checked)
	n := view(revealMap(checked))
	if n.known("name") && (len(n.str("name")) == 0 || len(n.str("name")) > 128) {
		failures = append(failures, failure("name", "expected length of name to be in the range (1 - 128)"))
	}
	if n.known("tags") {
		failures = append(failures, checkTags("tags", n.strMap("tags"))...)
	}
	return checked, failures
}

func (instanceProfileResource) diff(_ context.Context, _ *clients, olds, news view, ignore []string) *pulumirpc.DiffResponse {
	return instanceProfileSpec.diff(olds, news, ignore)
}

func profileRead(ctx context.Context, c *clients, name string) (resource.PropertyMap, error) {
	out, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if isNoSuchEntity(err) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading IAM Instance Profile (%s): %w", name, apiError(err))
	}
	p := out.InstanceProfile
	tags := tagsFromIAM(p.Tags)
	m := resource.PropertyMap{
		"name":     strProp(aws.ToString(p.InstanceProfileName)),
		"path":     strProp(aws.ToString(p.Path)),
		"arn":      strProp(aws.ToString(p.Arn)),
		"uniqueId": strProp(aws.ToString(p.InstanceProfileId)),
		"tags":     strMapProp(tags),
		"tagsAll":  strMapProp(tags),
	}
	if p.CreateDate != nil {
		m["createDate"] = strProp(p.CreateDate.UTC().Format(time.RFC3339))
	}
	if len(p.Roles) > 0 {
		m["role"] = strProp(aws.ToString(p.Roles[0].RoleName))
	}
	return m, nil
}

func addRole(ctx context.Context, c *clients, profile, role string) error {
	_, err := retryWhile(ctx, propagationTimeout, isNoSuchEntity,
		func(ctx context.Context) (*iam.AddRoleToInstanceProfileOutput, error) {
			return c.iam.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{
				InstanceProfileName: aws.String(profile), RoleName: aws.String(role)})
		})
	if err != nil {
		return fmt.Errorf("adding IAM Role (%s) to IAM Instance Profile (%s): %w", role, profile, apiError(err))
	}
	return nil
}

// removeRole takes role out of profile; a role already out of it (IAM's NoSuchEntity, or
// moto's 500 for the same case, read back to be sure) is done.
func removeRole(ctx context.Context, c *clients, profile, role string) error {
	_, err := c.iam.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
		InstanceProfileName: aws.String(profile), RoleName: aws.String(role)})
	if err == nil || isNoSuchEntity(err) {
		return nil
	}
	read, readErr := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(profile)})
	if isNoSuchEntity(readErr) {
		return nil
	}
	if readErr == nil && read.InstanceProfile != nil {
		attached := false
		for _, r := range read.InstanceProfile.Roles {
			attached = attached || aws.ToString(r.RoleName) == role
		}
		if !attached {
			return nil
		}
	}
	return fmt.Errorf("removing IAM Role (%s) from IAM Instance Profile (%s): %w", role, profile, apiError(err))
}

func (instanceProfileResource) create(ctx context.Context, c *clients, news resource.PropertyMap,
) (string, resource.PropertyMap, error) {
	n := view(revealMap(news))
	name := n.str("name")
	in := &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String(name), Path: aws.String(n.str("path"))}
	if tags := n.strMap("tags"); len(tags) > 0 {
		in.Tags = iamTags(tags)
	}
	if _, err := c.iam.CreateInstanceProfile(ctx, in); err != nil {
		return "", nil, fmt.Errorf("creating IAM Instance Profile (%s): %w", name, apiError(err))
	}
	if _, err := retryWhile(ctx, propagationTimeout, func(err error) bool { return err == errNotFound },
		func(ctx context.Context) (resource.PropertyMap, error) { return profileRead(ctx, c, name) }); err != nil {
		return name, nil, fmt.Errorf("waiting for IAM Instance Profile (%s) create: %w", name, err)
	}
	if role := n.str("role"); role != "" {
		if err := addRole(ctx, c, name, role); err != nil {
			state, _ := profileRead(ctx, c, name)
			return name, state, err
		}
	}
	state, err := profileRead(ctx, c, name)
	if err != nil {
		return name, nil, err
	}
	return name, state, nil
}

func (instanceProfileResource) preview(_ string, news resource.PropertyMap) resource.PropertyMap {
	out := copyMap(news)
	for _, k := range []resource.PropertyKey{"arn", "createDate", "uniqueId"} {
		out[k] = unknown()
	}
	if v, ok := out["tags"]; ok {
		out["tagsAll"] = v
	}
	return withDefaults(out, resource.PropertyMap{"tags": strMapProp(nil), "tagsAll": strMapProp(nil)})
}

func (instanceProfileResource) read(ctx context.Context, c *clients, id string, _, _ resource.PropertyMap,
) (resource.PropertyMap, error) {
	return profileRead(ctx, c, id)
}

func (instanceProfileResource) update(ctx context.Context, c *clients, id string, olds, news resource.PropertyMap,
) (resource.PropertyMap, error) {
	o, n := view(revealMap(olds)), view(revealMap(news))
	fail := func(err error) (resource.PropertyMap, error) {
		state, _ := profileRead(ctx, c, id)
		return state, fmt.Errorf("updating IAM Instance Profile (%s): %w", id, err)
	}
	if oldRole, newRole := o.str("role"), n.str("role"); oldRole != newRole {
		if oldRole != "" {
			if err := removeRole(ctx, c, id, oldRole); err != nil {
				return fail(err)
			}
		}
		if newRole != "" {
			if err := addRole(ctx, c, id, newRole); err != nil {
				return fail(err)
			}
		}
	}
	removed, set := tagChanges(o.strMap("tags"), n.strMap("tags"))
	if len(removed) > 0 {
		if _, err := c.iam.UntagInstanceProfile(ctx, &iam.UntagInstanceProfileInput{
			InstanceProfileName: aws.String(id), TagKeys: removed}); err != nil {
			return fail(apiError(err))
		}
	}
	if len(set) > 0 {
		if _, err := c.iam.TagInstanceProfile(ctx, &iam.TagInstanceProfileInput{
			InstanceProfileName: aws.String(id), Tags: iamTags(set)}); err != nil {
			return fail(apiError(err))
		}
	}
	return profileRead(ctx, c, id)
}

func (instanceProfileResource) previewUpdate(olds, news resource.PropertyMap) resource.PropertyMap {
	out := updatePreview(olds, news, "role", "tags")
	if v, ok := news["tags"]; ok {
		out["tagsAll"] = v
	}
	return out
}

func (instanceProfileResource) delete(ctx context.Context, c *clients, id string, _ resource.PropertyMap) error {
	out, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(id)})
	if isNoSuchEntity(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading IAM Instance Profile (%s): %w", id, apiError(err))
	}
	for _, r := range out.InstanceProfile.Roles {
		if err := removeRole(ctx, c, id, aws.ToString(r.RoleName)); err != nil {
			return err
		}
	}
	_, err = c.iam.DeleteInstanceProfile(ctx, &iam.DeleteInstanceProfileInput{InstanceProfileName: aws.String(id)})
	if err != nil && !isNoSuchEntity(err) {
		return fmt.Errorf("deleting IAM Instance Profile (%s): %w", id, apiError(err))
	}
	return nil
}
