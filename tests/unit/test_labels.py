import pytest

from machines import OWNER_LABEL, POOL_LABEL
from machines.runtime.errors import InvalidNameError
from machines.runtime.labels import (
    belongs_to,
    check_host_name,
    check_pool,
    is_machine_key,
    is_stack_name,
    machine_host,
    machine_name,
    pool_labels,
    pool_selector,
)


def test_label_keys_are_the_documented_ones():
    assert (POOL_LABEL, OWNER_LABEL) == ("orca-pool", "orca-owner")


def test_pool_labels_carry_the_owner():
    assert pool_labels("ci", "prod") == {"orca": "pool", "orca-pool": "ci", "orca-owner": "prod"}


def test_pool_labels_without_owner_have_no_owner_label():
    assert pool_labels("ci", "") == {"orca": "pool", "orca-pool": "ci"}


def test_selector_names_pool_and_owner():
    assert pool_selector("ci", "prod") == "orca=pool,orca-pool=ci,orca-owner=prod"


def test_selector_without_owner_requires_the_owner_label_absent():
    assert pool_selector("ci", "") == "orca=pool,orca-pool=ci,!orca-owner"


@pytest.mark.parametrize(
    ("labels", "owner", "pool", "expected"),
    [
        ({"orca": "pool", "orca-pool": "ci", "orca-owner": "a"}, "a", "ci", True),
        ({"orca": "pool", "orca-pool": "ci", "orca-owner": "a"}, "a", None, True),
        ({"orca": "pool", "orca-pool": "ci", "orca-owner": "b"}, "a", "ci", False),
        ({"orca": "pool", "orca-pool": "gpu", "orca-owner": "a"}, "a", "ci", False),
        ({"orca-pool": "ci", "orca-owner": "a"}, "a", "ci", False),
        ({"orca": "pool", "orca-pool": "ci"}, "", "ci", True),
        ({"orca": "pool", "orca-pool": "ci", "orca-owner": "a"}, "", "ci", False),
    ],
)
def test_belongs_to_needs_orca_label_owner_and_pool(labels, owner, pool, expected):
    assert belongs_to(labels, owner, pool) is expected


@pytest.mark.parametrize("name", ["a", "ci-1", "a" * 63, "0abc", "x-y-z"])
def test_host_names_accepted(name):
    assert check_host_name(name) == name


@pytest.mark.parametrize("name", ["", "-a", "a-", "A", "a_b", "a.b", "a" * 64, "ü"])
def test_host_names_refused_with_the_rule(name):
    with pytest.raises(InvalidNameError, match="not a host name: use 1 to 63"):
        check_host_name(name)


def test_empty_pool_is_refused():
    with pytest.raises(InvalidNameError, match="pool is empty"):
        check_pool("")


def test_pool_must_be_a_label_value():
    with pytest.raises(InvalidNameError, match="not a label value"):
        check_pool("ci pool")


def test_a_stack_machine_is_owner_pool_index_in_the_stack_and_dot_stack_in_the_cloud():
    assert machine_host("prod", "ci", 3) == "prod-ci-3"
    assert machine_name("prod", "ci", 3) == "prod-ci-3.stack"


def test_a_stack_machine_without_owner_is_pool_index():
    assert machine_name("", "ci", 1) == "ci-1.stack"


def test_machine_name_that_is_not_a_host_name_is_refused():
    with pytest.raises(InvalidNameError, match="machine name 'prod-CI_x-1'"):
        machine_name("prod", "CI_x", 1)


def test_the_stacks_names_are_told_from_the_old_form_and_the_runtimes():
    assert is_stack_name(machine_name("orca", "lab", 7))
    for name in ("orca-lab-7", "orca-lab-7.other", ".stack", "Orca.stack", "a.b.stack"):
        assert not is_stack_name(name)


def test_a_machine_key_names_its_pool_only():
    assert is_machine_key("prod-ci-3", "prod", "ci")
    for key in ("prod-ci-x", "prod-cix-3", "prod-ci-", "prod-ci-3.stack", "ci-3"):
        assert not is_machine_key(key, "prod", "ci")


def test_without_owner_an_empty_owner_label_is_someone_elses():
    assert not belongs_to({"orca": "pool", "orca-pool": "ci", "orca-owner": ""}, "", "ci")
