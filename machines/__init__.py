"""Cloud machines for orca's worker-pool autoscaler, the same API on every cloud.

provider = Provider.of("hetzner", owner="prod")
created = provider.create(MachineSpec(name="ci-1", machine_type="cax11",
                                      location="fsn1", pool="ci"))
"""

from machines.runtime.arch import docker_arch
from machines.runtime.errors import (
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
from machines.runtime.labels import MANAGED_BY_LABEL, OWNER_LABEL, POOL_LABEL
from machines.runtime.models import Created, Machine, MachineSpec, Status
from machines.runtime.provider import Provider

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
