//! Controller mode (`mode = "ccm"`) for CloudStack: skyplan never calls the LB-rule API. It
//! writes the Service (`service.rs`), predicts from the live Service and the live rules what the
//! CloudStack CCM v1.2.0 will do (`predict.rs`, named as the CCM names things in `names.rs`),
//! classifies it by the controller-mode table (`impact.rs`), shows each predicted change under
//! the config key whose new value causes it (`causes.rs`), and after the write waits until
//! the cloud shows that result (`apply.rs`), comparing which rule IDs were kept.
//!
//! An independent reading of research/cloudstack.md §1 and impact.md's controller-mode column;
//! it shares nothing with the simulated CCM in `sim/controllers`.

pub mod apply;
pub mod causes;
pub mod impact;
pub mod names;
pub mod plan;
pub mod predict;
pub mod service;
pub mod views;
