"""The design document, held to its own text: every name it gives, its structs' fields in
its order, its example lines typed as written, on each cloud. The expectations are read from
the document (``testkit.design``), so a line the document changes changes the test."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Sequence

import pytest

import machines
from machines import Created, Machine, MachineSpec, Provider
from testkit.clouds import Cloud
from testkit.design import as_python, design, field_names
from testkit.specs import TYPICAL

DOC = design()
SECRET = "#cloud-config\nwrite_files: [{path: /etc/orca/token, content: s3cr3t-hunter2}]"

_PYTHON_TYPES: dict[str, type] = {"String": str, "Bool": bool}


def _the_documents_line_on(cloud: Cloud) -> str:
    """The example as Python, on ``cloud``: as written on Hetzner; on EC2 its type and
    location become an arm64 type of EC2 and a zone, the rest stays the document's."""
    code = as_python(DOC.example)
    if cloud.kind == "hetzner":
        return code
    arm = next(t for t, arch in cloud.arches.items() if arch == "arm64")
    return (
        code.replace('"hetzner"', f'"{cloud.kind}"')
        .replace('"cax31"', f'"{arm}"')
        .replace('"hel1"', f'"{TYPICAL[cloud.kind][1]}"')
    )


def test_the_example_runs_as_written(cloud: Cloud, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    scope: dict[str, object] = {
        "Provider": Provider,
        "MachineSpec": MachineSpec,
        "owner": "orca",
        "data": SECRET,
    }

    exec(_the_documents_line_on(cloud), scope)

    got = scope["got"]
    assert isinstance(got, Created)
    assert got.ok, got.reason
    assert got.machine is not None
    assert (got.machine.name, got.machine.pool) == ("orca-lab-7", "lab")
    assert scope["m"] == got.machine or getattr(scope["m"], "id", None) == got.machine.id
    assert scope["_"] is True, "delete says True once the machine is gone"
    assert got.machine.id not in cloud.live()
    assert "s3cr3t-hunter2" not in repr(got) + repr(scope["m"]) + caplog.text


def test_the_examples_arch_comment_is_what_arch_says(hetzner_cloud: Cloud) -> None:
    line = next(line for line in DOC.example if ".arch(" in line)
    machine_type, said = re.findall(r'"([^"]+)"', line)[:2]

    assert hetzner_cloud.provider("orca").arch(machine_type) == said


def test_a_machine_spec_takes_the_documents_fields_positionally_in_its_order() -> None:
    names = field_names(DOC.structs["MachineSpec"])
    values = ["orca-lab-7", "cax31", "hel1", SECRET, "lab"]

    positional = MachineSpec(*values)

    assert list(MachineSpec.model_fields)[: len(names)] == names
    assert positional == MachineSpec(**dict(zip(names, values, strict=True)))
    assert "hunter2" not in repr(positional) + str(positional)


def test_a_positional_machine_spec_is_validated_and_keeps_user_data_out_of_the_error() -> None:
    with pytest.raises(ValueError, match="name") as error:
        MachineSpec("Orca_Lab", "cax31", "hel1", SECRET, "lab")

    assert "hunter2" not in str(error.value)


def test_a_field_given_both_ways_or_one_too_many_is_a_type_error_without_values() -> None:
    with pytest.raises(TypeError, match="multiple values for argument 'name'"):
        MachineSpec("orca-lab-7", name="orca-lab-8", machine_type="cax31", location="hel1",
                    pool="lab")  # type: ignore[call-overload]  # fmt: skip
    with pytest.raises(TypeError, match="at most 5 positional") as error:
        MachineSpec("orca-lab-7", "cax31", "hel1", SECRET, "lab", "x")  # type: ignore[call-overload]

    assert "hunter2" not in str(error.value)


@pytest.mark.parametrize("struct", ["MachineSpec", "Machine"])
def test_the_models_fields_come_in_the_documents_order_with_its_types(struct: str) -> None:
    model = {"MachineSpec": MachineSpec, "Machine": Machine}[struct]
    documented = DOC.structs[struct].fields

    fields = list(model.model_fields.items())[: len(documented)]

    assert [name for name, _ in fields] == [name for name, _ in documented]
    for (name, info), (_, kind) in zip(fields, documented, strict=True):
        assert info.annotation is not None
        assert issubclass(info.annotation, _PYTHON_TYPES[kind]), name


def test_a_provider_has_the_documents_fields(cloud: Cloud) -> None:
    provider = cloud.provider("orca")

    for name, kind in DOC.structs["Provider"].fields:
        value = getattr(provider, name)
        if kind.startswith("List["):
            assert isinstance(value, Sequence), name
            assert not isinstance(value, str), name
            assert all(isinstance(item, str) for item in value), name
        else:
            assert isinstance(value, _PYTHON_TYPES[kind]), name
    assert (provider.kind, provider.owner) == (cloud.kind, "orca")


def test_provider_has_the_documents_methods_with_their_parameters() -> None:
    for method, signature in DOC.structs["Provider"].methods.items():
        if method == "__init__":
            continue  # the document's struct is built from its HCloud client; Python's by `of`
        params = re.findall(r"(\w+): \w+(?: = \"([^\"]*)\")?", signature.split("->")[0])
        ours = inspect.signature(getattr(Provider, method)).parameters
        for name, default in params:
            assert name in ours, f"Provider.{method} has no parameter {name}"
            if "=" in signature.split(f"{name}:", 1)[1].split(",")[0].split(")")[0]:
                assert ours[name].default == default, f"Provider.{method}({name}=...)"


def test_the_documents_parameter_names_work_as_keywords(hetzner_cloud: Cloud) -> None:
    p = Provider.of(kind="hetzner", owner="orca")

    got = p.create(spec=MachineSpec("orca-lab-7", "cax31", "hel1", SECRET, "lab"))

    assert got.ok, got.reason
    assert got.machine is not None
    assert p.arch(machine_type="cax31") == "arm64"
    assert [m.id for m in p.machines(pool="lab")] == [got.machine.id]
    assert p.delete(id=got.machine.id) is True


def test_every_function_and_alias_the_document_gives_is_exported_as_written() -> None:
    for function in DOC.functions:
        assert callable(getattr(machines, function))
        assert function in machines.__all__
    for alias, value in DOC.aliases.items():
        assert getattr(machines, alias) == value
        assert alias in machines.__all__
    for struct in DOC.structs:
        assert struct in machines.__all__
    assert "Created" in machines.__all__


def test_docker_arch_maps_the_names_the_document_lists() -> None:
    text = DOC.text.split("### `docker_arch`", 1)[1]
    for names, docker in re.findall(r"((?:`\w+`/?)+) is `(\w+)`", text):
        for name in re.findall(r"`(\w+)`", names):
            assert machines.docker_arch(name) == docker, name
    assert machines.docker_arch("riscv64") == "riscv64"  # "others as they are"
