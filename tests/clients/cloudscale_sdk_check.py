#!/usr/bin/env python3
"""Checks the cloudscale simulator with the independent Python clients of the real API.

The PyPI packages `cloudscale-sdk` (module `cloudscale`) and `cloudscale-cli` (module
`cloudscale_cli`) were written against https://api.cloudscale.ch/v1, not against the simulator.
This script drives them against a running `skyplan sim serve --provider cloudscale` and checks
every answer; it exits 1 on any mismatch, 2 when it cannot start.

Usage: CLOUDSCALE_API_URL=http://127.0.0.1:PORT/v1 CLOUDSCALE_API_TOKEN=TOKEN \
       python cloudscale_sdk_check.py

Both clients read CLOUDSCALE_API_URL when they are imported, so it must be set beforehand. They
have no load-balancer support, so load balancers are not covered here. The world must be fresh
(`sim serve` on a new world file): the checks rely on its default inventory.
"""

import ipaddress
import json
import os
import sys
import traceback

API_URL = os.environ.get("CLOUDSCALE_API_URL")
TOKEN = os.environ.get("CLOUDSCALE_API_TOKEN")
if not API_URL or not TOKEN:
    sys.exit("set CLOUDSCALE_API_URL and CLOUDSCALE_API_TOKEN (see the docstring)")

from click.testing import CliRunner  # noqa: E402  (imported after the URL check on purpose)
from cloudscale import Cloudscale, CloudscaleApiException  # noqa: E402
from cloudscale.lib import CloudscaleMutable  # noqa: E402  (raw payloads, past the SDK's signatures)
from cloudscale_cli.cli import cli as cloudscale_cli  # noqa: E402

# The default world (crates/sim/src/cloudscale/inventory.rs).
DEFAULT_FLOATING_IPS = ["5.102.150.123/32", "5.102.150.124/32", "5.102.150.125/32"]
DEFAULT_NETWORK = "2db69ba3-1864-4608-853a-0771b6885a3a"


class Checks:
    """Counts checks and keeps going after a mismatch, so one run reports all of them."""

    def __init__(self):
        self.passed = 0
        self.failures = []

    def equal(self, what, actual, expected):
        if actual == expected:
            self.passed += 1
        else:
            self.failures.append(f"{what}: got {actual!r}, expected {expected!r}")

    def true(self, what, condition, detail=""):
        self.equal(what + (f" ({detail})" if detail else ""), bool(condition), True)

    def api_error(self, what, status, call, *args, **kwargs):
        """`call` must fail with HTTP `status` and a `detail` in the body."""
        try:
            call(*args, **kwargs)
        except CloudscaleApiException as error:
            self.equal(f"{what}: status", error.status_code, status)
            self.true(f"{what}: detail", "detail" in error.response["data"], error.response)
            return
        self.failures.append(f"{what}: succeeded, expected HTTP {status}")

    def section(self, name, run, *args):
        """Runs one group of checks; an unexpected exception fails the group, not the script."""
        print(f"-- {name}", flush=True)
        try:
            run(self, *args)
        except Exception:  # noqa: BLE001  (report and go on with the other groups)
            self.failures.append(f"{name}: raised\n{traceback.format_exc()}")


def by_key(items, key, value):
    return [item for item in items if item.get(key) == value]


def check_auth(c, _):
    wrong = Cloudscale(api_token="not-the-token")
    c.api_error("wrong token", 401, wrong.server.get_all)


