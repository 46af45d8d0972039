//! `skyplan sim serve`, whichever cloud it serves: a client may stop it with SIGTERM as soon as
//! it has read the URL, and it still ends cleanly, having written its world.

use crate::support::{serving, sim_serve, terminate};

/// The listener for SIGTERM is in place before the URL is announced: a signal right after the
/// announcement ends the server through its shutdown (exit 0, the world file written), not
/// through the signal's default action. Repeated, as the window it closes is narrow.
#[test]
fn sigterm_right_after_the_announcement_ends_every_simulator_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    for provider in ["cloudscale", "cloudstack", "phoenixnap", "kubernetes"] {
        for round in 0..10 {
            let world = dir.path().join(format!("{provider}-{round}.json"));
            let (mut child, _url) = serving(&mut sim_serve(provider, &world));
            terminate(&mut child);
            assert!(
                world.exists(),
                "{provider}, round {round}: no world file after SIGTERM"
            );
        }
    }
}
