//! Tests over real HTTP with reqwest, against a simulator on a free port.
