"""The Pulumi program: this stack's configuration, validated, made into pools."""

import os

import pulumi

from machines.program import components, compose, pending
from machines.program.config.loader import load, plain_user_data
from machines.program.config.problems import StackConfigError
from machines.program.fencing import StackAtMaxError
from machines.program.reading import ReadError

refused = pending.refused_plain_run(os.environ, pulumi.get_project(), pulumi.get_stack())
if refused:
    pulumi.log.error(refused)
    raise SystemExit(1)

stack_config = components.stack_config()
try:
    deployment = load(stack_config, pulumi.get_stack())
except StackConfigError as error:  # a line per problem, as the CLI says them: no traceback
    for line in str(error).splitlines():
        pulumi.log.error(line)
    raise SystemExit(1) from error
for warning in plain_user_data(stack_config, deployment):
    pulumi.log.warn(warning)
try:
    compose.deploy(deployment, components.config_credentials(stack_config))
except (ReadError, StackAtMaxError) as error:  # one line, nothing declared
    pulumi.log.error(str(error))
    raise SystemExit(1) from None
