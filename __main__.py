"""The Pulumi program: this stack's configuration, validated, made into pools."""

import pulumi

from machines.program import components, config

components.deploy(config.load(components.stack_config(), pulumi.get_stack()))
