"""PhoenixNAP's own Python SDKs (pnap-ip-api, pnap-network-api, pnap-tag-api, pnap-bmc-api),
generated from the real API specs with strict pydantic models, run against
`skyplan sim serve --provider phoenixnap`: every answer must parse as the real API's would.
The CCM's load-balancer flow, then the servers. Usage: PNAP_SIM_ROOT=http://127.0.0.1:PORT."""

import base64
import json
import os
import sys
import time
import urllib.parse
import urllib.request

import pnap_bmc_api
import pnap_ip_api
import pnap_network_api
import pnap_tag_api

ROOT = os.environ["PNAP_SIM_ROOT"]
CLIENT_ID = os.environ.get("PNAP_CLIENT_ID", "skyplan-sim-pnap-client")
CLIENT_SECRET = os.environ.get("PNAP_CLIENT_SECRET", "skyplan-sim-pnap-secret")
CCM_TAGS = ["usage", "cluster", "serviceNamespace", "serviceName", "delete"]


def token():
    """Client credentials by HTTP Basic, as the Ansible collection sends them."""
    basic = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
    body = urllib.parse.urlencode({"grant_type": "client_credentials"}).encode()
    request = urllib.request.Request(
        f"{ROOT}/auth/realms/BMC/protocol/openid-connect/token",
        data=body,
        headers={"Authorization": f"Basic {basic}"},
    )
    with urllib.request.urlopen(request) as response:
        return json.load(response)["access_token"]


def client(module, prefix, access_token):
    config = module.Configuration(host=f"{ROOT}{prefix}", access_token=access_token)
    return module.ApiClient(config)


def expect_status(status, call):
    try:
        call()
    except Exception as error:  # each SDK has its own ApiException class
        assert getattr(error, "status", None) == status, f"expected {status}, got {error!r}"
        return error
    raise AssertionError(f"expected HTTP {status}, the call succeeded")


def wait_for(ips, block_id, status):
    deadline = time.monotonic() + 10
    while True:
        block = ips.ip_blocks_ip_block_id_get(block_id)
        if block.status == status:
            return block
        assert time.monotonic() < deadline, f"block still {block.status}"
        time.sleep(0.05)


def check_load_balancer_flow(access_token):
    tags = pnap_tag_api.TagsApi(client(pnap_tag_api, "/tag-manager/v1", access_token))
    ips = pnap_ip_api.IPBlocksApi(client(pnap_ip_api, "/ips/v1", access_token))
    networks = pnap_network_api.PublicNetworksApi(
        client(pnap_network_api, "/networks/v1", access_token)
    )
    for name in CCM_TAGS:
        created = tags.tags_post(pnap_tag_api.TagCreate(name=name, is_billing_tag=False))
        assert created.name == name and not created.is_billing_tag
    expect_status(409, lambda: tags.tags_post(pnap_tag_api.TagCreate(name="usage", is_billing_tag=False)))

    request = pnap_ip_api.IpBlockCreate(
        location="PHX",
        cidr_block_size="/29",
        tags=[
            pnap_ip_api.TagAssignmentRequest(name="usage", value="cloud-provider-phoenixnap-auto"),
            pnap_ip_api.TagAssignmentRequest(name="cluster", value="uid-1"),
            pnap_ip_api.TagAssignmentRequest(name="serviceNamespace", value="default"),
            pnap_ip_api.TagAssignmentRequest(name="serviceName", value="web"),
        ],
    )
    block = ips.ip_blocks_post(request)
    assert block.status == "unassigned" and block.cidr.endswith("/29"), block
    assert [t.name for t in block.tags] == CCM_TAGS[:4]
    found = ips.ip_blocks_get(tag=["cluster.uid-1", "serviceName.web"])
    assert [b.id for b in found] == [block.id]
    assert ips.ip_blocks_get(tag=["cluster.uid-1", "serviceName.api"]) == []
    serviceName = tags.tags_get(name="serviceName")[0]
    assert serviceName.values == ["web"]
    assert serviceName.resource_assignments[0].resource_name == f"/ips/ip-blocks/{block.id}"

    network = networks.public_networks_get(location="PHX")[0]
    assert network.name == "k8s-public" and network.status == "READY"
    attached = networks.public_networks_network_id_ip_blocks_post(
        network.id, pnap_network_api.PublicNetworkIpBlockCreate(id=block.id)
    )
    assert attached.id == block.id and attached.used_ips_count == "0"
    assert networks.public_networks_network_id_get(network.id).status == "BUSY"
    assigned = wait_for(ips, block.id, "assigned")
    assert assigned.assigned_resource_id == network.id
    assert assigned.assigned_resource_type in ("public network", "PUBLIC_NETWORK")
    expect_status(409, lambda: ips.ip_blocks_ip_block_id_delete(block.id))

    release = [
        pnap_ip_api.TagAssignmentRequest(name="usage", value="cloud-provider-phoenixnap-auto"),
        pnap_ip_api.TagAssignmentRequest(name="cluster", value="uid-1"),
        pnap_ip_api.TagAssignmentRequest(name="delete", value="true"),
    ]
    released = ips.ip_blocks_ip_block_id_tags_put(block.id, release)
    assert sorted(t.name for t in released.tags) == ["cluster", "delete", "usage"]
    patched = ips.ip_blocks_ip_block_id_patch(block.id, pnap_ip_api.IpBlockPatch(description="lb"))
    assert patched.description == "lb"

    message = networks.public_networks_network_id_ip_blocks_ip_block_id_delete(network.id, block.id)
    assert message == "The specified IP block is being removed from the Public Network.", message
    wait_for(ips, block.id, "unassigned")
    deleted = ips.ip_blocks_ip_block_id_delete(block.id)
    assert deleted.result == "IP Block has been deleted." and deleted.ip_block_id == block.id
    expect_status(404, lambda: ips.ip_blocks_ip_block_id_get(block.id))
    invalid = expect_status(400, lambda: ips.ip_blocks_post(
        pnap_ip_api.IpBlockCreate(location="MARS", cidr_block_size="/29")
    ))
    assert json.loads(invalid.body)["validationErrors"], invalid.body


