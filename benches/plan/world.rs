//! The measured world: one load balancer as `skyplan apply` built it in the simulator, copied
//! N times with fresh UUIDs, names and VIP addresses, and written as the simulator's world
//! file. Building 5,000 load balancers through the API would measure apply, not plan; the copy
//! is exactly what apply builds, so the plan of the config against it has no changes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::net::Ipv4Addr;

use serde_json::Value;

/// Load balancers `lb0`…`lb{count-1}`, each with two ports and ten members.
pub fn config(endpoint: &str, count: usize) -> String {
    let members: Vec<String> = (11..21).map(|host| format!("\"10.0.0.{host}\"")).collect();
    let members = members.join(", ");
    let mut config = format!("[provider.cloudscale]\nendpoint = \"{endpoint}\"\n\n");
    for i in 0..count {
        writeln!(
            config,
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
             members = [{members}]\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"https\"\nport = 443\nnode-port = 30443\n"
        )
        .expect("write to a String");
    }
    config
}

/// The sub-object collections of a load balancer, and the field tying each to its parent.
const BY_LB: [&str; 2] = ["pools", "listeners"];
const BY_POOL: [&str; 2] = ["members", "health_monitors"];

/// `world` (as apply left it, with `lb0` among its load balancers) with every load balancer
/// replaced by `count` copies of `lb0`.
pub fn seeded(world: &Value, count: usize) -> Value {
    let template = Template::of(world, "lb0");
    let mut seeded = world.clone();
    for collection in [
        "load_balancers",
        "pools",
        "listeners",
        "members",
        "health_monitors",
    ] {
        let copies: Vec<Value> = (0..count)
            .flat_map(|i| template.copy(collection, i))
            .collect();
        seeded[collection] = Value::Array(copies);
    }
    seeded
}

struct Template {
    objects: BTreeMap<&'static str, Vec<Value>>,
    /// Every UUID of the template's objects, in a fixed order.
    uuids: Vec<String>,
    name: String,
    vip: String,
}

impl Template {
    fn of(world: &Value, name: &str) -> Template {
        let items = |collection: &str| world[collection].as_array().cloned().unwrap_or_default();
        let lb = items("load_balancers")
            .into_iter()
            .find(|lb| lb["name"] == name)
            .unwrap_or_else(|| panic!("no load balancer {name} in the template world"));
        let lb_uuid = lb["uuid"].clone();
        let mut objects: BTreeMap<&'static str, Vec<Value>> = BTreeMap::new();
        for collection in BY_LB {
            let mine = items(collection).into_iter();
            objects.insert(
                collection,
                mine.filter(|o| o["load_balancer"] == lb_uuid).collect(),
            );
        }
        let pools: BTreeSet<String> = objects["pools"]
            .iter()
            .map(|pool| pool["uuid"].as_str().unwrap().to_string())
            .collect();
        for collection in BY_POOL {
            let mine = items(collection).into_iter();
            let in_pool = |o: &Value| o["pool"].as_str().is_some_and(|p| pools.contains(p));
            objects.insert(collection, mine.filter(in_pool).collect());
        }
        let vip = lb["vip_addresses"][0]["address"]
            .as_str()
            .unwrap()
            .to_string();
        let mut lb = lb;
        lb.as_object_mut().unwrap().remove("changing_until");
        objects.insert("load_balancers", vec![lb]);
        let uuids = objects
            .values()
            .flatten()
            .map(|o| o["uuid"].as_str().unwrap().to_string())
            .collect();
        Template {
            objects,
            uuids,
            name: name.to_string(),
            vip,
        }
    }

    /// Copy number `i` of the template's objects in `collection`.
    fn copy(&self, collection: &str, i: usize) -> Vec<Value> {
        let mut replace: BTreeMap<String, String> = self
            .uuids
            .iter()
            .enumerate()
            .map(|(k, uuid)| {
                (
                    uuid.clone(),
                    format!("{i:08x}-{k:04x}-4000-8000-000000000000"),
                )
            })
            .collect();
        replace.insert(self.name.clone(), format!("lb{i}"));
        let owner = format!("load-balancer.{}", self.name);
        replace.insert(owner, format!("load-balancer.lb{i}"));
        replace.insert(self.vip.clone(), public_address(i).to_string());
        self.objects[collection]
            .iter()
            .map(|object| replaced(object, &replace))
            .collect()
    }
}

/// Address `i` of the simulator's public ranges: its first /22, then 198.18.0.0/15.
fn public_address(i: usize) -> Ipv4Addr {
    let i = u32::try_from(i).expect("a small count");
    let (base, offset) = if i < 1022 {
        (Ipv4Addr::new(5, 102, 144, 0), i)
    } else {
        (Ipv4Addr::new(198, 18, 0, 0), i - 1022)
    };
    Ipv4Addr::from(u32::from(base) + 1 + offset)
}

/// `value` with every string that is a key of `replace` replaced by its value.
fn replaced(value: &Value, replace: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(text) => Value::String(replace.get(text).unwrap_or(text).clone()),
        Value::Array(items) => Value::Array(items.iter().map(|v| replaced(v, replace)).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, v)| (key.clone(), replaced(v, replace)))
                .collect(),
        ),
        other => other.clone(),
    }
}
