import pytest
from pydantic import ValidationError

from machines import Created, Machine, MachineSpec, Status
from machines.runtime.models import machine_address
from testkit.specs import spec


def machine() -> Machine:
    return Machine(
        id="1",
        name="ci-1",
        status=Status.RUNNING,
        machine_type="cx23",
        location="fsn1",
        address="192.0.2.1",
        pool="ci",
    )


def test_spec_is_immutable():
    with pytest.raises(ValidationError):
        spec().name = "other"  # type: ignore[misc]


def test_spec_refuses_a_bad_name_naming_field_and_rule():
    with pytest.raises(ValidationError) as error:
        spec(name="CI_1")
    assert "name" in str(error.value)
    assert "1 to 63 characters of a-z, 0-9 and '-'" in str(error.value)


def test_spec_refuses_a_pool_that_is_not_a_label_value():
    with pytest.raises(ValidationError, match="pool"):
        spec(pool="ci pool")


def test_spec_refuses_an_empty_pool():
    with pytest.raises(ValidationError, match="pool is empty"):
        spec(pool="")


def test_spec_refuses_an_empty_type():
    with pytest.raises(ValidationError, match="machine_type"):
        spec(machine_type="")


def test_user_data_is_not_in_repr_or_str():
    secret = "#cloud-config\npassword: hunter2"
    shown = spec(user_data=secret)
    assert "hunter2" not in repr(shown)
    assert "hunter2" not in str(shown)


def test_user_data_is_not_in_validation_errors():
    with pytest.raises(ValidationError) as error:
        MachineSpec(
            name="bad name", machine_type="cx23", location="fsn1", pool="ci", user_data="hunter2"
        )
    assert "hunter2" not in str(error.value)


def test_machine_fields_are_strings_but_its_times():
    fields = machine().model_dump()
    times = {"created", "paid_until", "ends_at"}
    assert all(isinstance(v, str) for k, v in fields.items() if k not in times)
    assert list(fields)[:7] == [
        "id", "name", "status", "machine_type", "location", "address", "pool",
    ]  # fmt: skip
    assert {fields[k] for k in times} == {None}  # a cloud that does not say: unknown


def test_created_ok_carries_the_machine():
    created = Created.success(machine())
    assert (created.ok, created.no_stock, created.failed) == (True, False, False)
    assert created.machine == machine()


def test_created_no_stock_has_a_reason_and_no_machine():
    created = Created.out_of_stock("no cx23 in fsn1")
    assert (created.ok, created.no_stock, created.machine) == (False, True, None)
    assert created.reason == "no cx23 in fsn1"


def test_created_failure_is_neither_ok_nor_no_stock():
    created = Created.failure("bad")
    assert (created.ok, created.no_stock, created.failed) == (False, False, True)


def test_address_is_the_first_one_set():
    assert machine_address(None, "2001:db8::/64") == "2001:db8::/64"
    assert machine_address("192.0.2.1", "10.0.0.1") == "192.0.2.1"
    assert machine_address("", None) == ""
