//! The rmcp glue: a `ServerHandler` whose `tools/list` is [`tools::specs`]
//! in order and whose `tools/call` runs [`tools::call`] on a blocking thread
//! (plans and the store do file and SQLite I/O). Every tool result's
//! `structuredContent` is the product's one envelope (`studyloop::envelope`,
//! issue 30 item 1), as the CLI's `--json` and the web's `/api/*` answer: a success
//! is `{"schema_version", "command", "result"}` with the same JSON as text (for
//! clients without structured content); a refusal is `isError: true`, the
//! failure's message as text (what a model reads) and `{"error": {code, message,
//! details}}`. Both validate against the tool's listed `outputSchema`.

use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServiceExt as _};
use studyloop::context::Ctx;
use studyloop::envelope::{self, Failure};

use crate::refusal::{invalid, storage};
use crate::schema::{self, Checker};
use crate::tools;

/// The server: the process context every call resolves paths from, and the
/// tool list with its compiled schemas (built once: what `tools/list` shows is
/// what `tools/call` checks).
#[derive(Clone)]
pub struct StudyLoopMcp {
    ctx: Arc<Ctx>,
    tools: Arc<Vec<Tool>>,
    /// Each tool's envelope `command`, by tool name.
    commands: Arc<Vec<(&'static str, &'static str)>>,
    checker: Arc<Checker>,
}

fn tool_list(specs: &[tools::ToolSpec]) -> Vec<Tool> {
    specs
        .iter()
        .map(|t| {
            let schema = match &t.schema {
                serde_json::Value::Object(o) => o.clone(),
                _ => serde_json::Map::new(),
            };
            let output = match &t.output {
                serde_json::Value::Object(o) => o.clone(),
                _ => serde_json::Map::new(),
            };
            let mut tool = Tool::new(t.name, t.description, Arc::new(schema))
                .with_raw_output_schema(Arc::new(output));
            tool.title = Some(t.title.to_owned());
            tool.annotations = Some(
                ToolAnnotations::with_title(t.title)
                    .read_only(t.hints.read_only)
                    .destructive(t.hints.destructive)
                    .idempotent(t.hints.idempotent)
                    // Every tool works on local files and the local database only.
                    .open_world(false),
            );
            tool
        })
        .collect()
}

impl StudyLoopMcp {
    /// The server for `ctx`: the tool list and its schemas, compiled once.
    ///
    /// # Errors
    /// A tool schema the validator cannot compile (a bug in `tools.rs`/`outputs.rs`).
    pub fn new(ctx: Ctx) -> Result<Self, schema::CompileError> {
        let specs = tools::specs();
        Ok(Self {
            ctx: Arc::new(ctx),
            checker: Arc::new(Checker::new(&specs)?),
            tools: Arc::new(tool_list(&specs)),
            commands: Arc::new(specs.iter().map(|t| (t.name, t.command)).collect()),
        })
    }

    /// The tool result for `outcome`: the envelope as `structuredContent`, checked
    /// against the tool's listed `outputSchema` first. Our own answer breaking it is
    /// a bug here; a strict client would reject it, so say so instead of sending it.
    fn answer(&self, tool: &str, outcome: Result<serde_json::Value, Failure>) -> CallToolResult {
        let command = self
            .commands
            .iter()
            .find_map(|(t, c)| (*t == tool).then_some(*c))
            .unwrap_or("unknown");
        let shaped = outcome.map(|v| envelope::success(command, v));
        let body = match &shaped {
            Ok(v) => v.clone(),
            Err(f) => f.to_json(),
        };
        let shaped = match self.checker.check_output(tool, &body) {
            Ok(()) => shaped,
            Err(violations) => Err(storage(format!(
                "the result does not match the tool's outputSchema ({}); this is a bug in studyloop-mcp: report it with the call",
                schema::mismatches(&violations)
            ))),
        };
        match shaped {
            Ok(v) => {
                // A `Value` always serialises (string keys only): `{:#}` is its pretty form.
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!("{v:#}"))]);
                r.structured_content = Some(v);
                r
            }
            Err(f) => refusal(&f),
        }
    }
}

/// A tool error: the failure's message as text, its envelope as `structuredContent`.
fn refusal(f: &Failure) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(f.message.clone())]);
    r.structured_content = Some(f.to_json());
    r
}

impl ServerHandler for StudyLoopMcp {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("studyloop", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "StudyLoop study mentor tools: study plans (list/get/create/update/status/milestone/evaluate/delete), learning records, topics, session end and search.".into(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ctx = self.ctx.clone();
        let name = request.name.to_string();
        let tool = name.clone();
        // An unknown tool is the caller's protocol error (-32602, as the MCP
        // spec's tools chapter says), not a tool that ran and failed.
        if !tools::is_known(&name) {
            return Err(ErrorData::invalid_params(tools::unknown_tool(&name), None));
        }
        let args = request.arguments.unwrap_or_default();
        // Arguments the advertised schema forbids are refused before the tool
        // runs, in the same words for every tool. Up to 2025-06-18 the tools
        // chapter lists invalid arguments among protocol errors (-32602); from
        // 2025-11-25 on (SEP-1303) they are a tool execution error, so the
        // model sees the message and can correct its call.
        let value = serde_json::Value::Object(args);
        if let Err(violations) = self.checker.check_input(&name, &value) {
            let (message, data) = schema::invalid_arguments(&name, &violations);
            let sep_1303 = context
                .protocol_version()
                .is_some_and(|v| v >= ProtocolVersion::V_2025_11_25);
            if sep_1303 {
                // The plan layer's `invalid:` refusal, with the violations as details.
                let mut f = invalid(&message);
                f.details = Some(data);
                return Ok(refusal(&f).into());
            }
            return Err(ErrorData::invalid_params(message, Some(data)));
        }
        let serde_json::Value::Object(args) = value else {
            return Err(ErrorData::internal_error(
                "arguments stopped being an object",
                None,
            ));
        };
        let outcome = tokio::task::spawn_blocking(move || tools::call(&ctx, &name, &args))
            .await
            .unwrap_or_else(|e| Err(storage(format!("the tool task failed: {e}"))));
        Ok(self.answer(&tool, outcome).into())
    }
}

/// Serve on stdin/stdout until the client closes them. rmcp serves on one
/// end of an in-process pipe; [`crate::edge`] sits between it and the real
/// stdin/stdout (the answers rmcp's stdio transport gets wrong, batches).
///
/// # Errors
/// The transport's failure, or reading/writing stdin/stdout.
pub async fn serve_stdio(ctx: Ctx) -> Result<(), Box<dyn std::error::Error>> {
    let server = StudyLoopMcp::new(ctx)?;
    // The pipe holds what a line burst needs; a full pipe only makes the edge wait.
    let (edge_side, rmcp_side) = tokio::io::duplex(256 * 1024);
    let serving = async move {
        let running = server.serve(tokio::io::split(rmcp_side)).await?;
        running.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    };
    let edge = crate::edge::run(tokio::io::stdin(), tokio::io::stdout(), edge_side);
    let (served, edged) = tokio::join!(serving, edge);
    served?;
    edged?;
    Ok(())
}
