import pytest

from machines import docker_arch
from machines.runtime.clouds.ec2.settings import ec2_arch, ubuntu_ami_name
from machines.runtime.clouds.hetzner.settings import hetzner_arch


@pytest.mark.parametrize(
    ("provider_arch", "docker"),
    [
        ("arm", "arm64"),
        ("aarch64", "arm64"),
        ("arm64", "arm64"),
        ("x86", "amd64"),
        ("x86_64", "amd64"),
        ("amd64", "amd64"),
        ("riscv64", "riscv64"),
        ("s390x", "s390x"),
    ],
)
def test_docker_arch(provider_arch, docker):
    assert docker_arch(provider_arch) == docker


def test_hetzner_and_ec2_names_round_trip():
    for arch in ("amd64", "arm64"):
        assert docker_arch(hetzner_arch(arch)) == arch
        assert docker_arch(ec2_arch(arch)) == arch


def test_ubuntu_ami_pattern_names_the_architecture():
    assert ubuntu_ami_name("x86_64") == (
        "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*"
    )
