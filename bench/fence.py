"""One max across processes: N autoscaler processes creating at once into a pool of max 10,
with the fence in a folder (``file://``), in S3 (moto's server, ``s3://``), and without it.

Each of N processes (1, 2, 4, 8: processes, ``testkit.creators``, each ``Provider.of`` from
the environment an autoscaler has) makes 10 machines of its own names as fast as it can,
all starting at once. Two pools: one on the emulator (Hetzner's cx23 in fsn1), and one that
spans both clouds (``testkit.span.PLACES``: Hetzner's cax11 in fsn1 and nbg1, then EC2's
t4g.micro behind the fault proxy), Hetzner's project limited to 5 servers so the rest
goes to EC2. Nothing is deleted, so the machines the clouds hold at the end (counted by
their own listings) are the peak. Per run: the peak, the creates answered a second (all
processes' answers over the run's wall time), the store's requests per create (reads and
writes; the S3 store's one probe apart), and the wait a lost race cost (the seconds lost
races took, per lost race). Prints a Markdown table.

    python -m bench.fence
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from emulator.process import Emulator
from testkit import creators, hetzner, moto_server
from testkit.fault_proxy import FaultProxy
from testkit.fixtures import fence_s3_url
from testkit.span import PLACES, pools_json

MAX = 10
EACH = 10
"""Creates each process sends: alone, one process makes the pool's max."""
PROCESSES = (1, 2, 4, 8)
HETZNER_LIMIT = 5
"""The emulator's project server limit in the spanning runs: the rest goes to EC2."""
BUCKET = "orca-fence-bench"

Row = tuple[str, str, int, int, float, str, str]


@contextmanager
def clouds(workdir: Path) -> Iterator[tuple[Emulator, moto_server.MotoServer, dict[str, str]]]:
    """The emulator, moto's server behind the fault proxy (EC2) and as S3, and the
    environment pointing at all of them."""
    with (
        moto_server.running(workdir) as moto,
        FaultProxy(moto.url).serving() as proxy,
        hetzner.running("--seed", "7") as emulator,
    ):
        environ = {
            **hetzner.environment(emulator),
            **moto_server.CREDENTIALS,
            "AWS_ENDPOINT_URL": proxy.url,
        }
        yield emulator, moto, environ


def fresh(emulator: Emulator, moto: moto_server.MotoServer) -> dict[str, str]:
    """Both clouds emptied, a new EC2 world and the fence's bucket; the world's variables."""
    emulator.control.reset()
    emulator.control.set_timing(boot_seconds=0, action_seconds=0)
    world = moto.new_world()
    moto_server.client(moto.url, "s3").create_bucket(
        Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": moto_server.REGION}
    )
    return world.env


def live(emulator: Emulator, moto: moto_server.MotoServer) -> int:
    """The machines both clouds hold, by their own listings."""
    servers = hetzner.client(emulator).servers.get_all()
    instances = moto_server.client(moto.url).describe_instances(
        Filters=[{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )["Reservations"]
    return len(servers) + sum(len(r["Instances"]) for r in instances)


def run(
    emulator: Emulator,
    moto: moto_server.MotoServer,
    environ: dict[str, str],
    workdir: Path,
    *,
    pool: str,
    store: str,
    processes: int,
) -> Row:
    world = fresh(emulator, moto)
    spanning = pool == "across clouds"
    first = PLACES[0]
    pools = (
        pools_json(max=MAX)
        if spanning
        else json.dumps([{"name": "ci", "machineType": "cx23", "location": "fsn1", "max": MAX}])
    )
    if spanning:
        emulator.control.set_limits(servers=HETZNER_LIMIT)
    fence = {
        "none": {},
        "file://": {"ORCA_FENCE_URL": (workdir / f"fence-{time.monotonic_ns()}").as_uri()},
        "s3://": {"ORCA_FENCE_URL": fence_s3_url(moto.url, f"{BUCKET}/{time.monotonic_ns()}")},
    }[store]
    env = {**environ, **world, **fence, "ORCA_POOLS": pools}
    env.pop("ORCA_POOL_MAX", None)
    reports = creators.run(
        "hetzner",
        processes,
        EACH,
        machine_type=first.machine_type if spanning else "cx23",
        location=first.location if spanning else "fsn1",
        workdir=workdir,
        environ=env,
    )
    wall = max(sum(a["seconds"] for a in r.answers) for r in reports)
    answers = sum(len(r.answers) for r in reports)
    requests = sum(r.store.get("reads", 0) + r.store.get("writes", 0) for r in reports)
    lost = sum(r.store.get("lost", 0) for r in reports)
    lost_seconds = sum(r.store.get("lost_seconds", 0.0) for r in reports)
    per_create = "-" if store == "none" else f"{requests / answers:.2f}"
    per_lost = "-" if store == "none" else (f"{lost_seconds / lost:.3f} s" if lost else "none")
    return (
        pool,
        store,
        processes,
        live(emulator, moto),
        answers / wall if wall else 0.0,
        per_create,
        per_lost,
    )


def main() -> None:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp, clouds(Path(tmp)) as (emulator, moto, environ):
        saved = dict(os.environ)
        os.environ.update(moto_server.CREDENTIALS)
        try:
            for pool in ("one cloud", "across clouds"):
                for store in ("none", "file://", "s3://"):
                    for processes in PROCESSES:
                        row = run(
                            emulator,
                            moto,
                            environ,
                            Path(tmp),
                            pool=pool,
                            store=store,
                            processes=processes,
                        )
                        rows.append(row)
        finally:
            os.environ.clear()
            os.environ.update(saved)
    print(f"| pool (max {MAX}) | fence | processes | peak machines | creates / s "
          "| store requests / create | wait per lost race |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for pool, store, processes, peak, rate, per_create, per_lost in rows:
        print(
            f"| {pool} | {store} | {processes} | {peak} | {rate:.1f} | {per_create} | {per_lost} |"
        )


if __name__ == "__main__":
    main()
