"""Test tools shared by ``tests/`` and ``bench/``: run from a checkout, never installed.

pytest finds the fixtures through ``pytest_plugins`` in ``tests/conftest.py``; benchmarks
import the modules (``python -m bench.load`` from the project root).

=========================  ==================================================================
``testkit.fixtures``       the pytest plugin: ``emulator``, ``hetzner_env``,
                           ``hetzner_provider``, ``hcloud``, ``emulator_api`` (Hetzner);
                           ``moto``, ``aws``, ``ec2_world``, ``make_ec2_provider``,
                           ``ec2_provider``, ``fault_proxy``, ``spot_world``, ``spot_events``
                           (EC2); ``hetzner_cloud``,
                           ``ec2_cloud`` and ``cloud`` (each of them in turn, for contracts);
                           ``clock``, ``make_clocked_hetzner``, ``clocked_hetzner``,
                           ``make_clocked_ec2``, ``clocked_ec2`` (providers on that clock);
                           ``recorded`` (the runtime's metrics and spans), ``workload_scrape``;
                           ``span`` and ``fake_span`` (pools spanning clouds); ``make_clocked``
                           (``cloud``'s provider on ``clock``); ``fence_url`` (each store a
                           fence lives in, in turn: a folder, a bucket of moto's server)
``testkit.specs``          ``spec()`` / ``ec2_spec()``: the one ``MachineSpec`` builder;
                           ``OWNER`` of the fixtures' providers
``testkit.hetzner``        the emulator as a process (``running``), ``TOKEN``, the official
                           client at it, ``foreign_server``, ``RawApi`` (plain HTTP)
``testkit.moto_server``    moto's server as a process, ``build_world`` (VPC, subnets, group,
                           profile), ``client``, ``launch_tagged``, ``count_calls``
``testkit.ec2_events``     EC2's notices on moto: ``make_queue`` (the stack's queue and rules),
                           the events EC2 and AWS Health send, in their shapes, and ``put``
                           (moto emits none itself), ``depth`` (what the queue holds)
``testkit.fault_proxy``    ``FaultProxy``: errors, drops and delays in front of moto per action
``testkit.clouds``         ``Cloud``: one cloud as the contract tests ask it (``of_emulator``,
                           ``of_moto``)
``testkit.span``           ``Span``: the emulator and moto at once, with a pool whose
                           places span them (``PLACES``; the fixture ``span``), and
                           ``FAKE_PLACES`` with the third cloud (the fixture ``fake_span``)
``testkit.fake_cloud``     a third cloud kept in a file, built as a cloud's packages are and
                           joined by a line in each registry (``register`` in this process,
                           ``child_env`` for the CLI and the engine's processes)
``testkit.telemetry``      ``recording``/``Recorded``: the runtime's metrics and spans read
                           back in memory (the fixture ``recorded``)
``testkit.metrics_endpoint``  ``serving``: a process serving metrics, scraped over HTTP
``testkit.workload``       ``python -m testkit.workload``: a short workload, metrics served
``testkit.clock``          ``ManualClock``: time that passes when the test or bench says so
``testkit.simulation``     ``simulate``: an autoscaler's rounds against providers, checked
``testkit.program_harness``  the Pulumi program run under mocks (``run``, ``hetzner``, ``ec2``)
``testkit.commands``       ``machines_cli`` (the CLI as CI runs it), ``git``, ``commit``
``testkit.creators``       ``python -m testkit.creators``: an autoscaler process creating at
                           once with others; ``run`` starts several (the fence's tests, bench)
``testkit.lax_s3``         ``serving``: an S3 store that ignores ``If-None-Match``/``If-Match``
``testkit.fences``         ``entries``: what a fence's store holds, read behind its back
``testkit.engine_stacks``  for the engine tests: ``pin`` (a version ``requirements.txt``
                           pins), the stacks' names, settings and variables
``testkit.golden``         ``assert_golden``: output against the files in ``tests/ci/golden/``
``testkit.readme``         a section of the README or of ``docs/<name>.md`` (``doc``), its
                           code blocks and tables, for tests that run or check them
``testkit.imports``        the import graph of ``machines`` with its imports by name, its
                           cycles and imports against a layers contract (``python -m``)
=========================  ==================================================================
"""
