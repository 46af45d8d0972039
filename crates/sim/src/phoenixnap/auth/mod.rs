//! OAuth2 client credentials as PhoenixNAP's Keycloak realm `BMC` does them (research §1): the
//! token endpoint (`endpoint`), the tokens handed out and their scopes (`tokens`, `scopes`),
//! and the bearer check on every API call (`bearer`). Neither the client secret nor a token is
//! ever logged, echoed or shown by a Debug impl.

mod bearer;
mod endpoint;
mod scopes;
mod tokens;

pub use bearer::require_bearer;
pub use endpoint::{token, Credentials, TOKEN_PATH};
pub use tokens::TokenStore;
