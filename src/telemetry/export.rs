//! Getting finished spans to the collector without the session ever waiting for it.
//!
//! A finished span goes into a bounded queue ([`QUEUE`] spans; a full queue drops the span
//! and counts it). One thread of its own, with a single-threaded runtime, takes batches off the
//! queue and sends them with the OTLP exporter over rein's HTTP client, each send bounded by the
//! export timeout. A collector that refuses, hangs, answers 500 or is not a collector at all
//! costs that thread its time and the spans it could not deliver (counted, reported once at
//! the end), never the session. A failed send is not retried (its spans are counted as not
//! delivered). At the end the session gives the thread at most [`FLUSH_BUDGET`] to send what
//! is queued, and no time at all when a send has already failed in this session.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter, SpanProcessor};

/// How many finished spans may wait for the exporter.
pub(crate) const QUEUE: usize = 4096;
/// The most spans sent in one request.
const BATCH: usize = 512;
/// How long the exporter waits to fill a batch before sending what it has.
const LINGER: Duration = Duration::from_millis(500);
/// The longest the end of a session waits for queued spans to be sent.
pub(crate) const FLUSH_BUDGET: Duration = Duration::from_millis(1000);
/// One export request's limit when `OTEL_EXPORTER_OTLP_TIMEOUT` does not say.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the export thread reports back.
#[derive(Debug, Default)]
pub(crate) struct Delivery {
    pub(crate) ended: AtomicU64,
    pub(crate) sent: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) first_error: Mutex<Option<String>>,
}

impl Delivery {
    fn fail(&self, spans: u64, error: String) {
        self.dropped.fetch_add(spans, Ordering::Relaxed);
        let mut first = self
            .first_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some(error);
        }
    }
}

/// The SDK's end of the queue: every ended span is offered to it, never waited on.
pub(crate) struct QueueProcessor {
    sender: Mutex<Option<SyncSender<SpanData>>>,
    delivery: Arc<Delivery>,
}

impl fmt::Debug for QueueProcessor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("QueueProcessor")
    }
}

impl QueueProcessor {
    /// Closes the queue: the export thread sends what is left and stops.
    pub(crate) fn close(&self) {
        self.sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

impl SpanProcessor for QueueProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        self.delivery.ended.fetch_add(1, Ordering::Relaxed);
        let guard = self.sender.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(sender) = guard.as_ref() else {
            self.delivery
                .fail(1, "a span ended after the exporter was closed".to_string());
            return;
        };
        match sender.try_send(span) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => self.delivery.fail(
                1,
                format!("more than {QUEUE} spans were waiting for the collector"),
            ),
            Err(TrySendError::Disconnected(_)) => self
                .delivery
                .fail(1, "the export thread has stopped".to_string()),
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.close();
        Ok(())
    }
}

/// rein's HTTP client (reqwest on rustls/ring) as the OTLP exporter's transport.
struct Transport {
    client: reqwest::Client,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Transport")
    }
}

impl HttpClient for Transport {
    fn send_bytes<'life0, 'async_trait>(
        &'life0 self,
        request: Request<Bytes>,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<Response<Bytes>, HttpError>>
                + Send
                + 'async_trait,
        >,
    >
    where
        'life0: 'async_trait,
        Self: 'async_trait,
    {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let response = self
                .client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            let headers = response.headers().clone();
            // OTLP/HTTP answers in the request's encoding; a success in anything else (a web
            // page, a proxy's login form) means the spans went somewhere that is not a
            // collector, which rein says rather than counting them as delivered.
            if status.is_success()
                && let Some(kind) = headers
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                && ![
                    "application/x-protobuf",
                    "application/protobuf",
                    "application/json",
                ]
                .iter()
                .any(|ok| kind.starts_with(ok))
            {
                return Err(format!(
                    "the endpoint answered {status} with {kind}, not an OTLP response: is it a collector?"
                )
                .into());
            }
            let body = response.bytes().await?;
            let mut out = Response::builder().status(status);
            if let Some(h) = out.headers_mut() {
                *h = headers;
            }
            Ok(out.body(body)?)
        })
    }
}

/// The export timeout from `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` / `OTEL_EXPORTER_OTLP_TIMEOUT`
/// (milliseconds), else [`DEFAULT_TIMEOUT`].
fn export_timeout() -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.trim().parse::<u64>().ok())
    .map(Duration::from_millis)
    .unwrap_or(DEFAULT_TIMEOUT)
}

/// The running exporter: the processor to give the SDK and the thread behind it.
pub(crate) struct Exporter {
    pub(crate) processor: Arc<QueueProcessor>,
    pub(crate) delivery: Arc<Delivery>,
    done: Mutex<Receiver<()>>,
}

