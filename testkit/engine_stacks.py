"""What the engine tests share besides their fixtures: the project's pinned versions
(``pin``), and the names, settings and variables of the stacks ``tests/engine/conftest.py``
deploys, so that a test names them from here, never from another test module."""

from __future__ import annotations

import re

from emulator.process import PROJECT_ROOT
from testkit import moto_server


def pin(name: str) -> str:
    """The version ``requirements.txt`` pins ``name`` to (``pulumi-aws``: ``7.51.1``)."""
    found = re.search(
        rf"^{name}==(\S+)$", (PROJECT_ROOT / "requirements.txt").read_text(), re.MULTILINE
    )
    assert found, name
    return found[1]


ENGINE_VARIABLES = (
    "ORCA_CI_STACKS",
    "ORCA_PROVIDER",
    "ORCA_OWNER",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "HCLOUD_ENDPOINT",
    "ORCA_HCLOUD_IMAGE",
    "ORCA_HCLOUD_SSH_KEYS",
    "ORCA_HCLOUD_FIREWALL",
)
"""The developer's variables a deployment removes, so none of them reaches the engine."""

EC2_STACK = "moto"
"""The stack of ``ec2_deployment``: the EC2 example stack aimed at moto's server."""
EC2_USER_DATA_KEY = "orca-machines:pools[1].userData"
EC2_USER_DATA = "#cloud-config\npackage_update: true\n"
"""The user data ``ec2_deployment`` sets, as a secret, on the second pool."""
EC2_PASSPHRASE = "orca-machines-moto"
"""The passphrase of the stacks on moto (``PULUMI_CONFIG_PASSPHRASE``)."""

S3_STACK = "shared-state"
"""The stack of ``s3_deployment``, its state in moto's bucket ``STATE_BUCKET``."""
STATE_BUCKET = "orca-pulumi-state"


def ec2_stack_config(url: str, network: moto_server.Network, policy: str) -> dict[str, object]:
    """What the example stack needs changed to run on moto: endpoints, network, policy."""
    return {
        "aws:endpoints": [{"ec2": url, "iam": url, "sts": url, "sqs": url, "events": url}],
        "orca-machines:subnets": network.subnets,
        "orca-machines:securityGroup": {
            "name": "pools",
            "vpc": network.vpc,
            "ingress": [
                {
                    "protocol": "tcp",
                    "port": "22",
                    "sourceIps": ["203.0.113.0/24"],
                    "description": "ssh from the office",
                }
            ],
        },
        "orca-machines:instanceProfile": {"name": "workers", "policies": [policy]},
    }


SPAN_STACK = "span"
"""The stack of ``span_deployment``: ``stacks/Pulumi.span-example.yaml`` on the emulator and
moto's server at once."""


def span_stack_config(
    emulator_url: str, moto_url: str, network: moto_server.Network, policy: str
) -> dict[str, object]:
    """What the spanning example needs changed to run on the emulator and moto: Hetzner's
    endpoint, and EC2's endpoints, network and policy under its ``ec2:`` settings."""
    ec2 = ec2_stack_config(moto_url, network, policy)
    prefix = "orca-machines:"
    return {
        "hcloud:endpoint": emulator_url,
        "aws:endpoints": ec2.pop("aws:endpoints"),
        "orca-machines:ec2": {k.removeprefix(prefix): v for k, v in ec2.items()},
    }
