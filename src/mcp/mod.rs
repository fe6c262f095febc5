//! `candor mcp`: candor's commands as Model Context Protocol tools over stdio (the official
//! Rust SDK, `rmcp`; tokio lives only here). A tool call becomes the command line it
//! stands for ([`tools`]) and runs through the CLI's own entry point
//! ([`crate::cli::run_captured`]), so a tool and its command cannot disagree: the JSON
//! lines it prints are the tool's `structuredContent`. One call runs at a time; a
//! cancelled call stops its runner's process group and unwinds like a failed run before
//! the next call starts. stdout carries only the protocol; logs go to stderr.

pub mod tools;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::cli::error::CliError;
use crate::cli::output::{Progress, ProgressSink};
use crate::cli::settings::{Context, McpSettings};
use crate::exit_codes;
use crate::runner::process::{allow_children, cancel_children};

/// Serves until the client closes stdin.
pub fn serve(settings: McpSettings, context: &Context<'_>) -> Result<u8, CliError> {
    let server = Server {
        allow_run: settings.allow_run,
        cwd: context.cwd.clone(),
        one_at_a_time: Arc::new(tokio::sync::Mutex::new(())),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    log(&format!(
        "candor mcp: serving {} tools over stdio in {}{}",
        tools::offered(settings.allow_run).count(),
        server.cwd.display(),
        if settings.allow_run {
            ""
        } else {
            " (read-only; --allow-run offers test, rerun, compare, repro, order, gate)"
        }
    ));
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        let quit = running.waiting().await;
        // The client is gone: a command still running has no one to answer, so its
        // runner is stopped rather than left to finish.
        cancel_children();
        quit.map_err(|error| std::io::Error::other(error.to_string()))?;
        Ok::<(), std::io::Error>(())
    })?;
    Ok(exit_codes::OK)
}

/// Logs go to stderr: stdout is the protocol's.
fn log(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

#[derive(Clone)]
struct Server {
    allow_run: bool,
    cwd: PathBuf,
    /// Held for the whole of each call, its cleanup after a cancellation included.
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("candor", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "candor judges red tests. Call `triage` before acting on any red test and act \
                 only on its verdict; `explain` gives the rules. Rerun only a known-flake, \
                 only through `rerun`.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            tools::offered(self.allow_run)
                .map(tools::ToolSpec::tool)
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(spec) = tools::TOOLS.iter().find(|spec| spec.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool `{}`", request.name),
                None,
            ));
        };
        if spec.acting && !self.allow_run {
            return Err(ErrorData::invalid_params(
                format!(
                    "`{}` runs tests or writes files: start the server with `candor mcp --allow-run` to offer it",
                    spec.name
                ),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = spec.call(arguments).map_err(|reason| {
            ErrorData::invalid_params(format!("{}: {reason}", spec.name), None)
        })?;
        let guard = Arc::clone(&self.one_at_a_time).lock_owned().await;
        allow_children();
        let progress = spec.long.then(|| progress_sink(&context)).flatten();
        let cwd = self.cwd.clone();
        let filter = call.filter.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            let outcome = run(&call, cwd, progress);
            drop(guard);
            outcome
        });
        let joined = tokio::select! {
            joined = &mut job => joined,
            () = context.ct.cancelled() => {
                log(&format!("candor mcp: `{}` cancelled: stopping its runner", spec.name));
                cancel_children();
                // The answer is not sent (the client cancelled); waiting keeps the next
                // call from starting before this one's worktree and processes are gone.
                let _ = job.await;
                return Err(ErrorData::internal_error("cancelled", None));
            }
        };
        let outcome = joined.map_err(|error| {
            ErrorData::internal_error(format!("the tool failed: {error}"), None)
        })?;
        let captured = outcome.map_err(|error| {
            ErrorData::invalid_params(
                format!("{}: {}", spec.name, error.render().to_string().trim_end()),
                None,
            )
        })?;
        Ok(result(spec.name, captured, filter.as_ref()).into())
    }
}

/// Progress notifications for the call's progress token, when the client sent one.
fn progress_sink(context: &RequestContext<RoleServer>) -> Option<ProgressSink> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    // One forwarding task keeps the notifications in the order the command made them.
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(param) = receiver.recv().await {
            let _ = peer.notify_progress(param).await;
        }
    });
    let last = std::sync::Mutex::new(0.0_f64);
    Some(Arc::new(move |progress: Progress| {
        let mut last = last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *last = next_progress(*last, progress.done);
        let mut param = ProgressNotificationParam::new(token.clone(), *last);
        param.total = progress.total.map(|total| total as f64);
        param.message = (!progress.message.is_empty()).then_some(progress.message);
        // The receiver goes only with the call; a late step has no one to tell.
        let _ = sender.send(param);
    }))
}

/// The progress value after `last` for a step that counted `done` (or nothing): MCP wants
/// it to grow with every notification, so a line between counted steps (a message, a
/// phase) moves it half-way to the next whole step.
fn next_progress(last: f64, done: Option<u64>) -> f64 {
    match done {
        Some(done) if done as f64 > last => done as f64,
        _ => last + (last.floor() + 1.0 - last) / 2.0,
    }
}