def check_floating_ips(c, api):
    listed = api.floating_ip.get_all()
    c.equal("default floating IPs", [f["network"] for f in listed], DEFAULT_FLOATING_IPS)
    first = listed[0]
    c.equal("floating IP href", first["href"], f"{API_URL}/floating-ips/5.102.150.123")
    c.equal("floating IP type and region", (first["type"], first["region"]),
            ("regional", {"slug": "lpg", "zones": [{"slug": "lpg1"}]}))

    v4 = api.floating_ip.create(ip_version=4, reverse_ptr="web.example.com", tags={"team": "a"})
    network = ipaddress.ip_network(v4["network"])
    c.equal("new IPv4 floating IP is one address", network.prefixlen, 32)
    c.equal("new IPv4 floating IP fields", (v4["ip_version"], v4["reverse_ptr"], v4["tags"], v4["server"]),
            (4, "web.example.com", {"team": "a"}, None))
    ip = str(network.network_address)
    c.equal("floating IP read back", api.floating_ip.get_by_uuid(ip), v4)

    single6 = api.floating_ip.create(ip_version=6)
    c.equal("IPv6 floating IP without prefix_length is one address",
            ipaddress.ip_network(single6["network"]).prefixlen, 128)
    global6 = api.floating_ip.create(ip_version=6, prefix_length=56, scope="global")
    c.equal("IPv6 /56 floating network", ipaddress.ip_network(global6["network"]).prefixlen, 56)
    c.equal("global floating IP has no region", (global6["type"], global6["region"]), ("global", None))
    c.api_error("reverse_ptr on a floating network", 400, api.floating_ip.create,
                ip_version=6, prefix_length=56, reverse_ptr="net.example.com")
    c.api_error("IPv4 prefix_length 56", 400, api.floating_ip.create, ip_version=4, prefix_length=56)
    c.api_error("unknown region", 400, api.floating_ip.create, ip_version=4, region="nowhere")

    api.floating_ip.update(ip, reverse_ptr="api.example.com", tags={"team": "b"})
    updated = api.floating_ip.get_by_uuid(ip)
    c.equal("updated floating IP", (updated["reverse_ptr"], updated["tags"]), ("api.example.com", {"team": "b"}))
    c.equal("tag filter key=value", [f["network"] for f in api.floating_ip.get_all(filter_tag="team=b")],
            [v4["network"]])
    c.equal("tag filter on a missing value", api.floating_ip.get_all(filter_tag="team=a"), [])
    c.equal("tag filter key only", len(api.floating_ip.get_all(filter_tag="team")), 1)

    for created in (v4, single6, global6):
        address = str(ipaddress.ip_network(created["network"]).network_address)
        api.floating_ip.delete(address)
        c.api_error(f"deleted floating IP {address}", 404, api.floating_ip.get_by_uuid, address)
    c.equal("floating IPs after deletes", [f["network"] for f in api.floating_ip.get_all()], DEFAULT_FLOATING_IPS)


def check_networks_and_subnets(c, api):
    default = api.network.get_by_uuid(DEFAULT_NETWORK)
    c.equal("default network", (default["name"], default["zone"]["slug"]), ("default", "lpg1"))

    auto = api.network.create(name="auto", zone="rma1", tags={"purpose": "check"})
    c.equal("new network defaults", (auto["mtu"], auto["zone"], auto["tags"]),
            (9000, {"slug": "rma1"}, {"purpose": "check"}))
    c.equal("automatic IPv4 subnet", [s["cidr"] for s in auto["subnets"]], ["172.16.0.0/24"])
    auto_subnet = api.subnet.get_by_uuid(auto["subnets"][0]["uuid"])
    c.equal("automatic subnet's network", auto_subnet["network"]["uuid"], auto["uuid"])

    bare = api.network.create(name="bare", mtu=1500, auto_create_ipv4_subnet=False)
    c.equal("network without automatic subnet", (bare["mtu"], bare["subnets"]), (1500, []))
    api.network.update(bare["uuid"], name="bare-renamed", mtu=1400, tags={"purpose": "check"})
    renamed = api.network.get_by_uuid(bare["uuid"])
    c.equal("updated network", (renamed["name"], renamed["mtu"], renamed["tags"]),
            ("bare-renamed", 1400, {"purpose": "check"}))
    c.equal("network tag filter", sorted(n["name"] for n in api.network.get_all(filter_tag="purpose=check")),
            ["auto", "bare-renamed"])
    c.api_error("zone is create-only", 400, CloudscaleMutable.update, api.network, bare["uuid"],
                payload={"zone": "lpg1"})

    subnet = api.subnet.create(cidr="192.168.7.0/24", network_uuid=bare["uuid"], gateway_address="192.168.7.1",
                               dns_servers=["192.168.7.2"], tags={"tier": "db"})
    c.equal("new subnet", (subnet["cidr"], subnet["gateway_address"], subnet["dns_servers"], subnet["tags"]),
            ("192.168.7.0/24", "192.168.7.1", ["192.168.7.2"], {"tier": "db"}))
    c.equal("subnet's network", subnet["network"]["uuid"], bare["uuid"])
    c.api_error("gateway outside the subnet", 400, api.subnet.create, cidr="192.168.8.0/24",
                network_uuid=bare["uuid"], gateway_address="10.9.9.9")
    c.api_error("subnet in an unknown network", 400, api.subnet.create, cidr="192.168.9.0/24",
                network_uuid="00000000-0000-4000-8000-000000000000")
    api.subnet.update(subnet["uuid"], gateway_address="192.168.7.254", dns_servers=["9.9.9.9"])
    updated = api.subnet.get_by_uuid(subnet["uuid"])
    c.equal("updated subnet", (updated["gateway_address"], updated["dns_servers"]), ("192.168.7.254", ["9.9.9.9"]))
    c.equal("subnet tag filter", [s["uuid"] for s in api.subnet.get_all(filter_tag="tier=db")], [subnet["uuid"]])
    c.equal("network lists its subnet", [s["uuid"] for s in api.network.get_by_uuid(bare["uuid"])["subnets"]],
            [subnet["uuid"]])

    api.subnet.delete(subnet["uuid"])
    c.api_error("deleted subnet", 404, api.subnet.get_by_uuid, subnet["uuid"])
    api.network.delete(auto["uuid"])
    c.api_error("deleted network", 404, api.network.get_by_uuid, auto["uuid"])
    c.api_error("a deleted network's subnet", 404, api.subnet.get_by_uuid, auto_subnet["uuid"])
    api.network.delete(bare["uuid"])
    c.equal("networks after deletes", [n["uuid"] for n in api.network.get_all()], [DEFAULT_NETWORK])


