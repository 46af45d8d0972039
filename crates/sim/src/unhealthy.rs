//! The `unhealthy-after-change` fault's draw, shared by the simulators that model it: which
//! changed object (a cloudscale pool, a CloudStack LB rule) the fault leaves unhealthy — the
//! one of the name it gives, or each with its probability. Seeded by the spec's `seed`, apart
//! from the request faults' draws, so a seed repeats the same picks.

use std::sync::Mutex;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::cloudscale::Unhealthy;

pub struct UnhealthyDraw {
    picks: Unhealthy,
    rng: Mutex<StdRng>,
}

impl UnhealthyDraw {
    pub fn new(picks: Unhealthy, seed: Option<u64>) -> Self {
        let rng = seed.map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64);
        UnhealthyDraw {
            picks,
            rng: Mutex::new(rng),
        }
    }

    /// Whether a change to the object named `name` leaves it unhealthy.
    pub fn picks(&self, name: &str) -> bool {
        match &self.picks {
            Unhealthy::LoadBalancer(picked) => picked == name,
            Unhealthy::Share(share) => {
                let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
                rng.random::<f64>() < *share
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_picks_only_that_object_and_a_share_picks_about_that_many() {
        let named = UnhealthyDraw::new(Unhealthy::LoadBalancer("web".into()), None);
        assert!(named.picks("web") && !named.picks("api"));
        let share = UnhealthyDraw::new(Unhealthy::Share(0.3), Some(7));
        let picked = (0..10_000).filter(|_| share.picks("any")).count();
        assert!((2_700..3_300).contains(&picked), "{picked}");
        let never = UnhealthyDraw::new(Unhealthy::Share(0.0), Some(7));
        assert!((0..100).all(|_| !never.picks("any")));
    }
}
