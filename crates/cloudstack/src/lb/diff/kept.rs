//! One rule kept on its public port: updated in place where updateLoadBalancerRule can, else
//! deleted and created again; its members and firewall rules brought in line.

use super::update::{RecreatedMembers, Spreads};
use super::*;

impl<'a> Diff<'a> {
    pub(super) fn kept(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        spreads: &mut Spreads,
    ) {
        let object = format!("LB rule {}", live.name);
        let mut recreate = self.recreation_causes(live, wanted, &object);
        let differences = self.in_place(spec, desired, live, wanted);
        recreate |= differences
            .iter()
            .any(|d| d.change == Change::CidrsRecreated);
        if recreate {
            for d in differences {
                self.note_within(d, &object);
            }
            self.members_within(desired, live, spreads);
            self.recreate(spec, desired, live, wanted, spreads);
            return;
        }
        self.update_in_place(spec, desired, live, wanted, differences, spreads);
        self.members(desired, live, &wanted.name, spreads);
        self.firewall(desired, wanted, spreads);
    }

    /// Notes what updateLoadBalancerRule cannot change (protocol, private port); returns
    /// whether there is any, i.e. whether the rule must be deleted and created.
    fn recreation_causes(
        &mut self,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        object: &str,
    ) -> bool {
        let port = wanted.port.port;
        let mut recreate = false;
        if !live
            .protocol
            .eq_ignore_ascii_case(wanted.port.protocol.as_str())
        {
            let udp = |p: &str| p.eq_ignore_ascii_case(CsProtocol::Udp.as_str());
            let change = if udp(&live.protocol) || wanted.port.protocol == CsProtocol::Udp {
                Change::ProtocolUdp
            } else {
                Change::ProtocolProxy
            };
            let detail = format!("{} replaces it", wanted.name);
            self.note(
                change,
                &format!("ports.{port}.protocol"),
                json!(live.protocol),
                json!(wanted.port.protocol),
                object,
                &detail,
            );
            recreate = true;
        }
        if live.privateport != u32::from(wanted.port.node_port) {
            self.note(
                Change::NodePort,
                &format!("ports.{port}.node-port"),
                json!(live.privateport),
                json!(wanted.port.node_port),
                object,
                "",
            );
            recreate = true;
        }
        recreate
    }

    /// One updateLoadBalancerRule with every field that differs; the differences are noted
    /// LB-wide once every rule was looked at.
    fn update_in_place(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        differences: Vec<Difference>,
        spreads: &mut Spreads,
    ) {
        let mut update = RuleUpdate::default();
        for d in differences {
            let before = d.before;
            match d.change {
                Change::RuleName => {
                    spreads.name.add(&live.name, before);
                    spreads.renamed_to.push(wanted.name.clone());
                    update.name = Some(wanted.name.clone());
                }
                Change::RuleDescription => {
                    spreads.description.add(&live.name, before);
                    update.description = Some(spec.description.clone().unwrap_or_default());
                }
                Change::Algorithm => {
                    spreads.algorithm.add(&live.name, before);
                    update.algorithm = Some(spec.algorithm);
                }
                _ => {
                    spreads.cidrs.add(&live.name, before);
                    update.cidrs = Some(desired.allowed_cidrs.clone());
                }
            }
        }
        if !update.is_empty() {
            self.ops.push(LbOp::UpdateRule {
                rule: live.name.clone(),
                update,
            });
        }
    }

    /// The rule's fields updateLoadBalancerRule can change (the source ACL only from 4.22).
    fn in_place(
        &self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
    ) -> Vec<Difference> {
        let mut found = vec![];
        let protocol_changed = !live
            .protocol
            .eq_ignore_ascii_case(wanted.port.protocol.as_str());
        if !protocol_changed && live.name != wanted.name {
            found.push(Difference::new(
                Change::RuleName,
                "name",
                &live.name,
                &wanted.name,
            ));
        }
        let (have, want) = (
            live.description.clone().unwrap_or_default(),
            spec.description.clone().unwrap_or_default(),
        );
        if have != want {
            found.push(Difference::new(
                Change::RuleDescription,
                "description",
                &have,
                &want,
            ));
        }
        if live.algorithm != spec.algorithm.as_str() {
            let after = spec.algorithm.as_str();
            found.push(Difference::new(
                Change::Algorithm,
                "algorithm",
                &live.algorithm,
                after,
            ));
        }
        if live.cidrs() != desired.allowed_cidrs {
            let change = cidrs_change(self.input.live.server_version());
            found.push(Difference {
                change,
                path: "allowed-cidrs",
                before: json!(live.cidrs()),
                after: json!(desired.allowed_cidrs),
            });
        }
        found
    }

    /// A difference that the rule's recreation takes care of: shown, in the recreation's group.
    fn note_within(&mut self, d: Difference, object: &str) {
        if d.change == Change::CidrsRecreated {
            let version = self.input.live.server_version();
            let detail = format!("CloudStack {}.{}.{}", version.0, version.1, version.2);
            self.note(d.change, d.path, d.before, d.after, object, &detail);
            return;
        }
        let row = rule(d.change);
        self.attributes.push(AttributeChange {
            path: d.path.to_string(),
            before: d.before,
            after: d.after,
            impact: row.impact,
            reason: format!(
                "{object}: set anew when the rule is recreated ({})",
                row.what
            ),
            downtime: row.downtime,
            group: object.to_string(),
            effects: Vec::new(),
        });
    }

