//! What every provider's impact table is made of: a `Change` enum declared from one list (with
//! `Change::ALL`, so a test can check that each change has its row), rows of class, what
//! happens and downtime, and the lookup. Each provider's `impact.rs` holds only its rows, to be
//! reviewed line by line against impact.md.

use crate::model::{Downtime, Impact};

/// The downtime estimates the load-balancer tables share: one figure per kind of disruption,
/// whatever the cloud, so two tables never say two things of the same disruption.
pub mod downtime {
    use crate::model::Downtime;

    /// A port's backend pool (a cloudscale pool, a CloudStack rule) deleted and made again:
    /// "60-120 s" (seed 003's pool recreation), that port serving nothing meanwhile.
    pub const POOL_RECREATE: Downtime = Downtime::new(60, 120);
    /// A listener (a public port) moved while its pool is kept: "up to 15 s" (seed 003), while
    /// clients of the old port move to the new one.
    pub const LISTENER_MOVE: Downtime = Downtime::new(0, 15);
    /// A brief effect on new connections while the cloud applies an in-place change (monitor
    /// or member churn, a CIDR filter; on CloudStack the virtual router's graceful haproxy
    /// reload). The seeds give no figure: skyplan's estimate, the time a cloudscale load
    /// balancer stays `changing` for such an update.
    pub const BRIEF: Downtime = Downtime::new(0, 5);
    /// A load balancer destroyed (and maybe made again on another address): every port is down
    /// until a new one runs, and users may have to learn a new address.
    pub const LB_RECREATE: Downtime = Downtime::new(60, 300);
}

/// Declares `pub enum Change` and `Change::ALL` from one list of variants.
#[macro_export]
macro_rules! changes {
    ($($change:ident),+ $(,)?) => {
        /// Every kind of change this diff can find.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Change {
            $($change),+
        }

        impl Change {
            pub const ALL: &'static [Change] = &[$(Change::$change),+];
        }
    };
}
pub use crate::changes;

/// One row of an impact table.
#[derive(Debug, Clone, Copy)]
pub struct Row<C: 'static> {
    pub change: C,
    /// What the operator changed (impact.md's first column).
    pub what: &'static str,
    /// What the cloud actually does, said so an operator understands it.
    pub happens: &'static str,
    pub impact: Impact,
    pub downtime: Downtime,
}

/// The row for `change`. Every change has exactly one row (see [`assert_one_row_each`]).
pub fn row<C: PartialEq + std::fmt::Debug>(rows: &'static [Row<C>], change: C) -> &'static Row<C> {
    rows.iter()
        .find(|r| r.change == change)
        .unwrap_or_else(|| panic!("{change:?} has no row in the impact table"))
}

/// For each table's tests (in the provider's crate): every change has exactly one row.
pub fn assert_one_row_each<C: PartialEq + std::fmt::Debug>(rows: &[Row<C>], all: &[C]) {
    assert_eq!(rows.len(), all.len(), "one row per change");
    for change in all {
        let count = rows.iter().filter(|r| r.change == *change).count();
        assert_eq!(count, 1, "{change:?}");
    }
}

/// For a table-driven test over a table's rows (drift read as plan, in each provider's crate):
/// every change is `reached` by a case or named `unreachable` (each with its reason, in the
/// test), so that a row added to the table without a case fails the test.
pub fn assert_every_change_covered<C: PartialEq + std::fmt::Debug>(
    all: &[C],
    reached: &[C],
    unreachable: &[C],
) {
    let missing: Vec<&C> = all
        .iter()
        .filter(|c| !reached.contains(c) && !unreachable.contains(c))
        .collect();
    assert!(missing.is_empty(), "no case for {missing:?}");
}

/// One impact table as a section of `docs/impact.md`: a heading, what the table is about and
/// what it follows, then a row per change — its name, what the operator changed, what the
/// cloud does, its class and downtime — in the table's order, so the reference reads as the
/// code decides.
pub fn markdown<C: std::fmt::Debug>(heading: &str, about: &str, rows: &[Row<C>]) -> String {
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = format!(
        "## {heading}\n\n{about}\n\n| change | what changed | what happens | class | downtime |\n|---|---|---|---|---|\n"
    );
    for row in rows {
        out.push_str(&format!(
            "| `{:?}` | {} | {} | **{}** | {} |\n",
            row.change,
            cell(row.what),
            cell(row.happens),
            row.impact,
            row.downtime
        ));
    }
    out
}
