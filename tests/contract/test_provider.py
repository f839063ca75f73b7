"""Building a provider: the owner's rule, and no credential in what it shows."""

from __future__ import annotations

import pytest

from machines.runtime.errors import InvalidNameError
from testkit.clouds import Cloud


def test_an_owner_that_is_not_a_label_value_is_refused(cloud: Cloud) -> None:
    with pytest.raises(InvalidNameError, match="owner 'team a' is not a label value"):
        cloud.provider("team a")


def test_the_credentials_are_not_in_the_repr(cloud: Cloud) -> None:
    provider = cloud.provider()

    assert cloud.secret not in repr(provider)
    assert cloud.secret not in str(provider)


def test_the_provider_says_its_kind_and_owner(cloud: Cloud) -> None:
    provider = cloud.provider("prod")

    assert (provider.kind, provider.owner) == (cloud.kind, "prod")
