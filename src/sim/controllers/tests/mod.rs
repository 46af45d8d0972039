//! Integration tests: the cloudscale simulator and the Kubernetes simulator in-process, the
//! controllers driven pass by pass over HTTP.
