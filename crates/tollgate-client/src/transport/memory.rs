//! In-process: a `tollgate::Endpoint` served over an in-memory pipe by its own stdio server, no
//! sockets and no child (the pair users test their tools with). It owns the pipe; it must not
//! know the server's internals, only `tollgate::transport::StdioServer`.

use std::sync::Arc;

use super::lines::Lines;
use crate::handler::Handler;
use crate::limits::ClientLimits;

/// The pipe's buffer in each direction, in bytes.
const PIPE: usize = 64 * 1024;

pub(crate) fn serve(
    endpoint: tollgate::Endpoint,
    limits: ClientLimits,
    handler: Arc<dyn Handler>,
    sole_call: bool,
) -> Lines {
    let (client_side, server_side) = tokio::io::duplex(PIPE);
    let (server_read, server_write) = tokio::io::split(server_side);
    let server = tokio::spawn(async move {
        let _ = tollgate::transport::StdioServer::new(endpoint)
            .serve(server_read, server_write)
            .await;
    });
    let (read, write) = tokio::io::split(client_side);
    Lines::start(read, write, limits, handler, sole_call).on_close(move || {
        Box::pin(async move {
            // The server ends when its input ends (the writer was shut down by closing).
            let _ = server.await;
        })
    })
}
