//! Pure domain types shared by every stage: addresses, impact classes, downtime, and the
//! resolved desired state of each resource kind. No IO, no provider knowledge.

/// An enum spelled the same in the config and on the wire, with `ALL`, `as_str` and `parse`.
/// Exported for the providers' own enums; the crate using it depends on serde.
#[macro_export]
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            ::serde::Serialize, ::serde::Deserialize,
        )]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling used both in the config and on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

mod address;
mod impact;
mod secret;

pub use address::{instance_name, Address, AddressParseError, ResourceKind};
pub use impact::{Downtime, Impact};
pub use secret::Secret;