impl Exporter {
    /// Starts the export thread for `protocol`.
    pub(crate) fn start(protocol: Protocol, resource: Resource) -> Result<Exporter, String> {
        let (sender, queue) = std::sync::mpsc::sync_channel::<SpanData>(QUEUE);
        let (done_tx, done) = std::sync::mpsc::channel();
        let delivery = Arc::new(Delivery::default());
        let thread_delivery = Arc::clone(&delivery);
        let timeout = export_timeout();
        std::thread::Builder::new()
            .name("rein-otlp".to_string())
            .spawn(move || {
                export_loop(queue, resource, protocol, timeout, &thread_delivery);
                let _ = done_tx.send(());
            })
            .map_err(|e| format!("cannot start the export thread: {e}"))?;
        Ok(Exporter {
            processor: Arc::new(QueueProcessor {
                sender: Mutex::new(Some(sender)),
                delivery: Arc::clone(&delivery),
            }),
            delivery,
            done: Mutex::new(done),
        })
    }

    /// Closes the queue and waits at most [`FLUSH_BUDGET`] for the thread to send the rest.
    /// Spans still queued after that are counted as not delivered.
    pub(crate) fn finish(&self) {
        self.processor.close();
        let done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        // A collector that already failed this session gets no wait at all.
        let failed = self.delivery.dropped.load(Ordering::Relaxed) > 0;
        let budget = if failed { Duration::ZERO } else { FLUSH_BUDGET };
        if done.recv_timeout(budget).is_err() {
            let d = &self.delivery;
            let left = d
                .ended
                .load(Ordering::Relaxed)
                .saturating_sub(d.sent.load(Ordering::Relaxed) + d.dropped.load(Ordering::Relaxed));
            if left > 0 {
                self.delivery.fail(
                    left,
                    format!(
                        "the collector did not take the last spans within {} ms",
                        FLUSH_BUDGET.as_millis()
                    ),
                );
            }
        }
    }
}

fn export_loop(
    queue: Receiver<SpanData>,
    resource: Resource,
    protocol: Protocol,
    timeout: Duration,
    delivery: &Delivery,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            delivery.fail(0, format!("cannot start the export runtime: {e}"));
            drain_all(&queue, delivery, "the exporter could not start");
            return;
        }
    };
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder().timeout(timeout);
    if !endpoint_is_https() {
        // Why: an http:// collector never needs a certificate, and loading the system's
        // roots would cost ~10 ms that a short session waits for at its end.
        builder = builder.tls_certs_only(std::iter::empty());
    }
    let client = match builder.build() {
        Ok(c) => c,
        Err(e) => {
            drain_all(
                &queue,
                delivery,
                &format!("cannot build the HTTP client: {e}"),
            );
            return;
        }
    };
    let exporter = {
        let _guard = runtime.enter();
        opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(Transport { client })
            .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
            .with_protocol(protocol)
            .with_timeout(timeout)
            .build()
    };
    let mut exporter = match exporter {
        Ok(e) => e,
        Err(e) => {
            drain_all(&queue, delivery, &format!("cannot configure OTLP: {e}"));
            return;
        }
    };
    exporter.set_resource(&resource);
    loop {
        let first = match queue.recv() {
            Ok(span) => span,
            Err(_) => return,
        };
        let mut batch = vec![first];
        let deadline = Instant::now() + LINGER;
        let mut closed = false;
        while batch.len() < BATCH {
            let left = deadline.saturating_duration_since(Instant::now());
            match queue.recv_timeout(left) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        let n = batch.len() as u64;
        let sent = runtime.block_on(async {
            tokio::time::timeout(timeout + Duration::from_millis(200), exporter.export(batch)).await
        });
        match sent {
            Ok(Ok(())) => {
                delivery.sent.fetch_add(n, Ordering::Relaxed);
            }
            Ok(Err(e)) => delivery.fail(n, e.to_string()),
            Err(_) => delivery.fail(
                n,
                format!(
                    "the collector did not answer within {} ms",
                    timeout.as_millis()
                ),
            ),
        }
        if closed {
            // Whatever arrived after the last batch.
            let rest: Vec<SpanData> = queue.try_iter().collect();
            if !rest.is_empty() {
                let n = rest.len() as u64;
                match runtime.block_on(exporter.export(rest)) {
                    Ok(()) => {
                        delivery.sent.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(e) => delivery.fail(n, e.to_string()),
                }
            }
            return;
        }
    }
}

/// Whether the trace endpoint the exporter will use is `https://` (the default is
/// `http://localhost:4318`).
fn endpoint_is_https() -> bool {
    [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok().filter(|e| !e.trim().is_empty()))
    .is_some_and(|e| e.trim().to_ascii_lowercase().starts_with("https://"))
}

fn drain_all(queue: &Receiver<SpanData>, delivery: &Delivery, why: &str) {
    while queue.recv().is_ok() {
        delivery.fail(1, why.to_string());
    }
}
