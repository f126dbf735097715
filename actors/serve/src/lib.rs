//! sno's serving front end. [`daemon`] owns one long-lived
//! [`sno_engine::Engine`] per repository and hosts, on `.sno/sno.sock`, MCP
//! sessions ([`mcp`], rmcp over the engine) and the typed commands of CLIs
//! that found the database held ([`client`] is their side of the socket).
//! Nothing here computes an answer: it calls the engine and puts what it
//! returns on the wire.

pub mod client;
pub mod daemon;
pub mod mcp;
pub mod relay;
