"""The Python `cs` client (exoscale/cs 3.2.0), written against the real CloudStack API, run
against `skyplan sim serve --provider cloudstack`: proof that the simulator speaks the real
protocol (signatures, envelopes, paging, async jobs, errors).

Reads CLOUDSTACK_ENDPOINT, CLOUDSTACK_KEY and CLOUDSTACK_SECRET; prints "checks passed".
"""

import os
import sys

from cs import CloudStack, CloudStackApiException


def client(secret=None, method="get"):
    return CloudStack(
        endpoint=os.environ["CLOUDSTACK_ENDPOINT"],
        key=os.environ["CLOUDSTACK_KEY"],
        secret=secret or os.environ["CLOUDSTACK_SECRET"],
        method=method,
        poll_interval=0.05,
        job_timeout=60,
        timeout=10,
    )


def check(condition, message):
    if not condition:
        print(f"FAILED: {message}", file=sys.stderr)
        sys.exit(1)


def named(items, name):
    found = [item for item in items if item["name"] == name]
    check(len(found) == 1, f"exactly one {name} in {items}")
    return found[0]


def catalog(cs):
    zones = cs.listZones(fetch_list=True)
    check([z["name"] for z in zones] == ["zone1"], f"zones: {zones}")
    network = named(cs.listNetworks(fetch_list=True, listall=True), "k8s-net")
    versions = cs.listKubernetesSupportedVersions(fetch_list=True)
    enabled = {v["semanticversion"] for v in versions if v["state"] == "Enabled"}
    check({"1.28.15", "1.29.10", "1.30.5"} <= enabled, f"versions: {versions}")
    posted = client(method="post").listZones()
    check(posted["count"] == 1, f"listZones by POST: {posted}")
    return network


def load_balancer(cs, network):
    ip = cs.associateIpAddress(networkid=network["id"], fetch_result=True)["ipaddress"]
    check(ip["associatednetworkid"] == network["id"], f"associated: {ip}")
    rule = cs.createLoadBalancerRule(
        publicipid=ip["id"],
        name="cs-check-tcp-80",
        publicport=80,
        privateport=30080,
        algorithm="roundrobin",
        protocol="tcp",
        cidrlist="10.0.0.0/8,192.168.0.0/16",
        fetch_result=True,
    )["loadbalancer"]
    check(rule["state"] == "Active", f"rule: {rule}")
    check(rule["publicport"] == "80", "ports come back as strings")
    check(rule["cidrlist"] == "10.0.0.0/8 192.168.0.0/16", f"cidrlist: {rule}")
    vms = cs.listVirtualMachines(fetch_list=True, listall=True)
    cs.assignToLoadBalancerRule(
        id=rule["id"], virtualmachineids=[vm["id"] for vm in vms], fetch_result=True
    )
    members = cs.listLoadBalancerRuleInstances(id=rule["id"], fetch_list=True)
    check(len(members) == len(vms), f"members: {members}")
    cs.createTags(
        resourceids=rule["id"],
        resourcetype="LoadBalancer",
        tags=[{"key": "skyplan.address", "value": "lb.web"}],
        fetch_result=True,
    )
    listed = cs.listLoadBalancerRules(keyword="cs-check", listall=True, fetch_list=True)
    check(listed[0]["tags"][0]["value"] == "lb.web", f"tags: {listed}")
    try:
        cs.createLoadBalancerRule(
            publicipid=ip["id"],
            name="cs-check-udp-80",
            publicport=80,
            privateport=30081,
            algorithm="source",
        )
        check(False, "a second rule on port 80 conflicts")
    except CloudStackApiException as e:
        check(e.response.status_code == 537, f"conflict: {e}")
        check("conflicts with rule" in e.error["errortext"], f"conflict: {e}")
    deleted = cs.deleteLoadBalancerRule(id=rule["id"], fetch_result=True)
    check(deleted["success"] is True, f"delete: {deleted}")
    check(cs.listLoadBalancerRules(listall=True) == {}, "an empty list is {}")
    cs.disassociateIpAddress(id=ip["id"], fetch_result=True)


def wrong_secret():
    try:
        client(secret="not-the-secret").listZones()
        check(False, "a wrong secret is refused")
    except CloudStackApiException as e:
        check(e.response.status_code == 401, f"401 expected: {e}")
        check(e.error["errorcode"] == 401, f"error body: {e.error}")


def main():
    cs = client()
    network = catalog(cs)
    load_balancer(cs, network)
    wrong_secret()
    print("checks passed")


if __name__ == "__main__":
    main()
