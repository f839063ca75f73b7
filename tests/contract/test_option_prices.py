"""What a pool's options cost where the cloud bills them apart, from the cloud's own price
list through the provider (``PriceList.options`` / ``saving``): Hetzner's primary IPv4 per
location, EC2's root volume by size and type, else unknown saying why."""

from __future__ import annotations

import json
from decimal import Decimal

from botocore.stub import Stubber

from emulator.process import Emulator
from machines.automation.cost import price_list
from machines.runtime.clouds.ec2.options import Ec2Options, RootVolume
from machines.runtime.clouds.hetzner.options import HetznerOptions
from machines.runtime.pool import Pool
from testkit import hetzner
from testkit.clouds import Cloud


def listed_ipv4(emulator: Emulator, location: str) -> Decimal:
    """The primary IPv4's monthly net price in ``location``, as ``GET /pricing`` lists it."""
    pricing = hetzner.RawApi(emulator.url).get("/pricing").json()["pricing"]
    [ipv4] = [p for p in pricing["primary_ips"] if p["type"] == "ipv4"]
    [price] = [p for p in ipv4["prices"] if p["location"] == location]
    return Decimal(price["price_monthly"]["net"])


def test_a_hetzner_pool_with_ipv4_pays_the_primary_ipv4_and_an_ipv6_only_pool_saves_it(
    hetzner_cloud: Cloud, emulator: Emulator
) -> None:
    fsn1 = listed_ipv4(emulator, "fsn1")
    prices = price_list(hetzner_cloud.kind)
    with_ipv4 = Pool(name="ci")
    ipv6_only = Pool(name="ci", hetzner=HetznerOptions(ipv4=False))

    assert fsn1 > 0
    assert prices.options(with_ipv4, "fsn1") == fsn1
    assert prices.saving(with_ipv4, "fsn1") == 0
    assert prices.options(ipv6_only, "fsn1") == 0
    assert prices.saving(ipv6_only, "fsn1") == fsn1
    assert prices.unknown == ""


def test_an_ec2_root_volume_without_a_price_list_is_unknown_saying_why(
    ec2_cloud: Cloud,
) -> None:
    """moto's server has no Price List: the volume's price is unknown, and the list says
    why (against AWS it is the volume type's GB-month price times the size)."""
    prices = price_list(ec2_cloud.kind)
    pool = Pool(name="ci", ec2=Ec2Options(root_volume=RootVolume(size=100)))

    assert prices.options(pool, "eu-central-1a") is None
    assert "price list" in prices.unknown


def test_an_ec2_root_volume_is_its_types_gb_month_price_times_its_size(
    ec2_cloud: Cloud,
) -> None:
    """The Price List's answer for a gp3 volume in the region (moto has none: botocore's
    Stubber answers as AWS does), asked once per type and region."""
    provider = ec2_cloud.provider()
    prices = provider.prices()
    pricing = provider._pricing_client()  # type: ignore[attr-defined]
    product = {
        "product": {"productFamily": "Storage", "attributes": {"volumeApiName": "gp3"}},
        "terms": {
            "OnDemand": {
                "T": {
                    "priceDimensions": {"D": {"unit": "GB-Mo", "pricePerUnit": {"USD": "0.0952"}}}
                }
            }
        },
    }
    with Stubber(pricing) as stub:
        stub.add_response("get_products", {"PriceList": [json.dumps(product)]})
        pool = Pool(name="ci", ec2=Ec2Options(root_volume=RootVolume(size=100)))
        assert prices.options(pool, "eu-central-1a") == Decimal("9.5200")
        assert prices.options(pool, "eu-central-1b") == Decimal("9.5200")
        stub.assert_no_pending_responses()