def check_servers(c, api):
    web = api.server.create(name="web-1", flavor="flex-4-2", image="debian-12", zone="lpg1",
                            ssh_keys=["ssh-ed25519 AAAA check"], tags={"role": "web"})
    c.equal("new server", (web["name"], web["status"], web["flavor"]["slug"], web["image"]["slug"],
                           web["zone"]["slug"], web["tags"]),
            ("web-1", "running", "flex-4-2", "debian-12", "lpg1", {"role": "web"}))
    c.equal("default interfaces", [i["type"] for i in web["interfaces"]], ["public"])
    public_address = web["interfaces"][0]["addresses"][0]["address"]
    c.equal("public address version", web["interfaces"][0]["addresses"][0]["version"], 4)
    c.equal("server read back", api.server.get_by_uuid(web["uuid"]), web)

    db = api.server.create(name="db-1", flavor="flex-8-4", image="debian-12", use_public_network=False,
                           interfaces=[{"network": DEFAULT_NETWORK}], tags={"role": "db"})
    c.equal("private-only server", [i["type"] for i in db["interfaces"]], ["private"])
    c.equal("private interface network", db["interfaces"][0]["network"]["uuid"], DEFAULT_NETWORK)
    private = db["interfaces"][0]["addresses"][0]
    c.true("private address in the default subnet",
           ipaddress.ip_address(private["address"]) in ipaddress.ip_network("10.0.0.0/24"), private)
    c.api_error("server without image", 400, CloudscaleMutable.create, api.server,
                payload={"name": "x", "flavor": "flex-4-2"})
    c.api_error("server in an unknown zone", 400, api.server.create, name="x", flavor="flex-4-2",
                image="debian-12", zone="nowhere1")

    c.equal("server tag filter", [s["name"] for s in api.server.get_all(filter_tag="role=db")], ["db-1"])
    api.server.update(web["uuid"], name="web-01", tags={"role": "web", "tier": "front"})
    c.equal("updated server", (lambda s: (s["name"], s["tags"]))(api.server.get_by_uuid(web["uuid"])),
            ("web-01", {"role": "web", "tier": "front"}))

    c.api_error("flavor change while running", 400, api.server.update, web["uuid"], flavor="flex-8-4")
    api.server.stop(web["uuid"])
    c.equal("stopped server", api.server.get_by_uuid(web["uuid"])["status"], "stopped")
    c.api_error("flavor with name in one change", 400, api.server.update, web["uuid"], name="w", flavor="flex-8-4")
    api.server.update(web["uuid"], flavor="flex-8-4")
    c.equal("scaled server", api.server.get_by_uuid(web["uuid"])["flavor"]["slug"], "flex-8-4")
    api.server.start(web["uuid"])
    c.equal("started server", api.server.get_by_uuid(web["uuid"])["status"], "running")
    api.server.reboot(web["uuid"])
    c.equal("rebooted server", api.server.get_by_uuid(web["uuid"])["status"], "running")

    api.server.update(web["uuid"], interfaces=[{"network": "public"}, {"network": DEFAULT_NETWORK}])
    reconnected = api.server.get_by_uuid(web["uuid"])
    c.equal("reconnected interfaces", [i["type"] for i in reconnected["interfaces"]], ["public", "private"])
    c.equal("public address kept", reconnected["interfaces"][0]["addresses"][0]["address"], public_address)

    floating = "5.102.150.124"
    api.floating_ip.update(floating, server_uuid=web["uuid"])
    assigned = api.floating_ip.get_by_uuid(floating)
    c.equal("floating IP on a server", (assigned["server"]["uuid"], assigned["server"]["name"]),
            (web["uuid"], "web-01"))
    c.equal("floating IP next hop", assigned["next_hop"], public_address)
    api.floating_ip.update(floating, server_uuid=db["uuid"])
    c.equal("floating IP moved", api.floating_ip.get_by_uuid(floating)["server"]["uuid"], db["uuid"])
    c.api_error("floating IP to an unknown server", 400, api.floating_ip.update, floating,
                server_uuid="00000000-0000-4000-8000-000000000000")

    for server in (web, db):
        api.server.delete(server["uuid"])
        c.api_error(f"deleted server {server['name']}", 404, api.server.get_by_uuid, server["uuid"])
    c.equal("servers after deletes", api.server.get_all(), [])
    c.equal("floating IP of a deleted server", api.floating_ip.get_by_uuid(floating)["server"], None)


