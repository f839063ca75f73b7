import re

import pytest

from machines.runtime.clouds.ec2.settings import Ec2Settings
from machines.runtime.clouds.hetzner.settings import HetznerSettings
from machines.runtime.errors import SettingsError
from machines.runtime.models import Market
from machines.runtime.settings import (
    ORCA_POOL_MARKET,
    ORCA_POOL_MAX,
    Timeouts,
    pool_market,
    pool_market_env,
    pool_max,
    pool_max_env,
)

TOKEN = "t" * 64


def test_hetzner_defaults():
    settings = HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN})
    assert settings.endpoint == "https://api.hetzner.cloud/v1"
    assert settings.image == "ubuntu-24.04"
    assert settings.ssh_keys == ()
    assert settings.firewall == ""


def test_hetzner_settings_are_read():
    settings = HetznerSettings.from_env(
        {
            "HCLOUD_TOKEN": TOKEN,
            "HCLOUD_ENDPOINT": "http://127.0.0.1:4080/v1/",
            "ORCA_HCLOUD_IMAGE": "debian-12",
            "ORCA_HCLOUD_SSH_KEYS": "ops,my laptop",
            "ORCA_HCLOUD_FIREWALL": "workers",
        }
    )
    assert settings.endpoint == "http://127.0.0.1:4080/v1"
    assert settings.image == "debian-12"
    assert settings.ssh_keys == ("ops", "my laptop")
    assert settings.firewall == "workers"


def test_missing_token_names_the_variable():
    with pytest.raises(SettingsError, match="HCLOUD_TOKEN is not set"):
        HetznerSettings.from_env({})


def test_token_with_a_line_break_is_refused_without_showing_it():
    with pytest.raises(SettingsError, match="HCLOUD_TOKEN has spaces") as error:
        HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN + "\n"})
    assert TOKEN not in str(error.value)


@pytest.mark.parametrize("length", [32, 63, 65, 128])
def test_a_token_of_another_length_than_hetzners_is_refused_without_showing_it(length):
    given = "k" * length
    with pytest.raises(SettingsError) as error:
        HetznerSettings.from_env({"HCLOUD_TOKEN": given})
    assert str(error.value).startswith(
        f"HCLOUD_TOKEN has {length} characters, but a Hetzner Cloud API token has exactly 64: "
    )
    assert given not in str(error.value)


def test_token_is_hidden_in_repr():
    settings = HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN})
    assert TOKEN not in repr(settings)
    assert TOKEN not in str(settings)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ops,,ci", "empty item"),
        ("ops,", "empty item"),
        ("ops, ci", "spaces around it"),
        (" ops", "spaces around it"),
        ("ops,ops", "more than once"),
    ],
)
def test_malformed_ssh_key_lists_are_refused(value, message):
    with pytest.raises(SettingsError, match=f"ORCA_HCLOUD_SSH_KEYS.*{message}"):
        HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN, "ORCA_HCLOUD_SSH_KEYS": value})


def test_endpoint_must_be_a_url():
    with pytest.raises(SettingsError, match=r"HCLOUD_ENDPOINT=.*not an http"):
        HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": "api.hetzner.cloud"})


def test_hetzner_env_round_trips():
    settings = HetznerSettings.from_env(
        {
            "HCLOUD_TOKEN": TOKEN,
            "ORCA_HCLOUD_SSH_KEYS": "a,b",
            "ORCA_HCLOUD_FIREWALL": "fw",
        }
    )
    assert HetznerSettings.from_env({"HCLOUD_TOKEN": TOKEN, **settings.env()}) == settings
    assert TOKEN not in str(settings.env())


EC2 = {
    "AWS_REGION": "eu-central-1",
    "ORCA_EC2_SUBNETS": "eu-central-1a=subnet-1,eu-central-1b=subnet-2",
    "ORCA_EC2_SECURITY_GROUP": "sg-1",
    "ORCA_EC2_INSTANCE_PROFILE": "workers",
}


def test_ec2_settings_are_read():
    settings = Ec2Settings.from_env(EC2)
    assert settings.subnets == {"eu-central-1a": "subnet-1", "eu-central-1b": "subnet-2"}
    assert (settings.region, settings.security_group) == ("eu-central-1", "sg-1")


def test_ec2_region_falls_back_to_the_default_region():
    env = {k: v for k, v in EC2.items() if k != "AWS_REGION"}
    assert Ec2Settings.from_env(env | {"AWS_DEFAULT_REGION": "us-east-1"}).region == "us-east-1"


@pytest.mark.parametrize("missing", sorted(EC2))
def test_ec2_missing_setting_names_the_variable(missing):
    env = {k: v for k, v in EC2.items() if k != missing}
    with pytest.raises(SettingsError, match=missing):
        Ec2Settings.from_env(env)


