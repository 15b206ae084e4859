//! A small loopback HTTP/1.1 server for http-hook tests: it records every request (path,
//! headers, body, which connection it came on) and answers from a route table. Keep-alive is
//! honoured, so connection reuse by the client is visible in [`Recorded::connection`].

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    /// Number of the TCP connection it arrived on (0, 1, …).
    pub connection: usize,
}

/// What the server answers on one path.
#[derive(Debug, Clone)]
pub enum Reply {
    /// Status, extra headers, body.
    Status(u16, Vec<(String, String)>, String),
    /// Sleep this long, then close without answering.
    Hang(Duration),
}

impl Reply {
    pub fn json(body: serde_json::Value) -> Reply {
        Reply::Status(
            200,
            vec![("Content-Type".into(), "application/json".into())],
            body.to_string(),
        )
    }
}

pub struct HttpServer {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
}

impl HttpServer {
    /// Serves `routes` (path → reply; unknown paths get 404) on 127.0.0.1, keep-alive unless
    /// `close_each` (then every answer carries `Connection: close` and the socket is closed).
    pub fn start(routes: Vec<(&str, Reply)>, close_each: bool) -> HttpServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let routes: Arc<HashMap<String, Reply>> = Arc::new(
            routes
                .into_iter()
                .map(|(p, r)| (p.to_string(), r))
                .collect(),
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let connections = Arc::new(AtomicUsize::new(0));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let routes = Arc::clone(&routes);
                let recorded = Arc::clone(&recorded);
                let n = connections.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || serve(stream, n, &routes, &recorded, close_each));
            }
        });
        HttpServer { base, requests }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn hits(&self, path: &str) -> usize {
        self.recorded().iter().filter(|r| r.path == path).count()
    }
}

fn serve(
    stream: TcpStream,
    connection: usize,
    routes: &HashMap<String, Reply>,
    recorded: &Mutex<Vec<Recorded>>,
    close_each: bool,
) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        recorded.lock().unwrap().push(Recorded {
            method,
            path: path.clone(),
            headers,
            body,
            connection,
        });
        let reply = routes.get(&path).cloned().unwrap_or(Reply::Status(
            404,
            Vec::new(),
            "not found".into(),
        ));
        match reply {
            Reply::Hang(d) => {
                std::thread::sleep(d);
                return;
            }
            Reply::Status(status, extra, body) => {
                let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", body.len());
                for (k, v) in extra {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                if close_each {
                    head.push_str("Connection: close\r\n");
                }
                head.push_str("\r\n");
                // One write: a second small write would wait for a delayed ACK (Nagle).
                if writer
                    .write_all(format!("{head}{body}").as_bytes())
                    .is_err()
                {
                    return;
                }
                let _ = writer.flush();
                if close_each {
                    return;
                }
            }
        }
    }
}
