//! The rmcp glue: a `ServerHandler` whose `tools/list` is [`tools::specs`]
//! in order and whose `tools/call` runs [`tools::call`] on a blocking thread
//! (plans and the store do file and SQLite I/O). A refusal is a tool result
//! with `isError: true` and the prefixed text; success carries the JSON as
//! text and as `structuredContent`.

use std::sync::Arc;

use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServiceExt as _};
use studyloop::context::Ctx;

use crate::tools;

/// The server: the process context every call resolves paths from.
#[derive(Clone)]
pub struct StudyLoopMcp {
    ctx: Arc<Ctx>,
}

fn tool_list() -> Vec<Tool> {
    tools::specs()
        .into_iter()
        .map(|t| {
            let schema = match t.schema {
                serde_json::Value::Object(o) => o,
                _ => serde_json::Map::new(),
            };
            Tool::new(t.name, t.description, Arc::new(schema))
        })
        .collect()
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
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ctx = self.ctx.clone();
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let outcome = tokio::task::spawn_blocking(move || tools::call(&ctx, &name, &args))
            .await
            .unwrap_or_else(|e| Err(format!("plan_error: the tool task failed: {e}")));
        let result = match outcome {
            Ok(v) => {
                // A `Value` always serialises (string keys only): `{:#}` is its pretty form.
                let text = format!("{v:#}");
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(v);
                r
            }
            Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
        };
        Ok(result.into())
    }
}

/// Serve on stdin/stdout until the client closes them.
///
/// # Errors
/// The transport's failure.
pub async fn serve_stdio(ctx: Ctx) -> Result<(), Box<dyn std::error::Error>> {
    let server = StudyLoopMcp { ctx: Arc::new(ctx) };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