@pytest.mark.parametrize("subnets", ["eu-central-1a", "=subnet-1", "a=subnet-1,a=subnet-2"])
def test_malformed_subnets_are_refused(subnets):
    with pytest.raises(SettingsError, match="ORCA_EC2_SUBNETS"):
        Ec2Settings.from_env(EC2 | {"ORCA_EC2_SUBNETS": subnets})


def test_ec2_env_round_trips():
    settings = Ec2Settings.from_env(EC2)
    assert Ec2Settings.from_env(settings.env()) == settings


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_timeouts_must_be_positive_seconds(value):
    with pytest.raises(SettingsError, match="ORCA_REQUEST_TIMEOUT"):
        Timeouts.from_env({"ORCA_REQUEST_TIMEOUT": value})


def test_timeouts_are_read():
    assert Timeouts.from_env({"ORCA_REQUEST_TIMEOUT": "2.5", "ORCA_CALL_TIMEOUT": "30"}) == (
        Timeouts(request=2.5, call=30)
    )


def test_pool_max_reads_pool_number_pairs_and_writes_them_back() -> None:
    assert pool_max({}) == {}
    assert pool_max({ORCA_POOL_MAX: "lab=20,ci=50"}) == {"lab": 20, "ci": 50}
    assert pool_max_env({"lab": 20, "ci": 50}) == {ORCA_POOL_MAX: "lab=20,ci=50"}
    assert pool_max_env({}) == {}
    for bad in ("lab", "lab=-1", "=3", "lab=2,lab=3", "lab=2,"):
        with pytest.raises(SettingsError, match=ORCA_POOL_MAX):
            pool_max({ORCA_POOL_MAX: bad})


def test_pool_market_reads_pool_market_pairs_and_writes_back_those_not_on_demand() -> None:
    assert pool_market({}) == {}
    read = pool_market({ORCA_POOL_MARKET: "ci=spot,lab=spot-then-on-demand,ops=on-demand"})
    assert read == {"ci": Market.SPOT, "lab": Market.SPOT_THEN_ON_DEMAND, "ops": Market.ON_DEMAND}
    assert pool_market_env(read) == {ORCA_POOL_MARKET: "ci=spot,lab=spot-then-on-demand"}
    assert pool_market_env({"ops": Market.ON_DEMAND}) == {}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("ci", "is not POOL=MARKET"),
        ("=spot", "is not POOL=MARKET"),
        ("ci=cheap", "'cheap' is not a market: use on-demand, spot, spot-then-on-demand"),
        ("ci=spot,ci=on-demand", "names pool 'ci' more than once"),
        ("ci=spot,", "has an empty item"),
    ],
)
def test_a_malformed_pool_market_names_the_variable_and_what_to_write(value, why) -> None:
    with pytest.raises(SettingsError, match=f"{ORCA_POOL_MARKET}.*{re.escape(why)}"):
        pool_market({ORCA_POOL_MARKET: value})


def test_a_token_with_a_line_break_inside_is_refused_without_showing_it():
    broken = TOKEN[:32] + "\n" + TOKEN[32:]
    with pytest.raises(SettingsError, match="HCLOUD_TOKEN has a line break") as error:
        HetznerSettings.from_env({"HCLOUD_TOKEN": broken})
    assert TOKEN[:32] not in str(error.value)


@pytest.mark.parametrize(
    "name", ["AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN"]
)
def test_an_aws_credential_with_a_line_break_inside_is_refused_without_showing_it(name):
    with pytest.raises(SettingsError, match=f"{name} has a line break") as error:
        Ec2Settings.from_env({**EC2, name: "abcd\nefgh"})
    assert "abcd" not in str(error.value)


@pytest.mark.parametrize("region", ["eu central", "eu-central-1\t", "EU-CENTRAL-1", "central"])
def test_a_region_that_is_no_region_name_is_refused(region):
    with pytest.raises(SettingsError, match="AWS_REGION"):
        Ec2Settings.from_env({**EC2, "AWS_REGION": region})


@pytest.mark.parametrize("port", ["99999", "0", "65536", "http"])
def test_an_endpoint_port_out_of_range_is_refused_on_both_clouds(port):
    with pytest.raises(SettingsError, match="HCLOUD_ENDPOINT"):
        HetznerSettings.from_env(
            {"HCLOUD_TOKEN": TOKEN, "HCLOUD_ENDPOINT": f"http://127.0.0.1:{port}/v1"}
        )
    with pytest.raises(SettingsError, match="AWS_ENDPOINT_URL"):
        Ec2Settings.from_env({**EC2, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"})
