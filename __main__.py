"""The Pulumi program: this stack's configuration, validated, made into pools."""

import pulumi

from machines.program import components, config

stack_config = components.stack_config()
deployment = config.load(stack_config, pulumi.get_stack())
for warning in config.plain_user_data(stack_config, deployment):
    pulumi.log.warn(warning)
components.deploy(deployment)
