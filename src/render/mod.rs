//! Rendering: one serializable view of a plan ([`PlanView`], the JSON contract), and the human
//! text rendered from the same view, so the two can never disagree.

mod text;
mod view;

pub use text::{render_text, Style};
pub use view::{AttributeView, ChangeView, PlanView, Summary};

#[cfg(test)]
mod tests;
