//! One chat-completions request to a server: sent with a bounded retry on 429 and 5xx,
//! its server-sent events read as they come (each piece of text passed on at once), and
//! every way it can fail put in one line a user can act on.

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use reqwest::StatusCode;
use serde_json::Value;

use super::wire::{self, Completion, EventStream};
use crate::text::one_line;

/// Where requests go and how.
pub struct Endpoint {
    /// The API root, without a trailing `/`.
    pub base_url: String,
    pub api_key: Option<String>,
    /// The environment variable the key came from (named in errors, never the key).
    pub api_key_env: Option<String>,
    pub retries: u32,
    pub request_timeout_s: u64,
}

impl Endpoint {
    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

/// What the request task tells the deciding thread.
pub enum Event {
    /// A piece of the answer (or of the thought), as it streams.
    Text(String),
    /// The end: the completion, or the one line that says why there is none.
    Done(Result<Outcome, String>),
}

/// A finished completion and its timing.
pub struct Outcome {
    pub completion: Completion,
    /// From sending the request to the first piece of text.
    pub ttft_ms: Option<f64>,
    pub total_ms: f64,
    /// One line per answer that was retried (429, 5xx).
    pub retried: Vec<String>,
}

/// Longest wait before a retry, whatever `Retry-After` asks.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Sends `body` and streams the answer; pieces of text go to `events` as they arrive.
pub async fn complete(client: &reqwest::Client, endpoint: &Endpoint, body: &Value, events: &Sender<Event>) -> Result<Outcome, String> {
    let started = Instant::now();
    let mut retried = Vec::new();
    let response = send(client, endpoint, body, &mut retried).await?;
    let streamed = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut completion = Completion::default();
    let mut ttft_ms = None;
    let send_text = |text: String, ttft_ms: &mut Option<f64>| {
        if !text.is_empty() {
            ttft_ms.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1000.0);
            let _ = events.send(Event::Text(text));
        }
    };
    let whole = if streamed {
        let mut response = response;
        let mut stream = EventStream::default();
        let (mut done, mut seen) = (false, 0);
        while !done {
            let chunk = match response.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => return Err(format!("the stream broke after {} pieces: {}", completion.pieces, innermost(&e, endpoint))),
            };
            for payload in stream.push(&chunk) {
                seen += 1;
                if payload.trim() == "[DONE]" {
                    done = true;
                    break;
                }
                let event: Value = serde_json::from_str(&payload)
                    .map_err(|_| format!("a streamed event that is not JSON: {}", one_line(&payload, 200)))?;
                let text = completion.apply(&event).map_err(|e| format!("the server reported an error mid-answer: {e}"))?;
                send_text(text, &mut ttft_ms);
            }
        }
        if !done {
            if let Some(payload) = stream.finish().filter(|p| p.trim() != "[DONE]") {
                seen += 1;
                if let Ok(event) = serde_json::from_str::<Value>(&payload) {
                    let text = completion.apply(&event).map_err(|e| format!("the server reported an error mid-answer: {e}"))?;
                    send_text(text, &mut ttft_ms);
                }
            }
        }
        if !done && seen == 0 {
            // llama-cpp-python refuses some requests (one over the context length) only
            // after it has answered 200 and opened the stream, which then ends empty: the
            // same request unstreamed gets the refusal itself.
            let mut unstreamed = body.clone();
            if let Some(map) = unstreamed.as_object_mut() {
                map.insert("stream".into(), Value::Bool(false));
                map.remove("stream_options");
            }
            Some(send(client, endpoint, &unstreamed, &mut retried).await?)
        } else {
            if !done && completion.finish_reason.is_none() {
                return Err(format!("the stream ended before the answer did ({} pieces, no finish reason, no [DONE])", completion.pieces));
            }
            None
        }
    } else {
        Some(response)
    };
    if let Some(response) = whole {
        // A server that does not stream answers with the whole completion at once.
        let text = response.text().await.map_err(|e| format!("the answer broke off: {}", innermost(&e, endpoint)))?;
        let whole: Value = serde_json::from_str(&text).map_err(|_| format!("the answer is not JSON: {}", one_line(&text, 200)))?;
        let added = completion.apply(&whole).map_err(|e| format!("the server reported an error: {e}"))?;
        send_text(added, &mut ttft_ms);
    }
    Ok(Outcome { completion, ttft_ms, total_ms: started.elapsed().as_secs_f64() * 1000.0, retried })
}