def check_regions(c, api):
    regions = api.region.get_all()
    c.equal("regions", [(r["slug"], [z["slug"] for z in r["zones"]]) for r in regions],
            [("lpg", ["lpg1"]), ("rma", ["rma1"])])


def run_cli(c, *args):
    """Runs `cloudscale -o json ARGS` in-process and returns what it printed."""
    result = CliRunner().invoke(cloudscale_cli, ["--api-token", TOKEN, "-o", "json", *args])
    c.equal(f"cloudscale {' '.join(args)}: exit code", result.exit_code, 0)
    if result.exit_code != 0:
        c.failures.append(f"cloudscale {' '.join(args)} said: {result.output}")
    return result.output


def cli_json(c, *args):
    output = run_cli(c, *args)
    return json.loads(output) if output.strip() else None


def check_cli(c, api):
    ips = cli_json(c, "floating-ip", "list")
    c.equal("cli floating-ip list", [f["network"] for f in ips or []], DEFAULT_FLOATING_IPS)
    made = cli_json(c, "network", "create", "--name", "cli-net", "--no-auto-create-ipv4-subnet", "--tag", "by=cli")
    c.equal("cli network create", (made["name"], made["tags"], made["subnets"]), ("cli-net", {"by": "cli"}, []))
    run_cli(c, "network", "update", "cli-net", "--name", "cli-net-2")
    c.equal("cli network update by name", api.network.get_by_uuid(made["uuid"])["name"], "cli-net-2")
    deleted = run_cli(c, "network", "delete", made["uuid"], "--force")
    c.true("cli network delete", f"{made['uuid']} deleted!" in deleted, deleted)

    created = cli_json(c, "server", "create", "--name", "cli-vm", "--flavor", "flex-4-2", "--image", "debian-12",
                       "--tag", "by=cli")
    c.equal("cli server create makes one server", len(created), 1)
    server = created[0]
    c.equal("cli server create", (server["name"], server["status"]), ("cli-vm", "running"))
    c.equal("cli server list with a tag filter", [s["name"] for s in cli_json(c, "server", "list", "--filter-tag",
                                                                              "by=cli")], ["cli-vm"])
    run_cli(c, "server", "stop", "cli-vm")
    c.equal("cli server stop by name", api.server.get_by_uuid(server["uuid"])["status"], "stopped")
    run_cli(c, "server", "delete", "cli-vm", "--force")
    c.equal("servers after the CLI", api.server.get_all(), [])
    c.equal("networks after the CLI", [n["uuid"] for n in api.network.get_all()], [DEFAULT_NETWORK])


def main():
    api = Cloudscale(api_token=TOKEN)
    c = Checks()
    c.section("authentication", check_auth, api)
    c.section("floating IPs", check_floating_ips, api)
    c.section("networks and subnets", check_networks_and_subnets, api)
    c.section("servers", check_servers, api)
    c.section("regions", check_regions, api)
    c.section("cloudscale-cli", check_cli, api)
    for failure in c.failures:
        print(f"MISMATCH {failure}")
    total = c.passed + len(c.failures)
    if c.failures:
        print(f"cloudscale_sdk_check: {len(c.failures)} of {total} checks failed")
        return 1
    print(f"cloudscale_sdk_check: all {total} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
