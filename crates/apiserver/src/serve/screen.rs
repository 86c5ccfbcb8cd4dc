//! The first request of a connection, read before hyper sees it: what hyper would refuse
//! with an empty body (a request line over the `http` crate's 64 KiB URI limit, a head over
//! 1 MiB) gets a `Status` here, as every refusal of this server does; the rest is handed
//! to hyper with the bytes read so far replayed in front of the stream.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;

use crate::status::status_body;

/// The longest request head read: 1 MiB, Go's `http.DefaultMaxHeaderBytes`, what
/// kube-apiserver takes.
pub(super) const MAX_HEAD_BYTES: usize = 1 << 20;

/// The longest request line a request can have here: the `http` crate's URI limit
/// (`u16::MAX - 1`), plus the method and version around it.
const MAX_REQUEST_LINE: usize = u16::MAX as usize + 16;

/// Reads the first request's head (within `timeout`, else the connection is dropped, as
/// hyper drops a stalled one). A head hyper would refuse is answered here and `None`
/// returned; else the stream, with what was read replayed.
pub(super) async fn first_request(
    mut stream: TcpStream,
    timeout: Duration,
) -> Option<Replayed<TcpStream>> {
    let head = tokio::time::timeout(timeout, read_head(&mut stream))
        .await
        .ok()?
        .ok()?;
    let refusal = match head.iter().position(|&b| b == b'\n') {
        Some(end) if end > MAX_REQUEST_LINE => Some(414),
        None if head.len() > MAX_REQUEST_LINE => Some(414),
        _ if head.len() > MAX_HEAD_BYTES => Some(431),
        _ => None,
    };
    let Some(code) = refusal else {
        return Some(Replayed {
            prefix: head,
            at: 0,
            inner: stream,
        });
    };
    let (reason, text, message) = match code {
        414 => (
            "RequestURITooLong",
            "URI Too Long",
            "the request line is longer than this server reads (64 KiB)",
        ),
        _ => (
            "RequestHeaderFieldsTooLarge",
            "Request Header Fields Too Large",
            "the request's headers are larger than this server reads (1 MiB)",
        ),
    };
    let body = status_body(code, reason, message).to_string();
    let response = format!(
        "HTTP/1.1 {code} {text}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    None
}

/// Reads until the end of the head (`\r\n\r\n`), the end of the stream, or a little past
/// the longest head or request line this server reads.
async fn read_head(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(4096);
    let mut chunk = vec![0; 16 * 1024];
    loop {
        let searched = head.len().saturating_sub(3);
        let n = stream.read(&mut chunk).await?;
        head.extend_from_slice(&chunk[..n]);
        let line_too_long = !head.contains(&b'\n') && head.len() > MAX_REQUEST_LINE;
        if n == 0
            || head[searched..].windows(4).any(|w| w == b"\r\n\r\n")
            || head.len() > MAX_HEAD_BYTES
            || line_too_long
        {
            return Ok(head);
        }
    }
}

/// A stream with bytes already read from it put back in front.
#[derive(Debug)]
pub(super) struct Replayed<T> {
    prefix: Vec<u8>,
    at: usize,
    inner: T,
}

impl<T: AsyncRead + Unpin> AsyncRead for Replayed<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = buf.remaining().min(self.prefix.len() - self.at);
            let start = self.at;
            buf.put_slice(&self.prefix[start..start + n]);
            self.at += n;
            if self.at == self.prefix.len() {
                self.prefix = Vec::new();
                self.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Replayed<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
