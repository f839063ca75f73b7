"""``arch``: Docker's architecture of an instance type, from DescribeInstanceTypes, cached."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from machines.runtime.clouds.ec2.provider import Ec2Provider
from machines.runtime.errors import UnknownMachineTypeError
from testkit.moto_server import count_calls


def test_a_type_with_i386_and_x86_64_is_amd64(ec2_provider: Ec2Provider) -> None:
    assert ec2_provider.arch("t2.micro") == "amd64"


def test_each_type_is_asked_of_ec2_once(ec2_provider: Ec2Provider) -> None:
    calls = count_calls(ec2_provider._client)

    for _ in range(3):
        ec2_provider.arch("t3.micro")
        ec2_provider.arch("t4g.micro")

    assert calls == {"DescribeInstanceTypes": 2}


def test_many_threads_asking_at_once_make_one_request(ec2_provider: Ec2Provider) -> None:
    calls = count_calls(ec2_provider._client)
    start = threading.Barrier(16)

    def ask() -> str:
        start.wait()
        return ec2_provider.arch("c7g.large")

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: ask(), range(16)))

    assert answers == ["arm64"] * 16
    assert calls == {"DescribeInstanceTypes": 1}


def test_an_unknown_type_is_not_cached(ec2_provider: Ec2Provider) -> None:
    calls = count_calls(ec2_provider._client)

    for _ in range(2):
        with pytest.raises(UnknownMachineTypeError):
            ec2_provider.arch("x9.huge")

    assert calls == {"DescribeInstanceTypes": 2}