/// Sends `body` until it gets a successful answer: a 429 or 5xx is tried again after a
/// backoff (`Retry-After` where the server gives one), `endpoint.retries` times at most.
async fn send(client: &reqwest::Client, endpoint: &Endpoint, body: &Value, retried: &mut Vec<String>) -> Result<reqwest::Response, String> {
    let (mut attempt, mut stale_retried) = (0, false);
    loop {
        let mut request = client.post(endpoint.url()).header(CONTENT_TYPE, "application/json").header(ACCEPT, "text/event-stream");
        if let Some(key) = &endpoint.api_key {
            request = request.header(AUTHORIZATION, format!("Bearer {key}"));
        }
        let response = match request.body(body.to_string()).send().await {
            Ok(response) => response,
            // A kept-alive connection the server had closed meanwhile (uvicorn does after a
            // cut stream): the request never reached it, so once more on a new connection.
            Err(e) if !stale_retried && !e.is_connect() && !e.is_timeout() => {
                stale_retried = true;
                retried.push(format!("{}, sent again on a new connection", innermost(&e, endpoint)));
                continue;
            }
            Err(e) => return Err(transport(&e, endpoint)),
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let wait = retry_after(response.headers());
        let text = response.text().await.unwrap_or_default();
        let message = wire::error_message(&text);
        if (status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()) && attempt < endpoint.retries {
            attempt += 1;
            let backoff = wait.unwrap_or(Duration::from_millis(500 << attempt.min(4))).min(MAX_BACKOFF);
            retried.push(format!("{status} ({}), retried after {} ms", one_line(&message, 120), backoff.as_millis()));
            tokio::time::sleep(backoff).await;
            continue;
        }
        return Err(refusal(status, &message, endpoint, attempt));
    }
}

/// The line for a request that never got an answer.
fn transport(error: &reqwest::Error, endpoint: &Endpoint) -> String {
    if error.is_connect() {
        format!("cannot connect ({}): is the server running at this address?", innermost(error, endpoint))
    } else {
        innermost(error, endpoint)
    }
}

/// The most specific message of `error`'s chain ("Connection refused", not "error sending
/// request"), and a timeout said as one.
fn innermost(error: &reqwest::Error, endpoint: &Endpoint) -> String {
    if error.is_timeout() {
        return format!("no answer within {} s (the profile's request_timeout_s)", endpoint.request_timeout_s);
    }
    let mut last = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        last = e.to_string();
        source = e.source();
    }
    last
}

/// The line for an answer with a failing status.
fn refusal(status: StatusCode, message: &str, endpoint: &Endpoint, retries: u32) -> String {
    let said = if message.is_empty() { String::new() } else { format!(": {message}") };
    match status.as_u16() {
        401 | 403 => match &endpoint.api_key_env {
            Some(var) => format!("refused the API key from ${var} ({status}){said}"),
            None => format!("wants an API key ({status}){said}; set api_key_env in the profile to the variable that holds it"),
        },
        404 => format!("{status} for {}{said} (check base_url, which ends in /v1 on most servers, and the profile's model)", endpoint.url()),
        429 => format!("too many requests ({status}, {} tries){said}", retries + 1),
        500..=599 => format!("server error ({status}, {} tries){said}", retries + 1),
        _ if over_context(message) => format!("the prompt is over the server's context length ({status}){said}"),
        _ => format!("refused the request ({status}){said}"),
    }
}

/// Whether an error message says the prompt does not fit the model's context.
fn over_context(message: &str) -> bool {
    let lower = message.to_lowercase();
    lower.contains("context length") || lower.contains("context window") || lower.contains("exceed") && lower.contains("token")
}

/// The wait a `Retry-After` header asks for, in seconds.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(key_env: Option<&str>) -> Endpoint {
        Endpoint {
            base_url: "http://127.0.0.1:8080/v1".into(),
            api_key: None,
            api_key_env: key_env.map(str::to_string),
            retries: 2,
            request_timeout_s: 300,
        }
    }

    #[test]
    fn each_refusal_says_what_to_do() {
        let line = refusal(StatusCode::UNAUTHORIZED, "Invalid API Key", &endpoint(None), 0);
        assert_eq!(line, "wants an API key (401 Unauthorized): Invalid API Key; set api_key_env in the profile to the variable that holds it");
        let line = refusal(StatusCode::UNAUTHORIZED, "Invalid API Key", &endpoint(Some("B4_KEY")), 0);
        assert_eq!(line, "refused the API key from $B4_KEY (401 Unauthorized): Invalid API Key");
        let line = refusal(StatusCode::NOT_FOUND, "Not Found", &endpoint(None), 0);
        assert!(line.starts_with("404 Not Found for http://127.0.0.1:8080/v1/chat/completions: Not Found (check base_url"), "{line}");
        let line = refusal(StatusCode::SERVICE_UNAVAILABLE, "busy", &endpoint(None), 2);
        assert_eq!(line, "server error (503 Service Unavailable, 3 tries): busy");
        let line = refusal(StatusCode::BAD_REQUEST, "Requested tokens (5000) exceed context window of 4096", &endpoint(None), 0);
        assert!(line.starts_with("the prompt is over the server's context length (400 Bad Request)"), "{line}");
        let line = refusal(StatusCode::UNPROCESSABLE_ENTITY, "bad field", &endpoint(None), 0);
        assert_eq!(line, "refused the request (422 Unprocessable Entity): bad field");
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }
}
