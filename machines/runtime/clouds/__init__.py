"""One package per cloud, each built the same way, registered here by its kind.

Each has ``settings.py`` (its settings from environment variables and back), ``client.py``
(the official client, set up once), ``answers.py`` (the cloud's answers and errors in the
package's terms), ``provider.py`` (the ``Provider``: only the cloud's own steps, the shape
is ``machines.runtime.provider``'s), ``prices.py`` (its price list, read through the provider's
calls), ``billing.py`` (how it bills a machine's time, with its source), ``catalogue.py``
(what it sells: types, where, images; asked once and kept) and ``machine.py`` (a machine's
create arguments, shared with the program). ``Provider.of`` imports a cloud's package only when
that cloud is asked for, so ``import machines`` loads no cloud client.
"""

from __future__ import annotations

PROVIDERS: dict[str, str] = {
    "hetzner": "machines.runtime.clouds.hetzner.provider:HetznerProvider",
    "ec2": "machines.runtime.clouds.ec2.provider:Ec2Provider",
}
"""Each provider kind and where its ``Provider`` class is: adding a cloud adds a line."""
