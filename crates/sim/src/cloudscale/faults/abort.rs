//! Closing a connection without an answer, as a crashed or overloaded server does. A handler
//! cannot do that through axum (it always answers), so every accepted connection carries a
//! [`ConnectionAbort`] switch, handed to handlers as connect info: once it is tripped, the
//! connection's reads and writes fail, hyper gives up on it before writing a byte of the
//! answer, and the socket closes with a TCP reset (zero linger), which clients report as a
//! connection error.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// The switch that aborts one connection.
#[derive(Debug, Clone, Default)]
pub struct ConnectionAbort(Arc<AtomicBool>);

impl ConnectionAbort {
    /// From now on the connection is dead: the answer being prepared is never sent.
    pub fn trip(&self) {
        self.0.store(true, Ordering::Release);
    }

    fn is_tripped(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl Connected<IncomingStream<'_, AbortableListener>> for ConnectionAbort {
    fn connect_info(stream: IncomingStream<'_, AbortableListener>) -> Self {
        stream.io().abort.clone()
    }
}

/// A TCP listener whose connections can be aborted.
pub struct AbortableListener(pub TcpListener);

impl Listener for AbortableListener {
    type Io = AbortableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (AbortableStream, SocketAddr) {
        let (stream, addr) = Listener::accept(&mut self.0).await;
        let stream = AbortableStream {
            stream,
            abort: ConnectionAbort::default(),
        };
        (stream, addr)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

pub struct AbortableStream {
    stream: TcpStream,
    abort: ConnectionAbort,
}

impl AbortableStream {
    /// `Some(error)` once the switch is tripped; the socket then resets when it is closed.
    fn aborted(&self) -> Option<io::Error> {
        if !self.abort.is_tripped() {
            return None;
        }
        // Err: the socket is already gone; it closes either way.
        let _ = self.stream.set_zero_linger();
        Some(io::ErrorKind::ConnectionAborted.into())
    }
}

impl AsyncRead for AbortableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.aborted() {
            Some(error) => Poll::Ready(Err(error)),
            None => Pin::new(&mut self.stream).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for AbortableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.aborted() {
            Some(error) => Poll::Ready(Err(error)),
            None => Pin::new(&mut self.stream).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.aborted() {
            Some(error) => Poll::Ready(Err(error)),
            None => Pin::new(&mut self.stream).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.aborted() {
            Some(error) => Poll::Ready(Err(error)),
            None => Pin::new(&mut self.stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.aborted() {
            Some(error) => Poll::Ready(Err(error)),
            None => Pin::new(&mut self.stream).poll_shutdown(cx),
        }
    }
}
