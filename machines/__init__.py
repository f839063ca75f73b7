"""Cloud machines for orca's worker-pool autoscaler, the same API on every cloud.

provider = Provider.of("hetzner", owner="prod")
created = provider.create(MachineSpec(name="ci-1", machine_type="cax11",
                                      location="fsn1", pool="ci"))
"""

from machines.arch import docker_arch
from machines.errors import (
    CloudError,
    ForeignMachineError,
    InvalidMachineIdError,
    InvalidNameError,
    MachinesError,
    SettingsError,
    StackMachineError,
    UnknownMachineTypeError,
    UnknownProviderError,
)
from machines.labels import MANAGED_BY_LABEL, OWNER_LABEL, POOL_LABEL
from machines.models import Created, Machine, MachineSpec, Status
from machines.provider import Provider

__all__ = [
    "MANAGED_BY_LABEL",
    "OWNER_LABEL",
    "POOL_LABEL",
    "CloudError",
    "Created",
    "ForeignMachineError",
    "InvalidMachineIdError",
    "InvalidNameError",
    "Machine",
    "MachineSpec",
    "MachinesError",
    "Provider",
    "SettingsError",
    "StackMachineError",
    "Status",
    "UnknownMachineTypeError",
    "UnknownProviderError",
    "docker_arch",
]