/// Runs the call's command line in the server's directory, as the CLI would.
fn run(
    call: &tools::Call,
    cwd: PathBuf,
    progress: Option<ProgressSink>,
) -> Result<crate::cli::Captured, clap::Error> {
    // `lint_summary`'s text goes through a file of its own, outside the repository.
    let text_file = match &call.text_file {
        Some(text) => match write_text(text) {
            Ok(file) => Some(file),
            Err(error) => {
                return Ok(crate::cli::Captured {
                    code: exit_codes::USAGE_OR_INPUT,
                    events: Vec::new(),
                    stderr: format!(
                        "error: could not write the text to a temporary file: {error}\n"
                    ),
                });
            }
        },
        None => None,
    };
    let args: Vec<String> = call
        .args
        .iter()
        .map(|arg| match (&text_file, arg.as_str()) {
            (Some(file), tools::TEXT_FILE) => file.path().display().to_string(),
            _ => arg.clone(),
        })
        .collect();
    let env = |name: &str| std::env::var(name).ok();
    let context = Context {
        cwd,
        env: &env,
        stdout_is_terminal: false,
        stderr_is_terminal: false,
        now: jiff::Timestamp::now(),
    };
    crate::cli::run_captured(&args, &context, progress)
}

fn write_text(text: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("candor-mcp-summary-")
        .suffix(".md")
        .tempfile()?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    Ok(file)
}

/// The tool result: the events as `structuredContent`, a short text, and `isError` when
/// the command could not do its work (exit 2) or refused (a rerun of a regression).
fn result(
    tool: &str,
    captured: crate::cli::Captured,
    filter: Option<&tools::Filter>,
) -> CallToolResult {
    let mut events: Vec<Value> = captured
        .events
        .into_iter()
        .filter(|event| filter.is_none_or(|filter| filter.keeps(event)))
        .collect();
    if tool == "explain" {
        let verdicts: Vec<Value> = tools::VERDICTS
            .iter()
            .map(|(verdict, means)| json!({ "verdict": verdict, "means": means }))
            .collect();
        events.push(json!({ "type": "verdicts", "v": 1, "verdicts": verdicts }));
    }
    let refused = events.iter().find(|event| event["status"] == "refused");
    let failed = captured.code == exit_codes::USAGE_OR_INPUT;
    let is_error = failed || refused.is_some();
    let mut text = summary(tool, &events, captured.code);
    if let Some(refused) = refused {
        let reason = events
            .iter()
            .find(|event| event["type"] == "verdict")
            .and_then(|verdict| verdict["reason"].as_str())
            .unwrap_or("");
        text = format!(
            "refused: `{}` is {}, not a known flake with budget left; {reason}",
            refused["test"].as_str().unwrap_or(""),
            refused["label"]
                .as_str()
                .or(refused["verdict"].as_str())
                .unwrap_or("not rerunnable")
        );
    }
    if tool == "explain" && !is_error {
        // The agent reads the rules themselves, not a count of events.
        let rules = events
            .iter()
            .find_map(|event| {
                event["text"]
                    .as_str()
                    .filter(|_| event["type"] == "agents-block")
            })
            .unwrap_or("");
        let table: Vec<String> = tools::VERDICTS
            .iter()
            .map(|(verdict, means)| format!("- `{verdict}`: {means}"))
            .collect();
        text = format!("{rules}\n## Verdicts\n\n{}\n", table.join("\n"));
    }
    let stderr = captured.stderr.trim_end();
    if failed && !stderr.is_empty() {
        text = format!("{text}\n{stderr}");
    }
    let structured = json!({
        "tool": tool,
        "exit_code": captured.code,
        "events": events,
        "stderr": captured.stderr,
    });
    let mut result = if is_error {
        CallToolResult::structured_error(structured)
    } else {
        CallToolResult::structured(structured)
    };
    result.content = vec![ContentBlock::text(text)];
    result
}

/// One line per event type with its count, and the last event (usually the summary or
/// the answer) whole.
fn summary(tool: &str, events: &[Value], code: u8) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for event in events {
        let kind = event["type"].as_str().unwrap_or("?").to_owned();
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    let listed: Vec<String> = counts
        .iter()
        .map(|(kind, n)| format!("{n} {kind}"))
        .collect();
    let mut text = format!("{tool}: exit {code}; {}", listed.join(", "));
    if let Some(last) = events.last() {
        text.push('\n');
        text.push_str(&last.to_string());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::next_progress;

    #[test]
    fn progress_grows_with_every_notification_and_counted_steps_stay_whole() {
        let mut last = 0.0;
        let mut seen = Vec::new();
        for done in [
            None,
            Some(0),
            Some(1),
            Some(1),
            None,
            Some(2),
            Some(4),
            Some(4),
        ] {
            last = next_progress(last, done);
            seen.push(last);
        }
        assert_eq!(seen, [0.5, 0.75, 1.0, 1.5, 1.75, 2.0, 4.0, 4.5]);
    }
}