def check_servers(access_token):
    servers = pnap_bmc_api.ServersApi(client(pnap_bmc_api, "/bmc/v1", access_token))
    listed = servers.servers_get()
    assert [s.hostname for s in listed] == ["node-1", "node-2", "node-3"]
    first = servers.servers_server_id_get(listed[0].id)
    assert first.type == "s2.c1.medium" and first.location == "PHX"
    assert first.public_ip_addresses and first.private_ip_addresses
    result = servers.servers_server_id_actions_power_off_post(first.id)
    assert result.result
    assert servers.servers_server_id_get(first.id).status == "powered-off"
    deleted = servers.servers_server_id_delete(first.id)
    assert deleted.server_id == first.id
    expect_status(403, lambda: servers.servers_server_id_get(first.id))


def check_memberships(access_token):
    """A network of its own with a block, a server joining it with an address of the block."""
    ips = pnap_ip_api.IPBlocksApi(client(pnap_ip_api, "/ips/v1", access_token))
    networks = pnap_network_api.PublicNetworksApi(
        client(pnap_network_api, "/networks/v1", access_token)
    )
    servers = pnap_bmc_api.ServersApi(client(pnap_bmc_api, "/bmc/v1", access_token))
    block = ips.ip_blocks_post(pnap_ip_api.IpBlockCreate(location="PHX", cidr_block_size="/29"))
    network = networks.public_networks_post(
        pnap_network_api.PublicNetworkCreate(
            name="members", location="PHX", vlan_id=20,
            ip_blocks=[pnap_network_api.PublicNetworkIpBlockCreate(id=block.id)],
        )
    )
    assert network.vlan_id == 20 and [b.id for b in network.ip_blocks] == [block.id]
    wait_for(ips, block.id, "assigned")
    server = servers.servers_get()[1]
    base, last = block.cidr.split("/")[0].rsplit(".", 1)
    address = f"{base}.{int(last) + 3}"
    joined = servers.servers_server_id_public_networks_post(
        server.id, pnap_bmc_api.ServerPublicNetwork(id=network.id, ips=[address])
    )
    assert joined.id == network.id and joined.ips == [address]
    members = networks.public_networks_network_id_get(network.id).memberships
    assert [(m.resource_id, m.ips) for m in members] == [(server.id, [address])]
    listed = servers.servers_server_id_get(server.id)
    public = listed.network_configuration.public_network_configuration.public_networks
    assert public[0].id == network.id
    expect_status(409, lambda: networks.public_networks_network_id_delete(network.id))
    servers.servers_server_id_public_networks_delete(server.id, network.id)
    networks.public_networks_network_id_ip_blocks_ip_block_id_delete(network.id, block.id)
    wait_for(ips, block.id, "unassigned")
    assert networks.public_networks_network_id_delete(network.id) is None


def main():
    access_token = token()
    check_load_balancer_flow(access_token)
    check_memberships(access_token)
    check_servers(access_token)
    print("all PhoenixNAP SDK checks passed")


if __name__ == "__main__":
    sys.exit(main())