    /// Member differences of a recreated rule: the new rule gets the wanted members. Noted
    /// with the kept rules' in one `members` row (`note_members`).
    fn members_within(
        &mut self,
        desired: &Desired,
        live: &LoadBalancerRule,
        spreads: &mut Spreads,
    ) {
        let mut have: Vec<String> = self
            .member_ids(live)
            .iter()
            .map(|id| self.vm_name(id))
            .collect();
        have.sort();
        let change = match &desired.members {
            Members::Vms(vms) if names(vms) == have => return,
            Members::Vms(_) => Change::Members,
            Members::AfterCluster { .. } => Change::MembersAfterCluster,
        };
        spreads.recreated_members.push(RecreatedMembers {
            rule: live.name.clone(),
            change,
            before: json!(have),
        });
    }

    fn member_ids(&self, live: &LoadBalancerRule) -> BTreeSet<&'a str> {
        self.input
            .live
            .rule_members
            .get(&live.id)
            .map(|ids| ids.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Delete then create (the same IP and port cannot hold two rules): the firewall rule is
    /// kept unless its protocol changes.
    fn recreate(
        &mut self,
        spec: &CloudstackLoadBalancerSpec,
        desired: &Desired,
        live: &LoadBalancerRule,
        wanted: &DesiredRule,
        spreads: &mut Spreads,
    ) {
        let old_fw = firewall_protocol(&live.protocol);
        let new_fw = firewall_protocol(wanted.port.protocol.as_str());
        let firewall_follows = old_fw != new_fw;
        self.delete_rule(live, firewall_follows);
        let mut wanted_without_firewall = desired.clone();
        wanted_without_firewall.network.firewall &= firewall_follows;
        self.create_rule(spec, &wanted_without_firewall, wanted);
        if !firewall_follows {
            self.firewall(desired, wanted, spreads);
        }
    }

    fn members(
        &mut self,
        desired: &Desired,
        live: &LoadBalancerRule,
        rule_name: &str,
        spreads: &mut Spreads,
    ) {
        let have = self.member_ids(live);
        for id in &have {
            spreads.current.insert(self.vm_name(id));
        }
        match &desired.members {
            Members::AfterCluster { cluster, .. } => {
                spreads.cluster_rules.push(rule_name.to_string());
                self.ops.push(LbOp::SyncClusterMembers {
                    rule: rule_name.to_string(),
                    cluster: cluster.clone(),
                });
            }
            Members::Vms(vms) => {
                let added: Vec<MemberVm> = vms
                    .iter()
                    .filter(|vm| !have.contains(vm.id.as_str()))
                    .cloned()
                    .collect();
                let wanted: BTreeSet<&str> = vms.iter().map(|vm| vm.id.as_str()).collect();
                let removed: Vec<MemberVm> = have
                    .iter()
                    .filter(|id| !wanted.contains(*id))
                    .map(|id| MemberVm {
                        id: id.to_string(),
                        name: self.vm_name(id),
                    })
                    .collect();
                if added.is_empty() && removed.is_empty() {
                    return;
                }
                spreads.member_rules.push(rule_name.to_string());
                spreads.added.extend(names(&added));
                spreads.removed.extend(names(&removed));
                if !added.is_empty() {
                    self.ops.push(LbOp::AssignMembers {
                        rule: rule_name.to_string(),
                        vms: added,
                    });
                }
                if !removed.is_empty() {
                    self.ops.push(LbOp::RemoveMembers {
                        rule: rule_name.to_string(),
                        vms: removed,
                    });
                }
            }
        }
    }

    fn vm_name(&self, id: &str) -> String {
        self.input
            .live
            .vm(id)
            .map_or_else(|| id.to_string(), |vm| vm.name.clone())
    }

    /// The port's firewall rules hold exactly the wanted CIDRs, or are deleted and created.
    fn firewall(&mut self, desired: &Desired, wanted: &DesiredRule, spreads: &mut Spreads) {
        if !desired.network.firewall {
            return;
        }
        let protocol = firewall_protocol(wanted.port.protocol.as_str());
        let port = wanted.port.port;
        let have = self.live_firewall(protocol, u32::from(port));
        if let [one] = have.as_slice() {
            if one.cidrs() == desired.firewall_cidrs {
                return;
            }
        }
        let before: Vec<String> = have.iter().flat_map(|f| f.cidrs()).collect();
        spreads
            .firewall
            .add(&format!("{protocol}/{port}"), json!(before));
        self.delete_firewall(protocol, u32::from(port));
        self.ops.push(LbOp::CreateFirewallRule {
            port,
            protocol: protocol.to_string(),
            cidrs: desired.firewall_cidrs.clone(),
        });
    }
}

/// One field of a rule that differs.
struct Difference {
    change: Change,
    path: &'static str,
    before: Value,
    after: Value,
}

impl Difference {
    fn new(change: Change, path: &'static str, before: &str, after: &str) -> Difference {
        Difference {
            change,
            path,
            before: json!(before),
            after: json!(after),
        }
    }
}
